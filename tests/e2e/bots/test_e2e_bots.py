"""Computer seats played by the bots service, as processes (real PostgreSQL and NATS):
a 3-5-8 table with one scripted person and two computer seats reaches its end and
`kozyr verify` passes; every computer turn got exactly one move, also with two bots
replicas and every `TurnStarted` published a second time while the game runs."""

from __future__ import annotations

import asyncio
import contextlib
import random
from collections.abc import AsyncIterator

import nats
import pytest
from nats.aio.msg import Msg

from kozyr.api.common.v1 import games_pb2
from tests.e2e.bots.conftest import BotsStack
from tests.e2e.bots.games import (
    GAME_SECONDS,
    assert_one_move_per_turn,
    assert_verified,
    open_table,
    until_finished,
    until_version,
)
from tests.e2e.players import ScriptedClient, chooser, play_table
from tests.support.tables import Seat

pytestmark = pytest.mark.e2e


async def _play_person(stack: BotsStack, table_id: str) -> None:
    """Ana (seat 0) plays random legal moves from her view until the game is over."""
    rng = random.Random(11)
    ana = ScriptedClient(
        lambda: stack.table.target, table_id, "ana", 0, chooser(Seat(0, "ana", rng), rng)
    )
    await play_table([ana], GAME_SECONDS)


async def test_two_computer_seats_play_a_whole_3_5_8_game(bots_stack: BotsStack) -> None:
    await bots_stack.start_bots()
    table_id = await open_table(bots_stack)
    await _play_person(bots_stack, table_id)
    await assert_verified(bots_stack, table_id)
    assert await assert_one_move_per_turn(bots_stack, table_id) > 100


@contextlib.asynccontextmanager
async def _republishing(stack: BotsStack, table_id: str) -> AsyncIterator[list[int]]:
    """Publish every TurnStarted of the table into the stream a second time (as a
    redelivery would hand it to the bots again); yields the count of republished ones."""
    nc = await nats.connect(stack.table.nats_url)
    js = nc.jetstream()
    count = [0]

    async def again(message: Msg) -> None:
        if message.headers and message.headers.get("kozyr-republished"):
            return
        await js.publish(message.subject, message.data, headers={"kozyr-republished": "1"})
        count[0] += 1

    subject = f"{stack.table.subject_root}.public.table.{table_id}.TurnStarted"
    subscription = await nc.subscribe(subject, cb=again)
    try:
        yield count
    finally:
        await subscription.unsubscribe()
        await nc.drain()


async def test_two_replicas_and_republished_turns_make_one_move_per_turn(
    bots_stack: BotsStack,
) -> None:
    await asyncio.gather(bots_stack.start_bots(), bots_stack.start_bots())
    table_id = await open_table(bots_stack)
    async with _republishing(bots_stack, table_id) as republished:
        await _play_person(bots_stack, table_id)
    assert republished[0] > 100
    await assert_verified(bots_stack, table_id)
    await assert_one_move_per_turn(bots_stack, table_id)
    assert all(bots.running for bots in bots_stack.bots)


@pytest.mark.parametrize(
    ("game", "level"),
    [(games_pb2.GAME_KHOZOR_TEAMS, "normal"), (games_pb2.GAME_THREE_FIVE_EIGHT, "easy")],
    ids=["khozor-normal", "358-easy"],
)
async def test_an_all_computer_table_plays_itself_to_the_end(
    bots_stack: BotsStack, game: games_pb2.Game.ValueType, level: str
) -> None:
    await bots_stack.start_bots(bots_level=level)
    seats = 8 if game == games_pb2.GAME_KHOZOR_TEAMS else 3
    table_id = await open_table(bots_stack, game, [None] * seats)
    await until_finished(bots_stack, table_id)
    await assert_verified(bots_stack, table_id)
    await assert_one_move_per_turn(bots_stack, table_id)


async def test_the_bots_sigkilled_mid_game_and_restarted_resume_without_a_double_move(
    bots_stack: BotsStack,
) -> None:
    """The killed process held its event unacknowledged: JetStream redelivers it to the
    restarted one after ack_wait, and the game goes on from the turn it stopped at."""
    bots = await bots_stack.start_bots(bots_level="easy")
    table_id = await open_table(bots_stack, games_pb2.GAME_THREE_FIVE_EIGHT, [None, None, None])
    await until_version(bots_stack, table_id, 300)
    bots.kill()
    await bots.start()
    await until_finished(bots_stack, table_id)
    await assert_verified(bots_stack, table_id)
    await assert_one_move_per_turn(bots_stack, table_id, killed=1)
