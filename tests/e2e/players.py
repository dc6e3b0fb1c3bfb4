"""Scripted players over real gRPC: one TableClient, one token and one watch stream each.

A player plays only from what its own view shows (DESIGN.md §6): when its seat is in
`view.turn.seats` it sends one of `view.legal_actions`, pinned to `view.version`. A
stale view is normal with concurrent clients: ABORTED or FAILED_PRECONDITION means
"wait for the next view". When the service goes away (UNAVAILABLE) the player opens a
new channel, first re-sends a move that got no answer (same request id: the server
answers `duplicate` if it had stored it), then resumes its watch from the last version
it saw. Everything received is kept in a `SeatLog` for the leak and resume checks.
"""

from __future__ import annotations

import asyncio
import random
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field

import grpc

from kozyr.api.table.v1 import actions_pb2, views_pb2
from kozyr.api.table.v1 import table_service_pb2 as pb
from kozyr.client import TableClient
from kozyr.client.table import new_request_id
from kozyr.games.decider import CLIENT_SEED
from kozyr.runtime.errors import error_details
from tests.support.tables import Seat, token

REFUSALS = frozenset({grpc.StatusCode.ABORTED, grpc.StatusCode.FAILED_PRECONDITION})
"""A move refused because the view it was chosen from is stale: wait for the next one."""

RECONNECT_DELAY = 0.1

RECONNECT_ON = frozenset({grpc.StatusCode.UNAVAILABLE})
"""The service went away: reconnect, re-send the unanswered move, resume the watch."""


@dataclass(frozen=True)
class Refusal:
    """A refused move as the player received it (checked for leaks like any view)."""

    acted_on: int
    """The version of the view the move was chosen from."""
    code: grpc.StatusCode
    reason: str | None
    texts: tuple[str, ...]
    """The status message, every localized message and every ErrorInfo metadata value."""
    metadata: dict[str, str]


@dataclass(frozen=True)
class Acknowledged:
    """A move the service answered OK: the request id and the version its reply showed."""

    request_id: str
    version: int
    duplicate: bool


@dataclass
class WatchConnection:
    """One WatchTable call: the version it resumed from and what it delivered."""

    from_version: int
    versions: list[int] = field(default_factory=list)


@dataclass
class SeatLog:
    """Everything one client received from the service."""

    seat: int | None
    player_id: str
    watch_views: list[views_pb2.TableView] = field(default_factory=list)
    submit_views: list[views_pb2.TableView] = field(default_factory=list)
    refusals: list[Refusal] = field(default_factory=list)
    history: list[pb.HistoryEvent] = field(default_factory=list)
    connections: list[WatchConnection] = field(default_factory=list)
    acknowledged: list[Acknowledged] = field(default_factory=list)
    submitted: int = 0
    duplicates: int = 0
    disconnects: int = 0

    @property
    def views(self) -> list[views_pb2.TableView]:
        return [*self.watch_views, *self.submit_views]

    @property
    def final(self) -> views_pb2.TableView:
        return self.watch_views[-1]


@dataclass
class _Pending:
    """A move sent but not answered: re-sent with the same request id after a reconnect."""

    request_id: str
    action: actions_pb2.Action
    version: int


Chooser = Callable[[views_pb2.TableView], actions_pb2.Action | None]


TAPS_PER_MINUTE = 5
"""Half the service's limit (10 signal taps per seat in any 60 s, docs/api.md): a
scripted player is never refused a tap, so it never waits for a view that cannot come
(a refused tap leaves its turn open and sends no new view)."""


def chooser(seat: Seat, rng: random.Random, signal_rate: float = 0.0) -> Chooser:
    """`Seat.choose`, plus a Khözör signal toggle now and then (they never end a turn)."""
    taps: deque[float] = deque()

    def choose(view: views_pb2.TableView) -> actions_pb2.Action | None:
        if seat.seat not in view.turn.seats:
            return None
        toggles = [a for a in view.legal_actions if a.WhichOneof("action") == "toggle_signal"]
        while taps and time.monotonic() - taps[0] > 60:
            taps.popleft()
        if toggles and rng.random() < signal_rate and len(taps) < TAPS_PER_MINUTE:
            taps.append(time.monotonic())
            return rng.choice(toggles)
        return seat.choose(view)

    return choose


class Gate:
    """Lets the test hold every client off the service (while it is down) and count them."""

    def __init__(self) -> None:
        self.open = asyncio.Event()
        self.open.set()
        self.parked = 0
        self._changed = asyncio.Condition()

    async def wait(self) -> None:
        if self.open.is_set():
            return
        async with self._changed:
            self.parked += 1
            self._changed.notify_all()
        await self.open.wait()
        async with self._changed:
            self.parked -= 1

    async def until_parked(self, count: int) -> None:
        async with self._changed:
            await self._changed.wait_for(lambda: self.parked >= count)


