"""KOZYR_TABLE_WORKERS=2: two table-service processes on one port, as one service.

`python -m kozyr.table` supervises two workers bound to the same port (SO_REUSEPORT);
connections land on both. A game played over many channels, so through both workers,
reaches every watcher on either worker without the watch poll (set to an hour): the
workers are replicas, woken by each other's appends through NATS. SIGTERM to the
supervisor stops both workers cleanly; a worker that dies takes the service down with
it (exit code ≠ 0), so that its orchestrator restarts it whole.
"""

from __future__ import annotations

import asyncio
import contextlib
import signal
from collections.abc import AsyncIterator
from pathlib import Path

import psutil
import pytest

from kozyr.api.common.v1 import games_pb2
from kozyr.client import TableClient
from kozyr.eventstore import migrate
from kozyr.infra import free_port
from kozyr.runtime.auth import Role
from tests.e2e.conftest import TableServiceProcess, _delete_jetstream_stream, service_env
from tests.support.tables import PlayerClient, token

pytestmark = pytest.mark.e2e

PLAYERS = ("ana", "bogdan", "chiara")
CHANNELS_PER_PLAYER = 4
MOVES = 30
STALL_SECONDS = 5.0
"""Far above a NATS wake-up (ms), far below the poll (an hour): a miss shows as a stall."""


@contextlib.asynccontextmanager
async def two_workers(
    database_url: str, nats_url: str, subject_root: str, log_dir: Path
) -> AsyncIterator[TableServiceProcess]:
    await migrate(database_url)
    port = free_port()
    env = service_env(database_url, nats_url, subject_root, port)
    env.update(KOZYR_TABLE_WORKERS="2", KOZYR_WATCH_POLL_SECONDS="3600")
    service = TableServiceProcess(env, port, log_dir / "table.log")
    try:
        await service.start()
        yield service
    finally:
        service.stop()
        await _delete_jetstream_stream(nats_url, subject_root)


def workers_of(service: TableServiceProcess) -> list[psutil.Process]:
    assert service.pid is not None
    children: list[psutil.Process] = psutil.Process(service.pid).children()
    return children


def connections_to(worker: psutil.Process, port: int, status: str) -> int:
    return sum(
        1
        for c in worker.net_connections(kind="tcp")
        if c.laddr and c.laddr.port == port and c.status == status
    )


async def listening(workers: list[psutil.Process], port: int) -> None:
    """Until every worker listens (the service answers health once the first does)."""
    async with asyncio.timeout(60):
        while not all(connections_to(w, port, psutil.CONN_LISTEN) for w in workers):  # noqa: ASYNC110
            await asyncio.sleep(0.1)


async def test_two_workers_share_the_port_and_every_watcher_sees_every_move(
    database_url: str, nats_url: str, subject_root: str, tmp_path: Path
) -> None:
    async with (
        two_workers(database_url, nats_url, subject_root, tmp_path) as service,
        contextlib.AsyncExitStack() as stack,
    ):
        workers = workers_of(service)
        assert len(workers) == 2
        await listening(workers, service.port)
        admin = await stack.enter_async_context(
            TableClient(service.target, token("mm", Role.SERVICE))
        )
        table_id = (
            await admin.create_table(games_pb2.GAME_THREE_FIVE_EIGHT, list(PLAYERS))
        ).table_id
        seats = [
            [
                await stack.enter_async_context(PlayerClient(service.target, token(p)))
                for _ in range(CHANNELS_PER_PLAYER)
            ]
            for p in PLAYERS
        ]
        watchers = [
            await stack.enter_async_context(PlayerClient(service.target, token(f"fan{i}")))
            for i in range(2 * CHANNELS_PER_PLAYER)
        ]
        await asyncio.gather(*(c.get_table(table_id) for s in seats for c in s))
        established = [connections_to(w, service.port, psutil.CONN_ESTABLISHED) for w in workers]
        assert all(established), f"connections per worker: {established}"

        newest = [0] * len(watchers)

        async def follow(index: int) -> None:
            async for view in watchers[index].watch(table_id):
                newest[index] = max(newest[index], view.version)

        following = [asyncio.create_task(follow(i)) for i in range(len(watchers))]
        try:
            for move in range(MOVES):
                view = await seats[0][move % CHANNELS_PER_PLAYER].get_table(table_id)
                seat = view.turn.seats[0]
                client = seats[seat][move % CHANNELS_PER_PLAYER]
                mine = await client.get_table(table_id)
                reply = await client.submit(
                    table_id, mine.legal_actions[0], expected_version=mine.version
                )
                version = reply.view.version
                try:
                    async with asyncio.timeout(STALL_SECONDS):
                        while min(newest) < version:  # noqa: ASYNC110 — many streams
                            await asyncio.sleep(0.005)
                except TimeoutError:
                    pytest.fail(f"move {move} (version {version}) did not reach every watcher")
        finally:
            for task in following:
                task.cancel()
            await asyncio.gather(*following, return_exceptions=True)
        assert all(w.is_running() for w in workers)
        assert service.stop() == 0
        assert not any(w.is_running() for w in workers)


async def test_a_dead_worker_stops_the_service(
    database_url: str, nats_url: str, subject_root: str, tmp_path: Path
) -> None:
    async with two_workers(database_url, nats_url, subject_root, tmp_path) as service:
        first, second = workers_of(service)
        first.send_signal(signal.SIGKILL)
        async with asyncio.timeout(30):
            while service.running:  # noqa: ASYNC110 — a process, not a task
                await asyncio.sleep(0.05)
        assert not second.is_running()
        assert service.stop() not in (0, None)
