"""GrpcServer end to end: a real grpc.aio server on a free port, real clients, real tokens.

The echo service uses generic handlers with `kozyr.common.v1.Card` as request and
response (no test proto needed). Each method exercises one edge behaviour.
"""

from __future__ import annotations

import asyncio
import gc
import io
import json
import urllib.request
import uuid
from collections.abc import AsyncIterator, Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

import grpc
import pytest
from google.protobuf import descriptor_pb2, descriptor_pool, message_factory
from grpc_health.v1 import health_pb2, health_pb2_grpc
from grpc_reflection.v1alpha import reflection_pb2, reflection_pb2_grpc

from kozyr.api.common.v1 import cards_pb2
from kozyr.runtime.auth import Role, bearer_metadata, current_principal, mint_token
from kozyr.runtime.errors import (
    FailedPrecondition,
    NotFound,
    error_details,
    error_reason,
    from_rpc_error,
)
from kozyr.runtime.interceptors import AuthPolicy, CallInterceptor, Inner, Stage, call_metadata
from kozyr.runtime.logging import configure_logging
from kozyr.runtime.reflection import add_v1_descriptor
from kozyr.runtime.server import GrpcServer, ServiceSpec
from kozyr.runtime.settings import Settings, SettingsError, load_settings

ECHO_SERVICE = "kozyr.testing.v1.EchoService"
JWT_SECRET = "test-secret-that-is-long-enough-for-hs256"
SECRET_DETAIL = "password=hunter2 at /srv/kozyr/internal.py"


def method(name: str) -> str:
    return f"/{ECHO_SERVICE}/{name}"


ECHO_POLICY = AuthPolicy(
    method_roles={method("AdminOnly"): frozenset({Role.ADMIN})},
    public_methods=frozenset({method("Public")}),
)


async def echo(request: cards_pb2.Card, context: Any) -> cards_pb2.Card:
    return cards_pb2.Card(code=request.code)


async def whoami(request: cards_pb2.Card, context: Any) -> cards_pb2.Card:
    principal = current_principal()
    return cards_pb2.Card(code=f"{principal.subject}:{principal.role.value}")


async def fail_typed(request: cards_pb2.Card, context: Any) -> cards_pb2.Card:
    raise NotFound(
        "TABLE_NOT_FOUND",
        {
            "en": f"There is no table {request.code}.",
            "ro": f"Nu există masa {request.code}.",
            "it": f"Non esiste il tavolo {request.code}.",
        },
        metadata={"tableId": request.code},
    )


async def fail_unexpected(request: cards_pb2.Card, context: Any) -> cards_pb2.Card:
    raise RuntimeError(SECRET_DETAIL)


async def count(request: cards_pb2.Card, context: Any) -> AsyncIterator[cards_pb2.Card]:
    """Streams 1..n (n = request.code), then fails with a rule error if asked to."""
    for i in range(1, int(request.code.rstrip("!")) + 1):
        yield cards_pb2.Card(code=str(i))
    if request.code.endswith("!"):
        raise FailedPrecondition("STREAM_ENDED_BADLY", "the stream was asked to fail")


def register_echo(server: grpc.aio.Server) -> None:
    unary = {
        "Echo": echo,
        "Public": echo,
        "Whoami": whoami,
        "AdminOnly": whoami,
        "FailTyped": fail_typed,
        "FailUnexpected": fail_unexpected,
    }
    handlers = {
        name: grpc.unary_unary_rpc_method_handler(
            fn,
            request_deserializer=cards_pb2.Card.FromString,
            response_serializer=cards_pb2.Card.SerializeToString,
        )
        for name, fn in unary.items()
    }
    handlers["Count"] = grpc.unary_stream_rpc_method_handler(
        count,
        request_deserializer=cards_pb2.Card.FromString,
        response_serializer=cards_pb2.Card.SerializeToString,
    )
    server.add_generic_rpc_handlers([grpc.method_handlers_generic_handler(ECHO_SERVICE, handlers)])


ECHO_SPEC = ServiceSpec(ECHO_SERVICE, register_echo)


def echo_settings(**overrides: Any) -> Settings:
    values: dict[str, Any] = {
        "grpc_host": "127.0.0.1",
        "grpc_port": 0,
        "jwt_algorithm": "HS256",
        "jwt_key": JWT_SECRET,
        "shutdown_grace_seconds": 1.0,
        "service_name": "echo-test",
    }
    values.update(overrides)
    return load_settings(**values)


def token(subject: str, role: Role) -> str:
    return mint_token(subject, role, key=JWT_SECRET, algorithm="HS256")


