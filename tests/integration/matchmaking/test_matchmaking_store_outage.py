"""Matchmaking while its PostgreSQL is stopped: every call that needs the database
answers UNAVAILABLE STORE_UNAVAILABLE (texts in en/ro/it) promptly, never INTERNAL;
health says NOT_SERVING meanwhile; once PostgreSQL is back the same replica (no
restart) reports SERVING and serves again. And a database that commits with
`synchronous_commit=off` is refused at start.

Issue 24: an independent fault run saw EnterQueue, CancelTicket, GetRating and
ListMyTables answer INTERNAL ("unhandled error in handler … StoreUnavailable") while
the table service mapped the same error to UNAVAILABLE. Matchmaking's database here is
its own `EmbeddedPostgres`, stopped and started by the test; the table service and NATS
are the session's.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path
from typing import Any

import asyncpg
import grpc
import pytest
from grpc_health.v1 import health_pb2, health_pb2_grpc

from kozyr.api.common.v1 import games_pb2
from kozyr.client import MatchmakingClient
from kozyr.eventstore import migrate
from kozyr.eventstore.durability import CommitNotDurable
from kozyr.eventstore.urls import asyncpg_dsn
from kozyr.infra import EmbeddedPostgres
from kozyr.matchmaking.service import SERVICE_NAME, MatchmakingService
from kozyr.runtime.errors import error_details
from kozyr.texts import LANGUAGES
from tests.integration.matchmaking.conftest import FAST, matchmaking_settings
from tests.integration.table.conftest import RunningTableService
from tests.support.tables import token

pytestmark = pytest.mark.integration

THREE = games_pb2.GAME_THREE_FIVE_EIGHT
STORE_SECONDS = 1.0
"""The service's database timeouts: an answer comes well before the caller's deadline."""
CALLER_DEADLINE_SECONDS = 30.0
"""Far beyond every timeout of the service: an answer must come from the service."""
WAIT_SECONDS = 60.0
"""Only a bound on a hang: health is read, not timed."""
OPTIONS: dict[str, Any] = {**FAST}
"""Every test's replica ticks often (as in the other matchmaking tests)."""
NOT_SERVING = health_pb2.HealthCheckResponse.NOT_SERVING
SERVING = health_pb2.HealthCheckResponse.SERVING


@pytest.fixture
async def postgres(tmp_path: Path) -> AsyncIterator[EmbeddedPostgres]:
    """Matchmaking's own PostgreSQL, which the test stops and starts."""
    server = EmbeddedPostgres(tmp_path / "pg", durable=False)
    await asyncio.to_thread(server.start)
    try:
        await migrate(server.url())
        yield server
    finally:
        await asyncio.to_thread(server.stop)


@pytest.fixture
async def matchmaking(
    postgres: EmbeddedPostgres, tables: RunningTableService, nats_url: str, subject_root: str
) -> AsyncIterator[str]:
    """A replica with short database timeouts on `postgres`; its target."""
    timeouts = {
        "database_connect_timeout_seconds": STORE_SECONDS,
        "database_acquire_timeout_seconds": STORE_SECONDS,
        "database_statement_timeout_seconds": STORE_SECONDS,
    }
    settings = matchmaking_settings(
        postgres.url(), nats_url, subject_root, tables.target, timeouts, **OPTIONS
    )
    service = MatchmakingService(settings)
    port = await service.start()
    try:
        yield f"127.0.0.1:{port}"
    finally:
        await service.stop(0)


async def health_becomes(channel: grpc.aio.Channel, status: int) -> None:
    """Wait (bounded) until the whole server and the service report `status`."""
    health = health_pb2_grpc.HealthStub(channel)
    async with asyncio.timeout(WAIT_SECONDS):
        for name in ("", SERVICE_NAME):
            watch = health.Watch(health_pb2.HealthCheckRequest(service=name))
            while (await watch.read()).status != status:
                pass
            watch.cancel()


async def store_unavailable(call: Callable[[], Awaitable[Any]], name: str) -> None:
    with pytest.raises(grpc.aio.AioRpcError) as caught:
        await call()
    error = caught.value
    assert error.code() == grpc.StatusCode.UNAVAILABLE, (name, error.code(), error.details())
    details = error_details(error)
    assert details.reason == "STORE_UNAVAILABLE", name
    assert set(details.messages) == set(LANGUAGES), name


async def test_calls_answer_unavailable_while_postgres_is_down_and_serve_once_it_is_back(
    postgres: EmbeddedPostgres, matchmaking: str
) -> None:
    # retry=False: the SDK retries UNAVAILABLE (rightly) and would hide the answer.
    ana = MatchmakingClient(matchmaking, token("ana"), retry=False)
    channel = grpc.aio.insecure_channel(matchmaking)
    try:
        ticket = (await ana.enter_queue(THREE, request_id="before")).ticket_id
        await asyncio.to_thread(postgres.stop)

        calls: dict[str, Callable[[], Awaitable[Any]]] = {
            "EnterQueue": lambda: ana.enter_queue(THREE, request_id="during"),
            "CancelTicket": lambda: ana.cancel(ticket),
            "GetRating": lambda: ana.rating(THREE),
            "ListMyTables": lambda: ana.my_tables(),
        }
        async with asyncio.timeout(CALLER_DEADLINE_SECONDS):
            for name, call in calls.items():
                await store_unavailable(call, name)
        await health_becomes(channel, NOT_SERVING)

        await asyncio.to_thread(postgres.start)
        await health_becomes(channel, SERVING)
        assert await ana.cancel(ticket)
        await ana.rating(THREE)
        await ana.my_tables()
        assert (await ana.enter_queue(THREE, request_id="after")).ticket_id
    finally:
        await channel.close()
        await ana.close()


async def test_matchmaking_refuses_a_database_that_commits_asynchronously(
    postgres: EmbeddedPostgres, tables: RunningTableService, nats_url: str, subject_root: str
) -> None:
    """As the table service (tests/integration/table/test_commit_durability.py)."""
    connection = await asyncpg.connect(asyncpg_dsn(postgres.url()))
    try:
        await connection.execute("ALTER DATABASE postgres SET synchronous_commit = off")
    finally:
        await connection.close()
    settings = matchmaking_settings(
        postgres.url(), nats_url, subject_root, tables.target, **OPTIONS
    )
    service = MatchmakingService(settings)
    try:
        with pytest.raises(CommitNotDurable, match="KOZYR_ALLOW_ASYNC_COMMIT"):
            await service.start()
    finally:
        await service.store.close()
