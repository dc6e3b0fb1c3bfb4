"""Tables opened through matchmaking with computer seats, and their turn deadlines.

Each seats one person who never acts (no client, no heartbeat) beside two easy
computers that the bots service plays, with 10-second turns (the least a table takes):
the person's every turn runs out and the clock plays her default move (`ExpireTurn`,
request id `expire-turn-<n>`), then the computers play on until her next turn. So at
every instant of a fault each of these tables has a turn deadline pending, and a table
moves on only while the clock (public event → turn timer → fired timer → ExpireTurn),
the bots (public event → SubmitAction) and the table service all work.

Two are opened from the queue (a ticket that fills with computers at once), one as a
private table. After the fault one more ticket must be matched, listed by matchmaking
(its TableOpened consumer), timed (a turn deadline the clock set after the fault) and
played (its first move); a computer must have moved since the fault (the bots resumed).

What the log (the events table, the truth) must show: every turn of these tables ended
once — by one bot move (`bots:<table>:<turn>:<seat>`) or one expiry, never both, no
request twice; the person's turn open at the fault (or, on a computer's turn then, her
next one) expired. A deadline lost with a node never fires: its table stops at that turn for
good, and the bounded wait fails naming it.
"""

from __future__ import annotations

import asyncio
import time
import uuid
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import TypeVar

import asyncpg
import grpc
import nats.errors

from kozyr.api.common.v1 import games_pb2, seats_pb2
from kozyr.api.matchmaking.v1 import matchmaking_service_pb2 as mm_pb
from kozyr.api.table.v1 import table_service_pb2 as table_pb
from kozyr.bus.schedules import MessageScheduler
from kozyr.client import MatchmakingClient, TableClient
from kozyr.infra import libpq_dsn
from kozyr.table.adapters.repository import stream_of
from tests.chaos.invariants import Logged, request_runs
from tests.chaos.stack import Stack
from tests.support.matchmaking import final_state
from tests.support.tables import token

T = TypeVar("T")

TURN_SECONDS = 10
"""The shortest turn a table accepts: the person's deadlines come as often as can be."""
THREE = games_pb2.GAME_THREE_FIVE_EIGHT
OPTIONS = table_pb.ThreeFiveEightOptions(turn_seconds=TURN_SECONDS)
EASY = table_pb.TableOptions(computer_level=seats_pb2.COMPUTER_LEVEL_EASY)
TICKETS = 2
PRIVATE_TABLES = 1
DEADLINE_WAIT_SECONDS = 45.0
"""Only a bound on a hang: a turn or two of the person's, plus the clock's catching up."""
SERVED_WAIT_SECONDS = 30.0
TURN = "turn"
"""The clock's timer kind of turn deadlines (kozyr.clock.turns, a service's own)."""
EXPIRY = "expire-turn-"
BOT_MOVE = "bots:"

_EVENTS = """
SELECT stream, position, event_id::text, type, metadata->>'request_id'
  FROM events WHERE stream = ANY($1::text[]) ORDER BY global_position
"""


@dataclass(frozen=True)
class Turns:
    """How the log ended a table's turns: one entry per run of a request's events."""

    expired: list[int]
    played: list[int]

    @classmethod
    def of(cls, events: list[Logged], table_id: str) -> Turns:
        stream = stream_of(table_id)
        expired, played = [], []
        for (where, request_id), spans in request_runs(events).items():
            if where != stream:
                continue
            if request_id.startswith(EXPIRY):
                expired += [int(request_id.removeprefix(EXPIRY))] * len(spans)
            elif request_id.startswith(BOT_MOVE):
                played += [int(request_id.split(":")[2])] * len(spans)
        return cls(sorted(expired), sorted(played))

    def problems(self) -> list[str]:
        """Turns ended twice: expired twice, played twice, or both."""
        found = []
        for what, turns in (("expired", self.expired), ("played by a bot", self.played)):
            doubled = sorted({t for t in turns if turns.count(t) > 1})
            if doubled:
                found.append(f"turns {what} more than once: {doubled}")
        both = sorted(set(self.expired) & set(self.played))
        if both:
            found.append(f"turns both expired and played: {both}")
        return found