@pytest.fixture(scope="module")
def log_stream() -> Iterator[io.StringIO]:
    """The JSON log lines the module's server writes."""
    stream = io.StringIO()
    configure_logging("DEBUG", "json", service="echo-test", stream=stream)
    yield stream
    configure_logging("INFO", "json")


@pytest.fixture(scope="module")
async def echo_server(log_stream: io.StringIO) -> AsyncIterator[GrpcServer]:
    settings = echo_settings(metrics_port=0, metrics_host="127.0.0.1")
    server = GrpcServer(settings, [ECHO_SPEC], auth=ECHO_POLICY)
    await server.start()
    yield server
    await server.stop(grace=0)


@pytest.fixture(scope="module")
async def channel(echo_server: GrpcServer) -> AsyncIterator[grpc.aio.Channel]:
    async with grpc.aio.insecure_channel(f"127.0.0.1:{echo_server.port}") as chan:
        yield chan


PLAYER = bearer_metadata(token("p-17", Role.PLAYER))
ADMIN = bearer_metadata(token("root", Role.ADMIN))


async def call(
    channel: grpc.aio.Channel, name: str, code: str = "AS", metadata: Any = PLAYER
) -> cards_pb2.Card:
    stub = channel.unary_unary(
        method(name),
        request_serializer=cards_pb2.Card.SerializeToString,
        response_deserializer=cards_pb2.Card.FromString,
    )
    response: cards_pb2.Card = await stub(cards_pb2.Card(code=code), metadata=metadata)
    return response


async def failed_call(
    channel: grpc.aio.Channel, name: str, code: str = "AS", metadata: Any = PLAYER
) -> grpc.aio.AioRpcError:
    with pytest.raises(grpc.aio.AioRpcError) as caught:
        await call(channel, name, code, metadata)
    return caught.value


# --------------------------------------------------------------------------- health, reflection


async def test_health_reports_serving_for_the_server_and_each_service(
    channel: grpc.aio.Channel,
) -> None:
    health = health_pb2_grpc.HealthStub(channel)
    for service in ("", ECHO_SERVICE):
        response = await health.Check(health_pb2.HealthCheckRequest(service=service))
        assert response.status == health_pb2.HealthCheckResponse.SERVING


async def test_health_of_an_unknown_service_is_not_found(channel: grpc.aio.Channel) -> None:
    health = health_pb2_grpc.HealthStub(channel)
    with pytest.raises(grpc.aio.AioRpcError) as caught:
        await health.Check(health_pb2.HealthCheckRequest(service="no.such.Service"))
    assert caught.value.code() == grpc.StatusCode.NOT_FOUND


async def test_set_serving_flips_a_service_health(
    echo_server: GrpcServer, channel: grpc.aio.Channel
) -> None:
    health = health_pb2_grpc.HealthStub(channel)
    request = health_pb2.HealthCheckRequest(service=ECHO_SERVICE)
    await echo_server.set_serving(ECHO_SERVICE, False)
    try:
        assert (await health.Check(request)).status == health_pb2.HealthCheckResponse.NOT_SERVING
    finally:
        await echo_server.set_serving(ECHO_SERVICE, True)
    assert (await health.Check(request)).status == health_pb2.HealthCheckResponse.SERVING


async def test_reflection_lists_the_hosted_services(channel: grpc.aio.Channel) -> None:
    stub = reflection_pb2_grpc.ServerReflectionStub(channel)
    request = reflection_pb2.ServerReflectionRequest(list_services="")
    names = set()
    async for response in stub.ServerReflectionInfo(iter([request])):
        names |= {s.name for s in response.list_services_response.service}
    assert names >= {
        ECHO_SERVICE,
        "grpc.health.v1.Health",
        "grpc.reflection.v1alpha.ServerReflection",
    }


def _v1_reflection_classes() -> tuple[Any, Any]:
    """grpc.reflection.v1's request and response classes, from the v1 descriptor the
    server publishes (not the v1alpha classes the server decodes them with)."""
    pool = descriptor_pool.Default()
    add_v1_descriptor(pool)
    request = message_factory.GetMessageClass(
        pool.FindMessageTypeByName("grpc.reflection.v1.ServerReflectionRequest")
    )
    response = message_factory.GetMessageClass(
        pool.FindMessageTypeByName("grpc.reflection.v1.ServerReflectionResponse")
    )
    return request, response


