"""Several table-service replicas on one table: every watcher hears every move at once.

Issue 8, defect 1: a replica whose cache had been advanced by a read skipped the NATS
wake-up of another replica's append, and its watchers waited for the next poll (~10 s).
Here the poll is an hour away, players move through the replicas in turn, and every
move is followed at once by a read through every other replica (the trigger). Each
watcher — every seat and a spectator on every replica — must receive every version:
one that arrives only after `STALL_SECONDS` is a lost wake-up. The delays are printed
(`-s`) for the record; the speed figure itself lives in the benchmarks.
"""

from __future__ import annotations

import asyncio
import contextlib
import statistics
import time
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from kozyr.api.common.v1 import games_pb2
from kozyr.client import TableClient
from kozyr.eventstore import migrate
from kozyr.infra import free_port
from kozyr.runtime.auth import Role
from tests.e2e.conftest import TableServiceProcess, _delete_jetstream_stream, service_env
from tests.support.tables import token

pytestmark = pytest.mark.e2e

PLAYERS = ("ana", "bogdan", "chiara")
MOVES = 40
STALL_SECONDS = 5.0
"""Far above any wake-up path (ms), far below the poll (an hour): a miss shows as a stall."""


@contextlib.asynccontextmanager
async def replicas_of(
    count: int, database_url: str, nats_url: str, subject_root: str, log_dir: Path
) -> AsyncIterator[list[TableServiceProcess]]:
    await migrate(database_url)
    services = []
    for index in range(count):
        port = free_port()
        env = service_env(database_url, nats_url, subject_root, port)
        env["KOZYR_WATCH_POLL_SECONDS"] = "3600"
        services.append(TableServiceProcess(env, port, log_dir / f"table{index}.log"))
    try:
        await asyncio.gather(*(s.start() for s in services))
        yield services
    finally:
        for service in services:
            service.stop()
        await _delete_jetstream_stream(nats_url, subject_root)


class Watcher:
    """One WatchTable stream; records when each version arrived."""

    def __init__(self, client: TableClient, table_id: str, name: str) -> None:
        self.name = name
        self.arrived: dict[int, float] = {}
        self.newest = 0
        self.task = asyncio.create_task(self._watch(client, table_id))

    async def _watch(self, client: TableClient, table_id: str) -> None:
        async for view in client.watch(table_id):
            self.arrived.setdefault(view.version, time.monotonic())
            self.newest = max(self.newest, view.version)


async def seen_by_all(watchers: list[Watcher], version: int) -> None:
    async with asyncio.timeout(STALL_SECONDS):
        while any(w.newest < version for w in watchers):  # noqa: ASYNC110 — many streams
            await asyncio.sleep(0.002)


@pytest.mark.parametrize("replicas", [2, 3])
async def test_every_watcher_on_every_replica_sees_every_move(
    replicas: int, database_url: str, nats_url: str, subject_root: str, tmp_path: Path
) -> None:
    async with (
        replicas_of(replicas, database_url, nats_url, subject_root, tmp_path) as services,
        contextlib.AsyncExitStack() as stack,
    ):
        clients = [
            {
                p: await stack.enter_async_context(TableClient(s.target, token(p)))
                for p in (*PLAYERS, "moderator")
            }
            for s in services
        ]
        admin = await stack.enter_async_context(
            TableClient(services[0].target, token("mm", Role.SERVICE))
        )
        admins = [
            await stack.enter_async_context(TableClient(s.target, token("mod", Role.ADMIN)))
            for s in services
        ]
        created = await admin.create_table(games_pb2.GAME_THREE_FIVE_EIGHT, list(PLAYERS))
        table_id = created.table_id
        watchers = [
            Watcher(clients[r][p], table_id, f"replica {r} {p}")
            for r in range(replicas)
            for p in PLAYERS
        ] + [Watcher(admins[r], table_id, f"replica {r} spectator") for r in range(replicas)]
        try:
            delays = await play(clients, watchers, table_id, replicas)
        finally:
            for watcher in watchers:
                watcher.task.cancel()
            await asyncio.gather(*(w.task for w in watchers), return_exceptions=True)
    delays.sort()
    p99 = delays[min(len(delays) - 1, int(len(delays) * 0.99))]
    print(
        f"\n{replicas} replicas: {len(delays)} deliveries, "
        f"p50 {statistics.median(delays) * 1000:.1f} ms, p99 {p99 * 1000:.1f} ms, "
        f"max {delays[-1] * 1000:.1f} ms"
    )


async def play(
    clients: list[dict[str, TableClient]], watchers: list[Watcher], table_id: str, replicas: int
) -> list[float]:
    """MOVES moves, each through the next replica; returns every watcher's delay."""
    delays: list[float] = []
    for move in range(MOVES):
        through = move % replicas
        view = await clients[through]["moderator"].get_table(table_id)
        player = PLAYERS[view.turn.seats[0]]
        mine = await clients[through][player].get_table(table_id)
        action = next(a for a in mine.legal_actions if a.WhichOneof("action") != "toggle_signal")
        reply = await clients[through][player].submit(
            table_id, action, expected_version=mine.version
        )
        acked = time.monotonic()
        version = reply.view.version
        # The trigger of the old stall: every other replica reads the table at once.
        await asyncio.gather(
            *(clients[r][player].get_table(table_id) for r in range(replicas) if r != through)
        )
        try:
            await seen_by_all(watchers, version)
        except TimeoutError:
            stalled = [w.name for w in watchers if w.newest < version]
            pytest.fail(f"move {move} (version {version}) never reached {stalled}")
        delays.extend(max(0.0, w.arrived[version] - acked) for w in watchers)
    return delays
