"""The table service's edge facing operators and odd clients: an unmigrated database,
an unusable `x-request-id`. Real PostgreSQL, NATS and gRPC over a socket."""

from __future__ import annotations

import asyncio
import re
import uuid

import grpc
import pytest
from grpc_health.v1 import health_pb2, health_pb2_grpc

from kozyr.api.common.v1 import games_pb2
from kozyr.api.table.v1 import table_service_pb2 as pb
from kozyr.api.table.v1 import table_service_pb2_grpc as pb_grpc
from kozyr.eventstore import migrate
from kozyr.runtime.auth import Role
from kozyr.runtime.errors import error_details
from kozyr.runtime.interceptors import REQUEST_ID_KEY, call_metadata
from kozyr.table.adapters.repository import stream_of
from kozyr.table.service import SERVICE_NAME, TableService
from tests.integration.table.conftest import (
    RunningTableService,
    running_table_service,
    table_settings,
)
from tests.support.tables import token

pytestmark = pytest.mark.integration

PLAYERS = ["ana", "bogdan", "chiara"]
NOT_SERVING = health_pb2.HealthCheckResponse.NOT_SERVING
SERVING = health_pb2.HealthCheckResponse.SERVING
WAIT_SECONDS = 60.0
"""Only a bound on a hang: the health stream is read, not timed."""
NEARLY_16_KIB = 15 * 1024
"""gRPC refuses call metadata past 16 KiB, and past 8 KiB at random (more often the
larger it is): an x-request-id this long gets through on some attempts."""
ATTEMPTS = 300


async def _unavailable_because_unmigrated(call: object) -> None:
    with pytest.raises(grpc.aio.AioRpcError) as caught:
        await call  # type: ignore[misc]
    assert caught.value.code() == grpc.StatusCode.UNAVAILABLE, caught.value.details()
    assert error_details(caught.value).reason == "SCHEMA_NOT_MIGRATED"


async def test_an_unmigrated_database_is_not_serving_until_it_is_migrated(
    database_url: str, nats_url: str, subject_root: str
) -> None:
    # A fresh, empty database: the migration has not run.
    settings = table_settings(database_url, nats_url, subject_root)
    service = TableService(settings)
    service.schema.interval = 0.05
    port = await service.start()
    target = f"127.0.0.1:{port}"
    channel = grpc.aio.insecure_channel(target)
    try:
        health = health_pb2_grpc.HealthStub(channel)
        for name in ("", SERVICE_NAME):
            answer = await health.Check(health_pb2.HealthCheckRequest(service=name))
            assert answer.status == NOT_SERVING, name or "the whole server"
        # A bare stub: the SDK would retry UNAVAILABLE (rightly) and hide the answer.
        stub = pb_grpc.TableServiceStub(channel)
        await _unavailable_because_unmigrated(
            stub.GetTable(
                pb.GetTableRequest(table_id=str(uuid.uuid4())),
                metadata=call_metadata(token=token("ana")),
            )
        )
        await _unavailable_because_unmigrated(
            stub.CreateTable(_new_table_request(), metadata=_matchmaker())
        )
        watch = health.Watch(health_pb2.HealthCheckRequest(service=SERVICE_NAME))
        async with asyncio.timeout(WAIT_SECONDS):
            assert (await watch.read()).status == NOT_SERVING
            await migrate(database_url)
            assert (await watch.read()).status == SERVING
        watch.cancel()
        created = await stub.CreateTable(_new_table_request(), metadata=_matchmaker())
        overall = await health.Check(health_pb2.HealthCheckRequest(service=""))
        assert overall.status == SERVING
        assert created.version >= 1
    finally:
        await channel.close()
        await service.stop(0)


def _new_table_request() -> pb.CreateTableRequest:
    return pb.CreateTableRequest(
        request_id=str(uuid.uuid4()),
        game=games_pb2.GAME_THREE_FIVE_EIGHT,
        seats=[pb.SeatAssignment(player_id=p) for p in PLAYERS],
    )


def _matchmaker(request_id: str | None = None) -> tuple[tuple[str, str], ...]:
    return call_metadata(token=token("matchmaker", Role.SERVICE), request_id=request_id)


