"""Ten all-computer tables at once, both games, levels mixed per seat (easy, normal,
hard), one bots process thinking 0 s beside a table service process (real PostgreSQL
and NATS): every game is played to its end, every log passes `kozyr verify`, and every
computer turn got exactly one move.

What costs is moves: a computers' Khözör match is 200–430 moves, a 3-5-8 game (all its
deals) ~950 — the run's longest path; a `hard` seat's search adds ~0.25 s to each of
its moves. So one 3-5-8 game (easy and normal seats) and nine Khözör matches — every
mix of levels below, and a `hard` seat in one of them — ~3,500 moves, ten tables in
play at once. It was twenty tables (~7,400 moves, 2-4 minutes): ten prove the same —
many tables at once, each seat at its own level, nothing lost or doubled — at half
the cost. Single tables of each level and game are in test_e2e_bots.py and
test_e2e_bots_hard.py.
"""

from __future__ import annotations

import asyncio
import itertools

import pytest

from kozyr.api.common.v1 import games_pb2
from kozyr.client import TableClient
from tests.e2e.bots.conftest import BotsStack
from tests.e2e.bots.games import (
    LEVELS,
    assert_every_computer_turn_moved_once,
    assert_one_move_per_turn,
    assert_verified,
    computer,
    open_table,
    until_finished,
)
from tests.support.tables import token

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(600)]

KHOZOR, THREE_FIVE_EIGHT = games_pb2.GAME_KHOZOR_TEAMS, games_pb2.GAME_THREE_FIVE_EIGHT
KHOZOR_LEVELS = [
    ["normal"] * 8,
    ["easy"] * 8,
    ["easy", "normal"] * 4,  # one team easy, the other normal
    ["normal", "normal", "easy", "easy"] * 2,  # mixed within each team
]
THREE_FIVE_EIGHT_TABLES = [["easy", "normal", "normal"]]
KHOZOR_TABLES = [
    [*levels[:7], "hard"] if number == 0 else levels
    for number, levels in enumerate(itertools.islice(itertools.cycle(KHOZOR_LEVELS), 9))
]
FINISH_SECONDS = 360.0
CHECKS_AT_ONCE = 2
"""Tables checked at once (each runs `kozyr verify`, a CPU-bound process): one per core.
Five at once made each process's guard (CLI_TIMEOUT) measure its siblings' work too,
and it failed under a load of ~20."""


async def _open(stack: BotsStack, game: games_pb2.Game.ValueType, levels: list[str]) -> str:
    """The table, each seat at its level — as every view names it (the bots play that)."""
    table_id = await open_table(stack, game, [computer(level) for level in levels])
    async with TableClient(stack.table.target, token("spectator")) as spectator:
        view = await spectator.get_table(table_id)
    assert [s.level for s in view.seats] == [LEVELS[level] for level in levels]
    return table_id


async def _check(stack: BotsStack, table_id: str, slots: asyncio.Semaphore) -> None:
    async with slots:
        await assert_verified(stack, table_id)
        await assert_one_move_per_turn(stack, table_id)
        await assert_every_computer_turn_moved_once(stack, table_id)


async def test_ten_all_computer_tables_play_to_the_end(bots_stack: BotsStack) -> None:
    await bots_stack.start_bots()
    table_ids = [await _open(bots_stack, THREE_FIVE_EIGHT, s) for s in THREE_FIVE_EIGHT_TABLES]
    table_ids += await asyncio.gather(*(_open(bots_stack, KHOZOR, s) for s in KHOZOR_TABLES))
    assert len(table_ids) == 10
    await asyncio.gather(*(until_finished(bots_stack, t, FINISH_SECONDS) for t in table_ids))
    slots = asyncio.Semaphore(CHECKS_AT_ONCE)
    await asyncio.gather(*(_check(bots_stack, table_id, slots) for table_id in table_ids))
    assert all(bots.running for bots in bots_stack.bots)
