"""The table service on a hung PostgreSQL (SIGSTOPped): moves fail promptly with
UNAVAILABLE — or DEADLINE_EXCEEDED when the caller's deadline comes first — and once
the server resumes the same request completes exactly once and the log verifies. A
statement PostgreSQL itself cancels (its statement timeout) is UNAVAILABLE too.

Issue 8, defect 6. This module runs its own PostgreSQL (`EmbeddedPostgres`), frozen and
thawed by the tests, never the session's shared server; NATS is the shared one.
Assertions are about status codes; the only clock is a call deadline far beyond every
timeout of the service (30 s) where the answer must come from the service itself.
"""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass

import asyncpg
import grpc
import pytest
from grpc_health.v1 import health_pb2, health_pb2_grpc
from prometheus_client import REGISTRY

from kozyr.api.common.v1 import games_pb2
from kozyr.api.table.v1 import table_service_pb2 as pb
from kozyr.client import TableClient
from kozyr.eventstore import migrate
from kozyr.eventstore.urls import asyncpg_dsn
from kozyr.infra import EmbeddedPostgres
from kozyr.runtime.auth import Role
from kozyr.runtime.errors import error_details
from kozyr.table.adapters.repository import stream_of
from kozyr.table.service import SERVICE_NAME, TableService
from tests.integration.eventstore.test_eventstore_postgres import wait_for_backend
from tests.integration.table.conftest import table_settings
from tests.support.tables import token

pytestmark = pytest.mark.integration

PLAYERS = ("ana", "bogdan", "chiara")
STORE_TIMEOUT_SECONDS = 1.0
PATIENT_STORE_SECONDS = 120.0
"""Store timeouts that never fire during a test: the caller's deadline comes first."""
CALLER_DEADLINE_SECONDS = 30.0
SHORT_DEADLINE_SECONDS = 2.0


@pytest.fixture(scope="module")
def postgres(tmp_path_factory: pytest.TempPathFactory) -> Iterator[EmbeddedPostgres]:
    server = EmbeddedPostgres(tmp_path_factory.mktemp("frozen-pg") / "data", durable=False)
    server.start()
    yield server
    server.stop()


@dataclass
class Running:
    service: TableService
    postgres: EmbeddedPostgres
    target: str


async def start_service(
    postgres: EmbeddedPostgres,
    nats_url: str,
    subject_root: str,
    store_seconds: float,
    deadline_margin_seconds: float = 0.05,
) -> Running:
    database_url = postgres.url()
    await migrate(database_url)
    settings = table_settings(
        database_url,
        nats_url,
        subject_root,
        database_connect_timeout_seconds=store_seconds,
        database_acquire_timeout_seconds=store_seconds,
        database_statement_timeout_seconds=store_seconds,
        grpc_deadline_margin_seconds=deadline_margin_seconds,
    )
    service = TableService(settings)
    port = await service.start()
    return Running(service, postgres, f"127.0.0.1:{port}")


@pytest.fixture
async def impatient(
    postgres: EmbeddedPostgres, nats_url: str, subject_root: str
) -> AsyncIterator[Running]:
    """A service whose database calls give up after STORE_TIMEOUT_SECONDS."""
    running = await start_service(postgres, nats_url, subject_root, STORE_TIMEOUT_SECONDS)
    yield running
    await running.service.stop(0)


@pytest.fixture
async def patient(
    postgres: EmbeddedPostgres, nats_url: str, subject_root: str
) -> AsyncIterator[Running]:
    """A service whose database calls would wait longer than any caller."""
    # The server's own bound comes a whole second before the caller's deadline: on a
    # loaded machine a 50 ms margin can lose the race to the caller's timeout.
    running = await start_service(
        postgres, nats_url, subject_root, PATIENT_STORE_SECONDS, deadline_margin_seconds=1.0
    )
    yield running
    await running.service.stop(0)


