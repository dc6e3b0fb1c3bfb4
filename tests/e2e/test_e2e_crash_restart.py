"""SIGKILL the table service in the middle of a 3-5-8 game, start it again, finish the game.

The process keeps nothing worth keeping in memory: after a restart on the same port the
table is exactly what the log holds (nothing acknowledged is lost, nothing is
invented), the outbox relay publishes what the dead process had not, clients resume
their watch streams from the last version they saw, and a move that got no answer
before the crash is re-sent with its request id and answered once.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

import grpc
import pytest

from kozyr.api.common.v1 import games_pb2
from kozyr.eventstore import RecordedEvent
from kozyr.infra import Infrastructure
from tests.e2e.checks import (
    assert_history_reached_nats_once,
    assert_moderator_tools_agree,
    assert_no_leaks,
    assert_watch_streams_clean,
)
from tests.e2e.conftest import Deployment, deployment_for_module
from tests.e2e.players import Gate, play_table
from tests.e2e.published import stored_events
from tests.e2e.tables import PlayedGame, admin_client, collect, open_table, scripted_clients

pytestmark = pytest.mark.e2e

GAME_TIMEOUT = 150.0
T = TypeVar("T")
KILL_AT_DEAL = 3
"""The service dies as soon as deal 3 has been dealt: deals 1 and 2 are played."""


@dataclass
class CrashedGame:
    played: PlayedGame
    stored_at_kill: list[RecordedEvent]
    """The table's log read from PostgreSQL while the service was dead."""
    seen_before_kill: int
    """The highest version any client had been shown before the kill."""
    version_after_restart: int
    """The version the restarted service reported before any client could act again."""
    deal_after_restart: int


STEP_TIMEOUT = 60.0


async def wait_for_deal(target: str, table_id: str, deal: int) -> None:
    async with admin_client(target) as admin:
        async for view in admin.watch(table_id):
            if view.three_five_eight.deal_number >= deal:
                return


async def until_available(call: Callable[[], Awaitable[T]]) -> T:
    """`call()`, retried while UNAVAILABLE: channels in this process share gRPC's
    subchannels, and the one to the dead process waits out its reconnect backoff
    (seconds) before it tries the restarted one, failing fast meanwhile."""
    async with asyncio.timeout(STEP_TIMEOUT):
        while True:
            try:
                return await call()
            except grpc.aio.AioRpcError as error:
                if error.code() != grpc.StatusCode.UNAVAILABLE:
                    raise
            await asyncio.sleep(0.1)


async def unless_the_game_fails(game: asyncio.Future[Any], step: Awaitable[T]) -> T:
    """Await `step`, but surface at once a game that failed (or ended) in the meantime."""
    task = asyncio.ensure_future(step)
    async with asyncio.timeout(STEP_TIMEOUT):
        await asyncio.wait({task, game}, return_when=asyncio.FIRST_COMPLETED)
    if not task.done():
        task.cancel()
        game.result()  # raises the clients' failure
        raise AssertionError("the game ended before the crash step was done")
    return task.result()


async def play_through_a_crash(deployment: Deployment) -> CrashedGame:
    table_id, players = await open_table(deployment.target, games_pb2.GAME_THREE_FIVE_EIGHT)
    gate = Gate()
    seats, spectator = scripted_clients(
        deployment, games_pb2.GAME_THREE_FIVE_EIGHT, table_id, players, 1, gate
    )
    clients = [*seats, spectator]
    started = time.perf_counter()
    game = asyncio.ensure_future(play_table(clients, GAME_TIMEOUT))
    try:
        await unless_the_game_fails(game, wait_for_deal(deployment.target, table_id, KILL_AT_DEAL))
        gate.open.clear()  # clients that lose the service wait here until it is back
        deployment.service.kill()
        stored_at_kill = await stored_events(deployment.database_url, table_id)
        await unless_the_game_fails(game, gate.until_parked(len(clients)))
        # Every client has now read all the dead process had sent it.
        seen = max(v.version for c in clients for v in c.log.views)
        await deployment.service.start()
        async with admin_client(deployment.target) as admin:
            restarted = await until_available(lambda: admin.get_table(table_id))
        gate.open.set()
        await game
    finally:
        game.cancel()
    seconds = time.perf_counter() - started
    played = await collect(
        deployment, games_pb2.GAME_THREE_FIVE_EIGHT, table_id, players, seats, spectator, seconds
    )
    return CrashedGame(
        played, stored_at_kill, seen, restarted.version, restarted.three_five_eight.deal_number
    )


@pytest.fixture(scope="module")
async def crashed(
    infra: Infrastructure, tmp_path_factory: pytest.TempPathFactory
) -> AsyncIterator[CrashedGame]:
    log_dir: Path = tmp_path_factory.mktemp("crash")
    async with deployment_for_module(infra, log_dir) as deployment:
        yield await play_through_a_crash(deployment)


async def test_the_restarted_service_continues_from_the_log(crashed: CrashedGame) -> None:
    killed_at = len(crashed.stored_at_kill)
    assert crashed.played.deployment.service.starts == 2
    assert crashed.deal_after_restart == KILL_AT_DEAL, "killed in the middle of deal 3"
    assert crashed.seen_before_kill <= killed_at, "a version shown to a client was lost"
    assert crashed.version_after_restart == killed_at
    final = crashed.played.admin_final
    assert final.finished
    assert final.three_five_eight.deal_number == 18
    assert len(final.three_five_eight.deal_scores) == 18
    assert final.version > killed_at
    stored = await stored_events(crashed.played.deployment.database_url, crashed.played.table_id)
    before = [(e.event_id, e.hash) for e in crashed.stored_at_kill]
    assert [(e.event_id, e.hash) for e in stored[:killed_at]] == before


async def test_clients_resume_their_watch_from_their_last_version(crashed: CrashedGame) -> None:
    for log in crashed.played.clients:
        assert log.disconnects >= 1, f"{log.player_id} never lost the service"
        resumed = [c for c in log.connections[1:] if c.versions]
        assert resumed, f"{log.player_id} never resumed its watch"
        for connection in resumed:
            assert connection.from_version > 0
            assert connection.versions[0] > connection.from_version
    assert_watch_streams_clean(crashed.played)


async def test_no_seat_ever_received_what_it_may_not_know(crashed: CrashedGame) -> None:
    assert_no_leaks(crashed.played)


async def test_every_event_reached_nats_once_in_order(crashed: CrashedGame) -> None:
    await assert_history_reached_nats_once(crashed.played)


async def test_moderator_replay_and_verify_agree(crashed: CrashedGame) -> None:
    await assert_moderator_tools_agree(crashed.played)