@dataclass(frozen=True)
class Pending:
    """A table's open turn when the fault struck."""

    turn: int
    persons: bool
    """The person's turn (else a computer's: the person's next turn is the deadline)."""


@dataclass
class ComputerTables:
    """The scenario's tables with computer seats, opened through matchmaking."""

    stack: Stack
    players: dict[str, str] = field(default_factory=dict)
    """table id → the person seated there."""
    pending: dict[str, Pending] = field(default_factory=dict)
    figures: dict[str, float] = field(default_factory=dict)
    """The ticket after the fault: seconds from the fault to matched, listed, played."""

    @property
    def table_ids(self) -> list[str]:
        return list(self.players)

    async def open(self) -> None:
        """TICKETS tables from the queue, one after the other (two lone tickets in the
        queue at once would share a table), beside PRIVATE_TABLES private ones."""

        async def by_tickets() -> None:
            for number in range(TICKETS):
                await self._by_ticket(f"idle-q{number}")

        await asyncio.gather(
            by_tickets(), *(self._private(f"idle-p{n}") for n in range(PRIVATE_TABLES))
        )

    async def note_pending(self) -> None:
        """Each table's open turn, just before the fault."""
        for table_id, player in self.players.items():
            async with TableClient(self.stack.services[0].target, token(player)) as client:
                view = await client.get_table(table_id)
            mine = next(s.seat for s in view.seats if s.player_id == player)
            self.pending[table_id] = Pending(view.turn.number, mine in view.turn.seats)

    async def ticket_after_fault(self, struck: float, scheduler: MessageScheduler) -> str:
        """A ticket made after the fault: matched, listed by ListMyTables (matchmaking's
        TableOpened consumer), timed (a turn deadline set by the clock after the fault,
        pending or already expired: its public-event consumer) and played (its first
        move, a computer's or an expiry: the person may act first, for up to three
        turns of a deal's opening, so waiting for a computer here could take 30 s; the
        bots' resumption is `until_deadlines_fired`'s)."""
        player = "idle-late"
        table_id = await self._by_ticket(player)
        self.figures["matched"] = time.monotonic() - struck
        async with MatchmakingClient(self._matchmaking_target, token(player)) as client:
            await _eventually(
                lambda: _lists(client, table_id),
                what=f"the ticket after the fault's table {table_id}: never listed by ListMyTables",
            )
        self.figures["listed"] = time.monotonic() - struck

        async def timed() -> bool:
            turns = Turns.of(await self.read_log(), table_id)
            try:
                return bool(turns.expired) or await scheduler.pending(TURN, table_id) is not None
            except nats.errors.Error:  # this check's own client reconnecting: not yet
                return False

        async def played() -> bool:
            turns = Turns.of(await self.read_log(), table_id)
            return bool(turns.played or turns.expired)

        await _eventually(
            timed,
            DEADLINE_WAIT_SECONDS,
            f"the ticket after the fault's table {table_id}: the clock never set its turn deadline",
        )
        self.figures["deadline set"] = time.monotonic() - struck
        await _eventually(
            played,
            DEADLINE_WAIT_SECONDS,
            f"the ticket after the fault's table "
            f"{table_id}: no first move (no expiry, no computer's move)",
        )
        self.figures["first move"] = time.monotonic() - struck
        return table_id

    async def until_deadlines_fired(self) -> None:
        """Wait until every table's deadline pending at the fault expired (the person's
        turn then, else her next one) and a computer moved after the fault at one of
        them (the bots resumed); then check that no turn ended twice."""
        waiting: dict[str, str] = {}

        async def fired() -> bool:
            events = await self.read_log()
            waiting.clear()
            bots_moved = False
            for table_id, pending in self.pending.items():
                turns = Turns.of(events, table_id)
                if pending.persons and pending.turn not in turns.expired:
                    waiting[table_id] = f"turn {pending.turn} (open at the fault) never expired"
                elif not any(t > pending.turn for t in turns.expired) and not pending.persons:
                    waiting[table_id] = f"no turn after {pending.turn} (a computer's) expired"
                moved = any(t > pending.turn for t in turns.played)
                bots_moved = bots_moved or moved
            if not bots_moved:
                waiting["bots"] = "no computer moved since the fault struck"
            return not waiting

        try:
            await _eventually(fired, DEADLINE_WAIT_SECONDS)
        except TimeoutError:
            raise AssertionError(f"after the fault: {waiting}\n{self.stack.log_tails()}") from None
        await self.assert_turns_ended_once()

    async def assert_turns_ended_once(self) -> None:
        events = await self.read_log()
        problems = {t: Turns.of(events, t).problems() for t in self.players}
        assert not any(problems.values()), {t: p for t, p in problems.items() if p}

    async def counts(self) -> tuple[int, int, int]:
        """(turns expired, expired since the fault, turns played by the bots)."""
        events = await self.read_log()
        every = [Turns.of(events, t) for t in self.players]
        since = sum(
            1
            for table_id, turns in zip(self.players, every, strict=True)
            for turn in turns.expired
            if turn >= self.pending.get(table_id, Pending(0, False)).turn
        )
        return sum(len(t.expired) for t in every), since, sum(len(t.played) for t in every)

    async def read_log(self) -> list[Logged]:
        connection = await asyncpg.connect(libpq_dsn(self.stack.database_url))
        try:
            streams = [stream_of(t) for t in self.players]
            return [Logged(*row) for row in await connection.fetch(_EVENTS, streams)]
        finally:
            await connection.close()

    @property
    def _matchmaking_target(self) -> str:
        assert self.stack.matchmaking is not None
        return self.stack.matchmaking.target

    async def _by_ticket(self, player: str) -> str:
        """A ticket filled with computers at once; its table once matched."""
        async with MatchmakingClient(self._matchmaking_target, token(player)) as client:
            request_id = str(uuid.uuid4())  # a retry after UNAVAILABLE is the same ticket
            ticket = await _served(
                lambda: client.enter_queue(
                    THREE,
                    request_id=request_id,
                    fill_with_computers=True,
                    three_five_eight=OPTIONS,
                    table=EASY,
                )
            )
            final = await final_state(client, ticket.ticket_id)
        assert final.state == mm_pb.TICKET_STATE_MATCHED, final
        self.players[final.table_id] = player
        return final.table_id

    async def _private(self, player: str) -> str:
        async with MatchmakingClient(self._matchmaking_target, token(player)) as client:
            request = mm_pb.CreatePrivateTableRequest(
                request_id=str(uuid.uuid4()), game=THREE, fill_with_computers=True,
                three_five_eight=OPTIONS, table=EASY,
            )  # fmt: skip
            made: mm_pb.CreatePrivateTableResponse = await _served(
                lambda: client.stub.CreatePrivateTable(request, metadata=client.metadata)
            )
        self.players[made.table_id] = player
        return made.table_id


async def _lists(client: MatchmakingClient, table_id: str) -> bool:
    return any(t.table_id == table_id for t in await client.my_tables())


async def _served(call: Callable[[], Awaitable[T]]) -> T:
    """`call` until it is served: UNAVAILABLE (a service still reconnecting after the
    fault) is retried, any other error raised."""
    async with asyncio.timeout(SERVED_WAIT_SECONDS):
        while True:
            try:
                return await call()
            except grpc.aio.AioRpcError as error:
                if error.code() != grpc.StatusCode.UNAVAILABLE:
                    raise
            await asyncio.sleep(0.2)


async def _eventually(
    probe: Callable[[], Awaitable[bool]], limit: float = SERVED_WAIT_SECONDS, what: str = ""
) -> None:
    """Wait (bounded) until `probe` holds; else fail saying `what` did not happen."""
    try:
        async with asyncio.timeout(limit):
            while True:
                if await probe():
                    return
                await asyncio.sleep(0.5)
    except TimeoutError:
        if not what:
            raise
        raise AssertionError(f"after {limit:.0f} s: {what}") from None