async def test_reflection_v1_answers_over_the_socket(channel: grpc.aio.Channel) -> None:
    request_class, response_class = _v1_reflection_classes()
    call = channel.stream_stream(
        "/grpc.reflection.v1.ServerReflection/ServerReflectionInfo",
        request_serializer=lambda m: m.SerializeToString(),
        response_deserializer=response_class.FromString,
    )
    asks = [
        request_class(list_services=""),
        request_class(file_containing_symbol="grpc.health.v1.Health"),
        request_class(file_containing_symbol="grpc.reflection.v1.ServerReflection"),
        request_class(file_containing_symbol="no.such.Symbol"),
    ]
    answers = [answer async for answer in call(iter(asks))]
    assert {s.name for s in answers[0].list_services_response.service} >= {
        ECHO_SERVICE,
        "grpc.health.v1.Health",
        "grpc.reflection.v1.ServerReflection",
        "grpc.reflection.v1alpha.ServerReflection",
    }
    for answer, package in zip(answers[1:3], ("grpc.health.v1", "grpc.reflection.v1"), strict=True):
        [raw] = answer.file_descriptor_response.file_descriptor_proto
        assert descriptor_pb2.FileDescriptorProto.FromString(raw).package == package
    assert answers[3].error_response.error_code == grpc.StatusCode.NOT_FOUND.value[0]


# --------------------------------------------------------------------------- authentication


async def test_a_valid_token_reaches_the_handler_as_the_principal(
    channel: grpc.aio.Channel,
) -> None:
    assert (await call(channel, "Whoami")).code == "p-17:player"


async def test_a_call_without_token_is_unauthenticated(channel: grpc.aio.Channel) -> None:
    error = await failed_call(channel, "Echo", metadata=())
    assert error.code() == grpc.StatusCode.UNAUTHENTICATED
    assert error_reason(error) == "TOKEN_MISSING"


@pytest.mark.parametrize(
    "authorization",
    ["Bearer not-a-jwt", "Basic dXNlcjpwYXNz", "Bearer "],
)
async def test_a_malformed_token_is_unauthenticated(
    channel: grpc.aio.Channel, authorization: str
) -> None:
    error = await failed_call(channel, "Echo", metadata=(("authorization", authorization),))
    assert error.code() == grpc.StatusCode.UNAUTHENTICATED
    assert error_reason(error) == "TOKEN_INVALID"


async def test_a_token_signed_with_another_key_is_unauthenticated(
    channel: grpc.aio.Channel,
) -> None:
    forged = mint_token("p-17", Role.ADMIN, key="another-secret-" + "x" * 32)
    error = await failed_call(channel, "Echo", metadata=bearer_metadata(forged))
    assert error.code() == grpc.StatusCode.UNAUTHENTICATED
    assert error_reason(error) == "TOKEN_INVALID"


async def test_an_expired_token_is_unauthenticated(channel: grpc.aio.Channel) -> None:
    old = mint_token(
        "p-17",
        Role.PLAYER,
        key=JWT_SECRET,
        ttl=timedelta(minutes=5),
        now=datetime.now(UTC) - timedelta(hours=1),
    )
    error = await failed_call(channel, "Echo", metadata=bearer_metadata(old))
    assert error.code() == grpc.StatusCode.UNAUTHENTICATED
    assert error_reason(error) == "TOKEN_EXPIRED"


async def test_keys_rotate_without_downtime() -> None:
    """A server during rotation accepts tokens of the old key and of the new one; after
    it, the old key's tokens are refused — over real gRPC, settings as in production."""
    new_secret = "the-next-secret-of-at-least-32-bytes"
    old_token = mint_token("p-1", Role.PLAYER, key=JWT_SECRET, key_id="2026-10")
    new_token = mint_token("p-2", Role.PLAYER, key=new_secret, key_id="2026-11")
    during = echo_settings(
        jwt_key=new_secret,
        jwt_key_id="2026-11",
        jwt_previous_keys=f'{{"2026-10": "{JWT_SECRET}"}}',
    )
    after = echo_settings(jwt_key=new_secret, jwt_key_id="2026-11")
    for settings, old_accepted in ((during, True), (after, False)):
        server = GrpcServer(settings, [ECHO_SPEC], auth=ECHO_POLICY)
        await server.start()
        try:
            async with grpc.aio.insecure_channel(f"127.0.0.1:{server.port}") as chan:
                assert (await call(chan, "Echo", metadata=bearer_metadata(new_token))).code
                if old_accepted:
                    assert await call(chan, "Echo", metadata=bearer_metadata(old_token))
                else:
                    error = await failed_call(chan, "Echo", metadata=bearer_metadata(old_token))
                    assert error.code() == grpc.StatusCode.UNAUTHENTICATED
                    assert error_reason(error) == "TOKEN_INVALID"
        finally:
            await server.stop(grace=0)


