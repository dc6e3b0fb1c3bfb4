"""Computer seats played by the bots service, as processes (real PostgreSQL and NATS):
a 3-5-8 table with one scripted person and two computer seats reaches its end and
`kozyr verify` passes; every computer turn got exactly one move, also with two bots
replicas and every `TurnStarted` published a second time while the game runs."""

from __future__ import annotations

import asyncio
import contextlib
import random
from collections import Counter, defaultdict
from collections.abc import AsyncIterator, Sequence

import nats
import pytest
from nats.aio.msg import Msg

from kozyr.api.common.v1 import games_pb2
from kozyr.client import TableClient
from kozyr.runtime.auth import Role
from tests.e2e.bots.conftest import BotsStack
from tests.e2e.moderation import kozyr_cli
from tests.e2e.players import ScriptedClient, chooser, play_table
from tests.e2e.published import stored_events
from tests.support.tables import Seat, token

pytestmark = pytest.mark.e2e

GAME_SECONDS = 240.0


async def _open(
    stack: BotsStack,
    game: games_pb2.Game.ValueType = games_pb2.GAME_THREE_FIVE_EIGHT,
    seats: Sequence[str | None] = ("ana", None, None),
) -> str:
    async with TableClient(stack.table.target, token("matchmaker", Role.SERVICE)) as service:
        created = await service.create_table(game, seats)
    return created.table_id


async def _until_finished(stack: BotsStack, table_id: str) -> None:
    """Watch the table (as a spectator) until its game is over."""
    async with TableClient(stack.table.target, token("spectator")) as spectator:
        async with asyncio.timeout(GAME_SECONDS):
            async for view in spectator.watch(table_id):
                if view.finished:
                    return


async def _play_person(stack: BotsStack, table_id: str) -> None:
    """Ana (seat 0) plays random legal moves from her view until the game is over."""
    rng = random.Random(11)
    ana = ScriptedClient(
        lambda: stack.table.target, table_id, "ana", 0, chooser(Seat(0, "ana", rng), rng)
    )
    await play_table([ana], GAME_SECONDS)


async def _assert_one_move_per_turn(stack: BotsStack, table_id: str, killed: int = 0) -> int:
    """Each bot request id made one append (its events are one block of versions), one
    seat per turn; the applied moves in the logs are those request ids (a process killed
    between a move and its log line leaves one out)."""
    events = await stored_events(stack.table.database_url, table_id)
    versions: defaultdict[str, list[int]] = defaultdict(list)
    for event in events:
        request = str(event.metadata.get("request_id", ""))
        if request.startswith("bots:"):
            versions[request].append(event.position)
    assert versions, "the computer seats never moved"
    for request, positions in versions.items():
        assert positions == list(range(positions[0], positions[0] + len(positions))), request
    turns = Counter(request.rsplit(":", 1)[0] for request in versions)
    assert max(turns.values()) == 1, "two seats moved for one turn"
    applied = [m for m in stack.moves() if m["table_id"] == table_id and not m["duplicate"]]
    applied_turns = Counter(m["turn"] for m in applied)
    assert max(applied_turns.values()) == 1, "a turn got two applied bot moves"
    assert len(versions) - killed <= len(applied) <= len(versions)
    return len(versions)


async def _assert_verified(stack: BotsStack, table_id: str) -> None:
    verified = await kozyr_cli(stack.table.database_url, "verify", table_id, "--json")
    assert verified.exit_code == 0, verified.stdout + verified.stderr
    report = verified.json()
    assert report["ok"] is True, report["problem"]
    assert report["over"] is True


async def test_two_computer_seats_play_a_whole_3_5_8_game(bots_stack: BotsStack) -> None:
    await bots_stack.start_bots()
    table_id = await _open(bots_stack)
    await _play_person(bots_stack, table_id)
    await _assert_verified(bots_stack, table_id)
    assert await _assert_one_move_per_turn(bots_stack, table_id) > 100


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
    table_id = await _open(bots_stack)
    async with _republishing(bots_stack, table_id) as republished:
        await _play_person(bots_stack, table_id)
    assert republished[0] > 100
    await _assert_verified(bots_stack, table_id)
    await _assert_one_move_per_turn(bots_stack, table_id)
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
    table_id = await _open(bots_stack, game, [None] * seats)
    await _until_finished(bots_stack, table_id)
    await _assert_verified(bots_stack, table_id)
    await _assert_one_move_per_turn(bots_stack, table_id)


async def _until_version(stack: BotsStack, table_id: str, version: int) -> None:
    async with TableClient(stack.table.target, token("spectator")) as spectator:
        async with asyncio.timeout(GAME_SECONDS):
            async for view in spectator.watch(table_id):
                if view.version >= version:
                    return


async def test_the_bots_sigkilled_mid_game_and_restarted_resume_without_a_double_move(
    bots_stack: BotsStack,
) -> None:
    """The killed process held its event unacknowledged: JetStream redelivers it to the
    restarted one after ack_wait, and the game goes on from the turn it stopped at."""
    bots = await bots_stack.start_bots(bots_level="easy")
    table_id = await _open(bots_stack, games_pb2.GAME_THREE_FIVE_EIGHT, [None, None, None])
    await _until_version(bots_stack, table_id, 300)
    bots.kill()
    await bots.start()
    await _until_finished(bots_stack, table_id)
    await _assert_verified(bots_stack, table_id)
    await _assert_one_move_per_turn(bots_stack, table_id, killed=1)