@dataclass
class Move:
    """A legal move of the seat whose turn it is, with its request id (kept for retries)."""

    player: str
    request: pb.SubmitActionRequest


async def next_move(target: str) -> Move:
    async with TableClient(target, token("matchmaker", Role.SERVICE)) as service:
        table_id = (await service.create_table(games_pb2.GAME_THREE_FIVE_EIGHT, PLAYERS)).table_id
    for player in PLAYERS:
        async with TableClient(target, token(player)) as client:
            view = await client.get_table(table_id)
        if view.legal_actions:
            request = pb.SubmitActionRequest(
                table_id=table_id,
                request_id=uuid.uuid4().hex,
                action=view.legal_actions[0],
                expected_version=view.version,
            )
            return Move(player, request)
    raise AssertionError("nobody may act on a new table")


async def submit(target: str, move: Move, *, deadline: float) -> pb.SubmitActionResponse:
    """SubmitAction with the client's retries off: the service's own answer."""
    async with TableClient(target, token(move.player), retry=False) as client:
        response: pb.SubmitActionResponse = await client.stub.SubmitAction(
            move.request, metadata=client.metadata, timeout=deadline
        )
        return response


async def refused(target: str, move: Move, *, deadline: float) -> grpc.aio.AioRpcError:
    with pytest.raises(grpc.aio.AioRpcError) as caught:
        await submit(target, move, deadline=deadline)
    return caught.value


async def settles_once(running: Running, move: Move) -> None:
    """After the thaw, the same request succeeds and the move is in the log exactly once.

    The first attempt may have reached the database before the freeze (then it was
    committed whole, and this retry is answered as a duplicate) or not (no row at all).
    """
    async with TableClient(running.target, token(move.player)) as client:
        response = await client.stub.SubmitAction(
            move.request, metadata=client.metadata, timeout=CALLER_DEADLINE_SECONDS
        )
        assert response.view.version > move.request.expected_version
        history = await client.history(move.request.table_id)
    versions = [event.version for event in history]
    assert versions == sorted(set(versions)), "no version twice, none out of order"
    store = running.service.store
    events = await store.read(stream_of(move.request.table_id))
    assert [event.position for event in events] == list(range(1, len(events) + 1))
    assert len(events) == response.view.version
    report = await store.verify(stream_of(move.request.table_id))
    assert report.ok, report


def server_answers(code: str) -> float:
    labels = {"grpc_service": SERVICE_NAME, "grpc_method": "SubmitAction", "grpc_code": code}
    return REGISTRY.get_sample_value("kozyr_grpc_server_handled_total", labels) or 0.0


async def answered_since(code: str, before: float) -> float:
    """The server's count of `code` answers once it has moved past `before`: the caller
    can hold its error before the handler's last stage counts it (the status goes out
    first, and the caller's own deadline can fire first), so wait for the count."""
    async with asyncio.timeout(10):
        while (answered := server_answers(code)) <= before:  # noqa: ASYNC110 — a counter
            await asyncio.sleep(0.01)
    return answered


async def test_a_move_on_a_hung_database_is_unavailable_then_settles_once(
    impatient: Running,
) -> None:
    move = await next_move(impatient.target)
    impatient.postgres.freeze()
    try:
        error = await refused(impatient.target, move, deadline=CALLER_DEADLINE_SECONDS)
    finally:
        impatient.postgres.thaw()
    assert error.code() == grpc.StatusCode.UNAVAILABLE, error
    assert error_details(error).reason == "STORE_UNAVAILABLE"
    await settles_once(impatient, move)