async def test_a_role_outside_the_method_policy_is_permission_denied(
    channel: grpc.aio.Channel,
) -> None:
    error = await failed_call(channel, "AdminOnly")
    assert error.code() == grpc.StatusCode.PERMISSION_DENIED
    details = error_details(error)
    assert details.reason == "ROLE_NOT_ALLOWED"
    assert details.metadata["role"] == "player"
    assert (await call(channel, "AdminOnly", metadata=ADMIN)).code == "root:admin"


async def test_a_public_method_needs_no_token(channel: grpc.aio.Channel) -> None:
    assert (await call(channel, "Public", code="10H", metadata=())).code == "10H"


def test_a_server_with_protected_methods_needs_a_jwt_key() -> None:
    with pytest.raises(SettingsError) as caught:
        GrpcServer(echo_settings(jwt_key=None), [ECHO_SPEC], auth=ECHO_POLICY)
    assert caught.value.variables == ["KOZYR_JWT_KEY"]


# --------------------------------------------------------------------------- error mapping


async def test_a_typed_error_arrives_with_its_code_reason_and_localised_messages(
    channel: grpc.aio.Channel,
) -> None:
    metadata = call_metadata(token=token("p-17", Role.PLAYER), language="ro-RO")
    error = await failed_call(channel, "FailTyped", code="t-9", metadata=metadata)
    assert error.code() == grpc.StatusCode.NOT_FOUND
    assert error.details() == "There is no table t-9."
    details = error_details(error)
    assert (details.reason, details.domain) == ("TABLE_NOT_FOUND", "kozyr.io")
    assert details.metadata == {"tableId": "t-9"}
    assert list(details.messages) == ["ro", "en", "it"]
    assert details.messages["it"] == "Non esiste il tavolo t-9."


async def test_the_client_rebuilds_the_typed_error(channel: grpc.aio.Channel) -> None:
    error = from_rpc_error(await failed_call(channel, "FailTyped", code="t-1"))
    assert isinstance(error, NotFound)
    assert error.reason == "TABLE_NOT_FOUND"
    assert error.message_in("ro") == "Nu există masa t-1."


async def test_an_unexpected_exception_is_internal_and_leaks_nothing(
    channel: grpc.aio.Channel, log_stream: io.StringIO
) -> None:
    error = await failed_call(channel, "FailUnexpected")
    assert error.code() == grpc.StatusCode.INTERNAL
    assert error_reason(error) == "INTERNAL"
    everything_sent = repr(error.details()) + repr(error.trailing_metadata())
    assert "hunter2" not in everything_sent
    assert "RuntimeError" not in everything_sent
    assert SECRET_DETAIL in log_stream.getvalue(), "the traceback belongs in the server log"


async def test_a_server_stream_delivers_its_messages(channel: grpc.aio.Channel) -> None:
    stream = channel.unary_stream(
        method("Count"),
        request_serializer=cards_pb2.Card.SerializeToString,
        response_deserializer=cards_pb2.Card.FromString,
    )
    received = [m.code async for m in stream(cards_pb2.Card(code="3"), metadata=PLAYER)]
    assert received == ["1", "2", "3"]


async def test_a_typed_error_ends_a_server_stream_with_its_status(
    channel: grpc.aio.Channel,
) -> None:
    stream = channel.unary_stream(
        method("Count"),
        request_serializer=cards_pb2.Card.SerializeToString,
        response_deserializer=cards_pb2.Card.FromString,
    )
    received: list[str] = []

    async def consume() -> None:
        async for message in stream(cards_pb2.Card(code="2!"), metadata=PLAYER):
            received.append(message.code)

    with pytest.raises(grpc.aio.AioRpcError) as caught:
        await consume()
    assert received == ["1", "2"]
    assert caught.value.code() == grpc.StatusCode.FAILED_PRECONDITION
    assert error_reason(caught.value) == "STREAM_ENDED_BADLY"


async def test_a_streaming_call_without_token_is_unauthenticated(
    channel: grpc.aio.Channel,
) -> None:
    stream = channel.unary_stream(
        method("Count"),
        request_serializer=cards_pb2.Card.SerializeToString,
        response_deserializer=cards_pb2.Card.FromString,
    )
    with pytest.raises(grpc.aio.AioRpcError) as caught:
        async for _ in stream(cards_pb2.Card(code="2")):
            pass
    assert caught.value.code() == grpc.StatusCode.UNAUTHENTICATED


# --------------------------------------------------------------------------- observability