class ScriptedClient:
    """One seat's (or a spectator's) client, played until the table is finished."""

    reconnect_on: frozenset[grpc.StatusCode] = RECONNECT_ON
    """Codes after which the client reconnects and re-sends its pending move."""
    reads_history = True
    """Read the seat's history at the end (for the leak checks)."""

    def __init__(
        self,
        target: Callable[[], str],
        table_id: str,
        player_id: str,
        seat: int | None,
        choose: Chooser | None,
        gate: Gate | None = None,
    ) -> None:
        self._target = target
        self.table_id = table_id
        self.token = token(player_id)
        self.choose = choose
        self.gate = gate or Gate()
        self.log = SeatLog(seat, player_id)
        self._last_seen = 0
        self._acted_on = 0
        self._pending: _Pending | None = None
        self._finished = False

    async def run(self) -> SeatLog:
        """Play (or watch) to the end, then read this seat's history."""
        while not self._finished:
            await self.gate.wait()
            try:
                async with TableClient(self._target(), self.token) as client:
                    await self._resend_pending(client)
                    await self._follow(client)
                    if self._finished:
                        if self.reads_history:
                            self.log.history = await client.history(self.table_id)
                        return self.log
            except grpc.aio.AioRpcError as error:
                if error.code() not in self.reconnect_on:
                    raise
            # The service went away (or ended the stream while stopping): try again.
            self.log.disconnects += 1
            await asyncio.sleep(RECONNECT_DELAY)
        return self.log

    async def _follow(self, client: TableClient) -> None:
        connection = WatchConnection(self._last_seen)
        self.log.connections.append(connection)
        async for view in client.watch(self.table_id, from_version=self._last_seen):
            connection.versions.append(view.version)
            self.log.watch_views.append(view)
            self._last_seen = view.version
            if view.finished:
                self._finished = True
                return
            await self._act(client, view)

    async def _contribute(self, client: TableClient, view: views_pb2.TableView) -> None:
        """Set the seat's client seed when the first deal waits for it, as a player's
        client does (docs/fair-deal.md §9): a random one, too late is no matter."""
        if view.turn.kind != CLIENT_SEED or self.log.seat not in view.turn.seats:
            return
        try:
            await client.set_client_seed(self.table_id, view.next_deal.number)
        except grpc.aio.AioRpcError as refused:  # dealt meanwhile (the window closed)
            if refused.code() != grpc.StatusCode.FAILED_PRECONDITION:
                raise

    async def _act(self, client: TableClient, view: views_pb2.TableView | None) -> None:
        """Move while the freshest view says it is our turn (a reply may say so again)."""
        if view is not None and self.log.seat is not None:
            await self._contribute(client, view)
        while view is not None and view.version > self._acted_on and not view.finished:
            action = self.choose(view) if self.choose is not None else None
            if action is None:
                return
            self._acted_on = view.version
            self._pending = _Pending(new_request_id(), action, view.version)
            view = await self._submit(client)

    async def _resend_pending(self, client: TableClient) -> None:
        if self._pending is not None:
            await self._act(client, await self._submit(client))

    async def _submit(self, client: TableClient) -> views_pb2.TableView | None:
        """Send the pending move; its reply's view, or None when it was refused."""
        pending = self._pending
        assert pending is not None
        try:
            self.log.submitted += 1
            response = await self._send(client, pending)
        except grpc.aio.AioRpcError as error:
            if error.code() not in REFUSALS:
                raise  # UNAVAILABLE: `run` reconnects and re-sends
            self._pending = None
            self.log.refusals.append(_refusal(pending.version, error))
            return None
        self._pending = None
        self.log.acknowledged.append(
            Acknowledged(pending.request_id, response.view.version, response.duplicate)
        )
        self.log.duplicates += response.duplicate
        self.log.submit_views.append(response.view)
        return response.view

    async def _send(self, client: TableClient, pending: _Pending) -> pb.SubmitActionResponse:
        """One SubmitAction call of the pending move (same request id on every attempt)."""
        return await client.submit(
            self.table_id,
            pending.action,
            request_id=pending.request_id,
            expected_version=pending.version,
        )


def _refusal(acted_on: int, error: grpc.aio.AioRpcError) -> Refusal:
    details = error_details(error)
    texts = (details.message, *details.messages.values(), *details.metadata.values())
    return Refusal(acted_on, error.code(), details.reason, texts, dict(details.metadata))


async def play_table(clients: list[ScriptedClient], limit_seconds: float) -> list[SeatLog]:
    """Run every client concurrently to the end of the game."""
    async with asyncio.timeout(limit_seconds):
        return list(await asyncio.gather(*(c.run() for c in clients)))