async def test_the_callers_deadline_ends_a_move_waiting_on_a_hung_database(
    patient: Running,
) -> None:
    move = await next_move(patient.target)
    answered_before = server_answers("DEADLINE_EXCEEDED")
    patient.postgres.freeze()
    try:
        error = await refused(patient.target, move, deadline=SHORT_DEADLINE_SECONDS)
    finally:
        patient.postgres.thaw()
    assert error.code() == grpc.StatusCode.DEADLINE_EXCEEDED, error
    answered = await answered_since("DEADLINE_EXCEEDED", answered_before)
    assert answered == answered_before + 1, (
        "the service ended the handler at the deadline itself (not cancelled by grpc)"
    )
    await settles_once(patient, move)


async def test_a_statement_postgresql_cancels_is_unavailable_then_settles_once(
    patient: Running,
) -> None:
    """PostgreSQL ends a statement that outlives its `statement_timeout` with SQLSTATE
    57014 (query_canceled), the error an operator's `pg_cancel_backend` also gives: the
    caller must get UNAVAILABLE (retry), never INTERNAL.

    The move's append waits on a row lock the test holds, and the test cancels it. A
    real statement timeout would race the store's equal client-side timeout (which
    usually fires first and is the hung-server case above); the cancel is the server's
    57014 every time. The store's timeouts here are far away, so nothing else ends it.
    """
    move = await next_move(patient.target)
    blocker = await asyncpg.connect(asyncpg_dsn(patient.postgres.url()))
    try:
        # A real statement timeout ends with the very error the cancel below gives.
        await blocker.execute("SET statement_timeout = 10")
        with pytest.raises(asyncpg.QueryCanceledError) as timed_out:
            await blocker.execute("SELECT pg_sleep(30)")
        assert timed_out.value.sqlstate == "57014"
        await blocker.execute("RESET statement_timeout")

        async with blocker.transaction():
            await blocker.execute(
                "SELECT 1 FROM streams WHERE id = $1 FOR UPDATE", stream_of(move.request.table_id)
            )
            answer = asyncio.ensure_future(
                submit(patient.target, move, deadline=CALLER_DEADLINE_SECONDS)
            )
            waiting = await wait_for_backend(blocker, "kozyr-eventstore", "Lock")
            assert await blocker.fetchval("SELECT pg_cancel_backend($1)", waiting)
            with pytest.raises(grpc.aio.AioRpcError) as caught:
                await answer
    finally:
        await blocker.close()
    assert caught.value.code() == grpc.StatusCode.UNAVAILABLE, caught.value
    assert error_details(caught.value).reason == "STORE_UNAVAILABLE"
    await settles_once(patient, move)


async def test_health_is_not_serving_while_postgres_is_down_then_serving_again(
    impatient: Running,
) -> None:
    """Issue 24: a move on a stopped PostgreSQL is UNAVAILABLE, health turns NOT_SERVING
    (load balancers send the calls elsewhere); once PostgreSQL is back the same service
    reports SERVING and the same request is applied once, no restart."""
    move = await next_move(impatient.target)
    await asyncio.to_thread(impatient.postgres.stop)
    try:
        error = await refused(impatient.target, move, deadline=CALLER_DEADLINE_SECONDS)
        assert error.code() == grpc.StatusCode.UNAVAILABLE, error
        assert error_details(error).reason == "STORE_UNAVAILABLE"
        await health_becomes(impatient.target, NOT_SERVING)
    finally:
        await asyncio.to_thread(impatient.postgres.start)
    await health_becomes(impatient.target, SERVING)
    await settles_once(impatient, move)


NOT_SERVING = health_pb2.HealthCheckResponse.NOT_SERVING
SERVING = health_pb2.HealthCheckResponse.SERVING


async def health_becomes(target: str, status: int) -> None:
    """Wait (bounded by the caller's deadline) until the service reports `status`."""
    async with grpc.aio.insecure_channel(target) as channel:
        health = health_pb2_grpc.HealthStub(channel)
        watch = health.Watch(health_pb2.HealthCheckRequest(service=SERVICE_NAME))
        async with asyncio.timeout(CALLER_DEADLINE_SECONDS):
            while (await watch.read()).status != status:
                pass
        watch.cancel()
