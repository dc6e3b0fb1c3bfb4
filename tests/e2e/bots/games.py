"""What the bots e2e tests share: opening tables, waiting for their end, and the two
checks of every game the bots played — `kozyr verify` passes, and every computer turn
got exactly one move (counted from the event log)."""

from __future__ import annotations

import asyncio
from collections import Counter, defaultdict
from collections.abc import Sequence

from google.protobuf.message import Message

from kozyr.api.common.v1 import games_pb2, seats_pb2
from kozyr.api.table.v1 import events_pb2
from kozyr.api.table.v1 import table_service_pb2 as pb
from kozyr.client import TableClient
from kozyr.runtime.auth import Role
from tests.e2e.bots.conftest import BotsStack
from tests.e2e.moderation import kozyr_cli
from tests.e2e.public import published_public
from tests.e2e.published import stored_events, wait_until_relayed
from tests.support.tables import token

GAME_SECONDS = 240.0
LEVELS = {
    "easy": seats_pb2.COMPUTER_LEVEL_EASY,
    "normal": seats_pb2.COMPUTER_LEVEL_NORMAL,
    "hard": seats_pb2.COMPUTER_LEVEL_HARD,
}


def computer(level: str) -> pb.SeatAssignment:
    """A computer seat playing at `level` (easy, normal, hard)."""
    return pb.SeatAssignment(computer=True, level=LEVELS[level])


async def open_table(
    stack: BotsStack,
    game: games_pb2.Game.ValueType = games_pb2.GAME_THREE_FIVE_EIGHT,
    seats: Sequence[str | pb.SeatAssignment | None] = ("ana", None, None),
    table: pb.TableOptions | None = None,
    options: Message | None = None,
) -> str:
    """A new table; `options` is the game's options message, `table` the table's own."""
    async with TableClient(stack.table.target, token("matchmaker", Role.SERVICE)) as service:
        created = await service.create_table(game, seats, table=table, options=options)
    return created.table_id


async def until_finished(stack: BotsStack, table_id: str, seconds: float = GAME_SECONDS) -> None:
    """Watch the table (as a spectator) until its game is over."""
    async with TableClient(stack.table.target, token("spectator")) as spectator:
        async with asyncio.timeout(seconds):
            async for view in spectator.watch(table_id):
                if view.finished:
                    return


async def until_version(stack: BotsStack, table_id: str, version: int) -> None:
    async with TableClient(stack.table.target, token("spectator")) as spectator:
        async with asyncio.timeout(GAME_SECONDS):
            async for view in spectator.watch(table_id):
                if view.version >= version:
                    return


async def assert_one_move_per_turn(stack: BotsStack, table_id: str, killed: int = 0) -> int:
    """Each bot request id made one append (its events are one block of versions), one
    seat per turn; the applied moves in the logs are those request ids (a process killed
    between a move and its log line leaves one out). Returns the count of bot moves."""
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
    twice = [r for r in versions if turns[r.rsplit(":", 1)[0]] > 1]
    assert not twice, f"two seats moved for one turn: {twice[:6]}"
    applied = [m for m in stack.moves() if m["table_id"] == table_id and not m["duplicate"]]
    applied_turns = Counter(m["turn"] for m in applied)
    assert max(applied_turns.values()) == 1, "a turn got two applied bot moves"
    assert len(versions) - killed <= len(applied) <= len(versions)
    return len(versions)


async def assert_verified(stack: BotsStack, table_id: str) -> None:
    verified = await kozyr_cli(stack.table.database_url, "verify", table_id, "--json")
    assert verified.exit_code == 0, verified.stdout + verified.stderr
    report = verified.json()
    assert report["ok"] is True, report["problem"]
    assert report["over"] is True


async def bot_turns(stack: BotsStack, table_id: str) -> dict[int, int]:
    """Turn number → seat of every bot move in the table's log."""
    events = await stored_events(stack.table.database_url, table_id)
    turns: dict[int, int] = {}
    for event in events:
        request = str(event.metadata.get("request_id", ""))
        if request.startswith("bots:"):
            _, _, turn, seat = request.rsplit(":", 3)
            turns[int(turn)] = int(seat)
    return turns


async def assert_every_computer_turn_moved_once(stack: BotsStack, table_id: str) -> None:
    """The turns the public events announce for a computer seat and end `played` are
    exactly the turns a bot's move made (one request id each, `bot_turns`): none
    skipped, none played by anything else (no clock runs here)."""
    await wait_until_relayed(stack.table.database_url)
    public = await published_public(stack.table.nats_url, stack.table.subject_root, table_id)
    computer: set[int] = set()
    played: set[int] = set()
    for message in public:
        if message.case == "turn_started":
            started = message.event.turn_started
            if any(s.control == seats_pb2.SEAT_CONTROL_COMPUTER for s in started.seats):
                computer.add(started.number)
        elif message.case == "turn_ended":
            ended = message.event.turn_ended
            if ended.how == events_pb2.TURN_END_PLAYED:
                played.add(ended.number)
    assert computer & played == set(await bot_turns(stack, table_id))
