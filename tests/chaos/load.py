"""The common load: every table of the stack in play, one scripted client per seat.

The clients are the e2e suite's scripted players (they play only what their view
offers, pinned to its version), made stubborn: a move that gets UNAVAILABLE,
DEADLINE_EXCEEDED or RESOURCE_EXHAUSTED is re-sent with the same request id after
reconnecting (to the next live replica when there are several), and every move the
service acknowledged is recorded for the checks.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import random
from collections.abc import AsyncIterator, Callable, Sequence
from dataclasses import dataclass

import grpc

from kozyr.api.table.v1 import table_service_pb2 as pb
from kozyr.client import TableClient
from kozyr.games import khozor_teams
from tests.chaos.stack import Stack
from tests.chaos.template import TableSetup
from tests.e2e.conftest import TableServiceProcess
from tests.e2e.players import Gate, ScriptedClient, SeatLog, _Pending, chooser
from tests.e2e.tables import SIGNAL_RATE
from tests.support.tables import Seat

SUBMIT_DEADLINE = 3.0
"""A move's gRPC deadline: a hung database makes the client give up and re-send."""
GAME_LIMIT_SECONDS = 45.0
"""Guard only: every game must end within this once the load started."""
PROGRESS_WAIT_SECONDS = 20.0


class StubbornClient(ScriptedClient):
    """A scripted player that survives every fault by re-sending with the same id."""

    reconnect_on = frozenset(
        {
            grpc.StatusCode.UNAVAILABLE,
            grpc.StatusCode.DEADLINE_EXCEEDED,
            grpc.StatusCode.RESOURCE_EXHAUSTED,
        }
    )
    reads_history = False

    async def _send(self, client: TableClient, pending: _Pending) -> pb.SubmitActionResponse:
        request = pb.SubmitActionRequest(
            table_id=self.table_id,
            request_id=pending.request_id,
            action=pending.action,
            expected_version=pending.version,
        )
        response: pb.SubmitActionResponse = await client.stub.SubmitAction(
            request, metadata=client.metadata, timeout=SUBMIT_DEADLINE
        )
        return response


def rotating_target(services: list[TableServiceProcess], first: int) -> Callable[[], str]:
    """Each (re)connection goes to the next running replica, starting at `first`."""
    turns = itertools.count(first)

    def target() -> str:
        for _ in services:
            service = services[next(turns) % len(services)]
            if service.running:
                return service.target
        return services[first % len(services)].target  # all down: the gate holds them

    return target


@dataclass
class Load:
    """Every table's clients, running until every game is over."""

    stack: Stack
    clients: list[StubbornClient]
    gate: Gate
    games: asyncio.Future[list[SeatLog]]

    @property
    def acknowledged(self) -> int:
        return sum(len(c.log.acknowledged) for c in self.clients)

    async def until_acknowledged(self, count: int) -> None:
        """Wait for `count` more acknowledged moves: the load is really running."""
        wanted = self.acknowledged + count
        async with asyncio.timeout(PROGRESS_WAIT_SECONDS):
            while self.acknowledged < wanted:
                if self.games.done():
                    self.games.result()  # a client failed: raise its error
                    raise AssertionError("every game ended before the fault")
                await asyncio.sleep(0.05)

    async def finish(self) -> list[SeatLog]:
        """Every game played to its end (a client's unexpected error surfaces here)."""
        try:
            return await self.games
        except TimeoutError:
            versions = {
                c.table_id[:8]: c.log.final.version for c in self.clients if c.log.watch_views
            }
            raise AssertionError(
                f"the games did not end in time; last versions {versions}\n{self.stack.log_tails()}"
            ) from None


def _clients(stack: Stack, table: TableSetup, number: int, gate: Gate) -> list[StubbornClient]:
    """One client per seat; with replicas, a table's seats start on different ones."""
    signal_rate = SIGNAL_RATE if table.game_id == khozor_teams.GAME_ID else 0.0
    clients = []
    for seat, player in enumerate(table.players):
        rng = random.Random(number * 100 + seat)
        target = rotating_target(stack.services, number + seat)
        choose = chooser(Seat(seat, player, rng), rng, signal_rate)
        clients.append(StubbornClient(target, table.table_id, player, seat, choose, gate))
    return clients


@contextlib.asynccontextmanager
async def load_on(stack: Stack, limit: float = GAME_LIMIT_SECONDS) -> AsyncIterator[Load]:
    """Every table's clients at play (a task) until `Load.finish()`; cancelled on exit.
    `limit`: the guard on the games' end, in seconds."""
    gate = Gate()
    clients = [c for n, t in enumerate(stack.tables) for c in _clients(stack, t, n, gate)]
    games = asyncio.ensure_future(_play(clients, limit))
    try:
        yield Load(stack, clients, gate, games)
    finally:
        games.cancel()
        await asyncio.gather(games, return_exceptions=True)


async def _play(clients: Sequence[ScriptedClient], limit: float) -> list[SeatLog]:
    """Like `play_table`, but a failed client also stops every other one."""
    tasks = [asyncio.ensure_future(c.run()) for c in clients]
    try:
        async with asyncio.timeout(limit):
            return list(await asyncio.gather(*tasks))
    finally:
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