Created = tuple[pb.CreateTableResponse, dict[str, str]]


async def _create_on(channel: grpc.aio.Channel, request_id: str) -> Created:
    """CreateTable with this `x-request-id`; the reply and its response headers."""
    call = pb_grpc.TableServiceStub(channel).CreateTable(
        _new_table_request(), metadata=_matchmaker(request_id)
    )
    reply = await call
    headers = {k: v for k, v in await call.initial_metadata() if isinstance(v, str)}
    return reply, headers


async def _create_with_request_id(target: str, request_id: str) -> Created:
    async with grpc.aio.insecure_channel(target) as channel:
        return await _create_on(channel, request_id)


async def _create_past_the_size_check(target: str, request_id: str) -> Created:
    """Like `_create_with_request_id`, retried while the transport refuses the metadata
    before any handler runs (nothing is written then)."""
    async with grpc.aio.insecure_channel(target) as channel:
        for _ in range(ATTEMPTS):
            try:
                return await _create_on(channel, request_id)
            except grpc.aio.AioRpcError as error:
                refused_by_transport = error.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
                if not refused_by_transport or "metadata" not in (error.details() or ""):
                    raise
    raise AssertionError(f"gRPC refused a {len(request_id)}-byte header {ATTEMPTS} times")


async def _correlation_ids(running: RunningTableService, table_id: str) -> set[str]:
    events = await running.service.store.read(stream_of(table_id))
    assert events
    return {event.metadata["correlation_id"] for event in events}


@pytest.mark.parametrize(
    "unusable",
    ["r" * 7_000, "x" * 129, "has spaces in it", ""],
    ids=["7000", "129", "spaces", "empty"],
)
async def test_an_unusable_x_request_id_is_replaced_and_said_so(
    table_service: RunningTableService, unusable: str
) -> None:
    """It would be stored in every event the call appends and every log line."""
    reply, headers = await _create_with_request_id(table_service.target, unusable)
    used = headers[REQUEST_ID_KEY]
    assert used != unusable
    assert re.fullmatch(r"[\x21-\x7e]{1,128}", used), used
    assert await _correlation_ids(table_service, reply.table_id) == {used}


async def test_a_usable_x_request_id_is_the_correlation_id(
    table_service: RunningTableService,
) -> None:
    given = "x" * 128
    reply, headers = await _create_with_request_id(table_service.target, given)
    assert REQUEST_ID_KEY not in headers, "nothing to announce: the caller's id is kept"
    assert await _correlation_ids(table_service, reply.table_id) == {given}


async def test_a_nearly_16_kib_x_request_id_never_reaches_the_events(
    table_service: RunningTableService,
) -> None:
    huge = "r" * NEARLY_16_KIB
    reply, headers = await _create_past_the_size_check(table_service.target, huge)
    used = headers[REQUEST_ID_KEY]
    assert len(used) <= 128
    assert await _correlation_ids(table_service, reply.table_id) == {used}


async def test_a_stopping_service_ends_every_watch_stream_with_ok(
    database_url: str, nats_url: str, subject_root: str
) -> None:
    """Watchers wait on their table's wake-up only; stopping wakes them all, and each
    stream ends cleanly (OK after its view), not cancelled when the grace runs out."""
    async with (
        running_table_service(
            database_url, nats_url, subject_root, shutdown_grace_seconds=30
        ) as running,
        grpc.aio.insecure_channel(running.target) as channel,
    ):
        stub = pb_grpc.TableServiceStub(channel)
        created = await stub.CreateTable(_new_table_request(), metadata=_matchmaker())
        watches = [
            stub.WatchTable(
                pb.WatchTableRequest(table_id=created.table_id),
                metadata=call_metadata(token=token(player)),
            )
            for player in PLAYERS
        ]
        for watch in watches:
            assert (await watch.read()).view.version == created.version
        await running.service.stop()  # a watch still open when the grace ends is CANCELLED
        for watch in watches:
            assert await watch.read() is grpc.aio.EOF
            assert await watch.code() == grpc.StatusCode.OK