def _log_lines(stream: io.StringIO) -> list[dict[str, Any]]:
    return [json.loads(line) for line in stream.getvalue().splitlines() if line.startswith("{")]


async def _lines_of(stream: io.StringIO, request_id: str) -> list[dict[str, Any]]:
    """The call's log lines, once written. `context.abort` sends the status before it
    raises, so the caller can hold its error before the call's line is written (the
    logging stage writes it as the abort unwinds): wait for it rather than read at once
    (seen in CI: no line yet)."""
    async with asyncio.timeout(10):
        while True:
            lines = [x for x in _log_lines(stream) if x.get("request_id") == request_id]
            if lines:
                return lines
            await asyncio.sleep(0.01)


async def test_each_call_writes_one_json_line_with_its_request_id(
    channel: grpc.aio.Channel, log_stream: io.StringIO
) -> None:
    request_id = uuid.uuid4().hex
    metadata = call_metadata(token=token("p-17", Role.PLAYER), request_id=request_id)
    await failed_call(channel, "FailTyped", metadata=metadata)
    lines = await _lines_of(log_stream, request_id)
    assert len(lines) == 1
    line = lines[0]
    assert line["event"] == "grpc call"
    assert line["method"] == method("FailTyped")
    assert line["code"] == "NOT_FOUND"
    assert line["reason"] == "TABLE_NOT_FOUND"
    assert line["caller"] == "p-17"
    assert line["service"] == "echo-test"
    assert isinstance(line["duration_ms"], float)


async def test_metrics_count_calls_by_method_and_code(
    echo_server: GrpcServer, channel: grpc.aio.Channel
) -> None:
    await call(channel, "Echo")
    assert echo_server.metrics_port is not None
    url = f"http://127.0.0.1:{echo_server.metrics_port}/metrics"
    body = await asyncio.to_thread(lambda: urllib.request.urlopen(url, timeout=10).read().decode())
    expected = (
        'kozyr_grpc_server_handled_total{grpc_code="OK",grpc_method="Echo",'
        f'grpc_service="{ECHO_SERVICE}"}}'
    )
    assert expected in body


async def test_metrics_time_each_garbage_collection_by_generation(
    echo_server: GrpcServer,
) -> None:
    """A service's /metrics shows how long each collection stopped it (a latency tail that
    no queue explains is read there): a full collection adds one to generation 2's count."""
    assert echo_server.metrics_port is not None
    url = f"http://127.0.0.1:{echo_server.metrics_port}/metrics"

    async def full_collections() -> float:
        body = await asyncio.to_thread(
            lambda: urllib.request.urlopen(url, timeout=10).read().decode()
        )
        counts = [
            float(line.rpartition(" ")[2])
            for line in body.splitlines()
            if line.startswith('kozyr_gc_pause_seconds_count{generation="2"}')
        ]
        assert len(counts) == 1, body
        return counts[0]

    gc.disable()  # no automatic collection in between: the count is exact
    try:
        before = await full_collections()
        gc.collect(2)
        gc.collect(2)
        assert await full_collections() == before + 2
    finally:
        gc.enable()


# --------------------------------------------------------------------------- the edge


class Recording(CallInterceptor):
    """A service's own stage: notes which methods it was asked about and which calls it
    saw, with the principal the auth stage (outside it) had already established."""

    def __init__(self) -> None:
        self.asked: list[str] = []
        self.seen: list[tuple[str, str]] = []

    def stage_for(self, method: str, handler: Any) -> Stage | None:
        self.asked.append(method)
        return self.stage

    async def stage(self, inner: Inner, method: str, request: Any, context: Any) -> Any:
        self.seen.append((method.rpartition("/")[2], current_principal().subject))
        return await inner(request, context)


async def test_the_edge_composes_each_method_once_with_a_services_stage_innermost() -> None:
    recording = Recording()
    server = GrpcServer(echo_settings(), [ECHO_SPEC], auth=ECHO_POLICY, interceptors=[recording])
    await server.start()
    try:
        async with grpc.aio.insecure_channel(f"127.0.0.1:{server.port}") as chan:
            for _ in range(3):
                assert (await call(chan, "Echo", "7H")).code == "7H"
            assert (await call(chan, "Whoami")).code == "p-17:player"
            refused = await failed_call(chan, "Echo", metadata=())
            assert refused.code() == grpc.StatusCode.UNAUTHENTICATED
    finally:
        await server.stop(grace=0)
    assert recording.asked == [method("Echo"), method("Whoami")]
    # Inside auth: the refused call never reached it, the others carried their caller.
    assert recording.seen == [("Echo", "p-17")] * 3 + [("Whoami", "p-17")]
