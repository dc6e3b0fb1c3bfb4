"""The hard level as the bots service plays it (processes, real PostgreSQL and NATS):
each of a hard seat's moves reads the seat's own history (GetHistory with `seat`, from
the version where the current deal began) before searching. An all-hard Khözör match
and a 3-5-8 game with one hard seat (against easy ones, to keep it short) reach their
end, verify, and every turn got exactly one move."""

from __future__ import annotations

import pytest

from kozyr.api.common.v1 import games_pb2, seats_pb2
from kozyr.api.table.v1 import table_service_pb2 as pb
from kozyr.client.table import TableClient
from kozyr.runtime.auth import Role
from tests.e2e.bots.conftest import BotsStack
from tests.e2e.bots.games import (
    assert_one_move_per_turn,
    assert_verified,
    open_table,
    until_finished,
)
from tests.support.tables import token

pytestmark = pytest.mark.e2e

HARD = pb.SeatAssignment(computer=True, level=seats_pb2.COMPUTER_LEVEL_HARD)
EASY = pb.SeatAssignment(computer=True, level=seats_pb2.COMPUTER_LEVEL_EASY)


async def test_an_all_hard_khozor_match_plays_itself_to_the_end(bots_stack: BotsStack) -> None:
    """The computers also announce their true team signals (RULES.md) as they go."""
    await bots_stack.start_bots(bots_hard_budget_ms=20)
    table_id = await open_table(bots_stack, games_pb2.GAME_KHOZOR_TEAMS, [HARD] * 8)
    await until_finished(bots_stack, table_id)
    await assert_verified(bots_stack, table_id)
    await assert_one_move_per_turn(bots_stack, table_id)
    async with TableClient(bots_stack.table.target, token("moderator", Role.ADMIN)) as admin:
        kinds = [e.type for e in await admin.history(table_id)]
    assert "SignalSet" in kinds


async def test_a_3_5_8_game_with_a_hard_seat_plays_itself_to_the_end(
    bots_stack: BotsStack,
) -> None:
    await bots_stack.start_bots(bots_hard_budget_ms=20)
    table_id = await open_table(bots_stack, games_pb2.GAME_THREE_FIVE_EIGHT, [HARD, EASY, EASY])
    await until_finished(bots_stack, table_id)
    await assert_verified(bots_stack, table_id)
    await assert_one_move_per_turn(bots_stack, table_id)
