"""PostgreSQL failover under load: a primary and a synchronous standby
(tests.chaos.replication), every service on the pair's multi-host URL with
`target_session_attrs=read-write`.

- The primary is SIGKILLed (postmaster and backends at once) and the standby promoted;
  then the old primary is rewound and comes back as the new primary's standby, in sync.
- A switchover: the primary shut down cleanly, the standby promoted, the old primary
  its standby.

Each is its fault, run by `tests.chaos.scenario.survives` on `failover_stack` (a table
service, a clock, a bots process and matchmaking — on its own database of the pair):
the load's and the computer tables' checks are in that module, so the failover also
proves the clock (ExpireTurn) and the bots (their moves) served by the new primary,
and a ticket made after it matched and played. Inside the fault: matchmaking answers
again from the new primary without a restart (its health SERVING), a standby refuses
appends. The time from the fault to the first move acknowledged by the new primary is
printed (docs/operations.md, "PostgreSQL failures").
"""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

import grpc
import pytest
from grpc_health.v1 import health_pb2, health_pb2_grpc

from kozyr.api.common.v1 import games_pb2
from kozyr.client import MatchmakingClient
from kozyr.eventstore import PostgresEventStore, StoreUnavailable
from kozyr.matchmaking.service import SERVICE_NAME as MATCHMAKING
from tests.chaos.load import Load
from tests.chaos.replication import ReplicatedPostgres
from tests.chaos.scenario import WARM_UP_MOVES, Scenario, survives
from tests.chaos.stack import Stack, failover_stack
from tests.chaos.template import Template
from tests.support.tables import token

pytestmark = pytest.mark.timeout(90, func_only=True)

MATCHMAKING_WAIT_SECONDS = 20.0
"""Only a bound on a hang: matchmaking reconnects within its probe's backoff."""
GAMES_LIMIT_SECONDS = 75.0
"""Guard only: a failover scenario also starts a standby and rewinds a node."""


def pair_of(stack: Stack) -> ReplicatedPostgres:
    assert stack.pair is not None
    return stack.pair


async def first_move_after(load: Load, started: float, what: str) -> float:
    """Wait for one more acknowledged move; print and return the seconds since `started`."""
    await load.until_acknowledged(1)
    seconds = time.monotonic() - started
    print(f"\n{what}: first move served {seconds:.2f} s after the fault")
    return seconds


async def matchmaking_serves(stack: Stack) -> None:
    """Matchmaking (idle through the fault: its pool still holds connections to the old
    primary) answers a read from the new primary, through the SDK's retries of its
    UNAVAILABLE, and reports SERVING: it reconnected by itself."""
    assert stack.matchmaking is not None
    client = MatchmakingClient(stack.matchmaking.target, token("ana"))
    channel = grpc.aio.insecure_channel(stack.matchmaking.target)
    try:
        async with asyncio.timeout(MATCHMAKING_WAIT_SECONDS):
            while True:
                try:
                    await client.rating(games_pb2.GAME_THREE_FIVE_EIGHT)
                    break
                except grpc.aio.AioRpcError as error:
                    if error.code() != grpc.StatusCode.UNAVAILABLE:
                        raise  # only "retry later" is expected: never INTERNAL
            health = health_pb2_grpc.HealthStub(channel)
            watch = health.Watch(health_pb2.HealthCheckRequest(service=MATCHMAKING))
            while (await watch.read()).status != health_pb2.HealthCheckResponse.SERVING:
                pass
            watch.cancel()
    finally:
        await channel.close()
        await client.close()


async def standby_takes_no_append(pair: ReplicatedPostgres) -> None:
    """The services' health probe says a standby cannot append (a pool still holding a
    connection to an old primary turned standby must not report SERVING)."""
    store = PostgresEventStore(f"postgresql://postgres@127.0.0.1:{pair.standby.port}/postgres")
    try:
        with pytest.raises(StoreUnavailable, match="standby"):
            await store.check_writable()
    finally:
        await store.close()


async def test_primary_killed_standby_promoted_old_primary_rejoins(
    template: Template, tmp_path: Path
) -> None:
    async def fault(scenario: Scenario) -> None:
        pair, load = pair_of(scenario.stack), scenario.load
        killed = time.monotonic()
        await asyncio.to_thread(pair.primary.server.kill)
        await pair.promote()
        await pair.require_synchronous_standby(False)  # alone: commits must not wait
        await first_move_after(load, killed, "primary SIGKILLed, standby promoted")
        await matchmaking_serves(scenario.stack)

        await pair.rejoin_as_standby()
        await pair.require_synchronous_standby(True)
        await pair.until_synchronous()
        assert await pair.standby.in_recovery()
        await standby_takes_no_append(pair)
        await load.until_acknowledged(WARM_UP_MOVES)  # in play on the restored pair

    await survives(failover_stack, template, tmp_path, fault, games_limit=GAMES_LIMIT_SECONDS)


async def test_switchover_demotes_the_primary_and_promotes_the_standby(
    template: Template, tmp_path: Path
) -> None:
    async def fault(scenario: Scenario) -> None:
        pair = pair_of(scenario.stack)
        demoted = time.monotonic()
        await asyncio.to_thread(pair.primary.server.stop)  # clean: the standby has it all
        await pair.promote()
        await pair.rejoin_as_standby()  # commits wait for it: synchronous all along
        await first_move_after(scenario.load, demoted, "switchover")
        await matchmaking_serves(scenario.stack)
        await pair.until_synchronous()

    await survives(failover_stack, template, tmp_path, fault, games_limit=GAMES_LIMIT_SECONDS)
