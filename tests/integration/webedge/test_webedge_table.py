"""The web edge in front of a real table service (real PostgreSQL, NATS, gRPC), driven
over real HTTP by a gRPC-Web client written from the protocol (tests/support/grpc_web).
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import random
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from typing import Any

import aiohttp
import grpc
import pytest
from prometheus_client import REGISTRY

from kozyr.api.common.v1 import games_pb2
from kozyr.api.table.v1 import table_service_pb2 as pb
from kozyr.client import TableClient
from kozyr.runtime.auth import Role
from kozyr.runtime.errors import error_details
from kozyr.webedge.service import WebEdge
from kozyr.webedge.settings import WebEdgeSettings
from tests.integration.table.conftest import RunningTableService
from tests.support import grpc_web
from tests.support.grpc_web import FrameReader, headers, request_body
from tests.support.tables import token

pytestmark = pytest.mark.integration

PLAYERS = ["ana", "bogdan", "chiara"]
ORIGIN = "https://play.example"
DEV_ORIGINS = "http://127.0.0.1:*"
TABLE = "kozyr.table.v1.TableService"
WAIT_SECONDS = 20.0
"""Only a bound on a hang: every wait below is for a condition."""


@dataclass
class Edge:
    edge: WebEdge
    url: str
    session: aiohttp.ClientSession
    table: RunningTableService

    async def call(self, method: str, message: Any, head: dict[str, str]) -> grpc_web.Answer:
        return await grpc_web.call(self.session, self.url, f"{TABLE}/{method}", message, head)


@contextlib.asynccontextmanager
async def running_edge(table: RunningTableService, **overrides: Any) -> AsyncIterator[Edge]:
    settings = WebEdgeSettings.load(
        **{
            "table_target": table.target,
            "webedge_host": "127.0.0.1",
            "webedge_port": 0,
            "webedge_allowed_origins": f"{ORIGIN},{DEV_ORIGINS}",
            "shutdown_grace_seconds": 1,
            "log_level": "WARNING",
            **overrides,
        }
    )
    edge = WebEdge(settings)
    port = await edge.start()
    try:
        async with aiohttp.ClientSession() as session:
            yield Edge(edge, f"http://127.0.0.1:{port}", session, table)
    finally:
        await edge.stop()


@pytest.fixture
async def edge(table_service: RunningTableService) -> AsyncIterator[Edge]:
    async with running_edge(table_service) as running:
        yield running


async def _new_table(target: str) -> str:
    async with TableClient(target, token("matchmaker", Role.SERVICE)) as service:
        created = await service.create_table(games_pb2.GAME_THREE_FIVE_EIGHT, PLAYERS)
        return created.table_id


async def _view(edge: Edge, table_id: str, player: str) -> Any:
    answer = await edge.call(
        "GetTable", pb.GetTableRequest(table_id=table_id), headers(token(player))
    )
    assert answer.code == 0, answer.message
    return answer.parsed(pb.GetTableResponse).view


async def _mover(edge: Edge, table_id: str) -> tuple[str, Any]:
    """The player whose turn it is, and his view."""
    view = await _view(edge, table_id, PLAYERS[0])
    player = PLAYERS[view.turn.seats[0]]
    return player, await _view(edge, table_id, player)


async def _until(condition: Callable[[], bool]) -> None:
    """Wait for a condition another task or process makes true (bounded): polled, as
    no event tells a test when a server has let a call go."""
    async with asyncio.timeout(WAIT_SECONDS):
        while not condition():  # noqa: ASYNC110
            await asyncio.sleep(0.01)


# ------------------------------------------------------------------ unary calls


async def test_a_unary_call_goes_through_and_answers_as_grpc_does(edge: Edge) -> None:
    table_id = await _new_table(edge.table.target)
    answer = await edge.call(
        "GetTable",
        pb.GetTableRequest(table_id=table_id),
        headers(token("bogdan"), x_request_id="r" * 129),  # too long: the service replaces it
    )
    assert answer.http_status == 200
    assert answer.headers["Content-Type"] == grpc_web.CONTENT_TYPE
    assert answer.code == 0
    assert answer.trailers["grpc-message"] == ""
    replaced = answer.headers["x-request-id"]  # the service's initial metadata reaches the page
    assert replaced
    assert replaced != "r" * 129
    assert len(answer.messages) == 1
    through_edge = answer.parsed(pb.GetTableResponse).view
    async with TableClient(edge.table.target, token("bogdan")) as direct:
        assert through_edge == await direct.get_table(table_id)
    assert through_edge.seat == 1, "the caller's token reached the service: his seat's view"


async def test_grpc_web_text_is_base64_both_ways(edge: Edge) -> None:
    table_id = await _new_table(edge.table.target)
    answer = await edge.call(
        "GetTable", pb.GetTableRequest(table_id=table_id), headers(token("chiara"), text=True)
    )
    assert answer.headers["Content-Type"] == grpc_web.TEXT_CONTENT_TYPE
    assert answer.code == 0, answer.message
    assert answer.parsed(pb.GetTableResponse).view.seat == 2


async def test_a_refusal_carries_its_status_and_localized_details(edge: Edge) -> None:
    table_id = await _new_table(edge.table.target)
    player, view = await _mover(edge, table_id)
    stale = pb.SubmitActionRequest(
        table_id=table_id,
        request_id="web-stale-1",
        action=view.legal_actions[0],
        expected_version=view.version - 1,
    )
    answer = await edge.call("SubmitAction", stale, headers(token(player), accept_language="ro"))
    async with TableClient(edge.table.target, token(player), language="ro") as direct:
        stale.request_id = "direct-stale-1"
        with pytest.raises(grpc.aio.AioRpcError) as caught:
            await direct.stub.SubmitAction(stale, metadata=direct.metadata)
    expected = error_details(caught.value)
    assert answer.http_status == 200
    assert answer.code == expected.code.value[0] == grpc.StatusCode.ABORTED.value[0]
    assert answer.message == expected.message
    refusal = answer.refusal()
    assert refusal.reason == expected.reason == "STALE_VERSION"
    assert next(iter(refusal.messages)) == "ro", "the caller's language first"
    assert refusal.messages == dict(expected.messages)
    assert refusal.messages["ro"] != refusal.messages["en"]


async def test_a_missing_or_bad_token_is_refused_as_grpc_refuses_it(edge: Edge) -> None:
    table_id = await _new_table(edge.table.target)
    request = pb.GetTableRequest(table_id=table_id)
    forged = token("ana")[:-4] + "AAAA"
    for given in (None, forged):
        answer = await edge.call("GetTable", request, headers(given, accept_language="it"))
        async with TableClient(edge.table.target, given, language="it") as direct:
            with pytest.raises(grpc.aio.AioRpcError) as caught:
                await direct.stub.GetTable(request, metadata=direct.metadata)
        expected = error_details(caught.value)
        assert answer.code == grpc.StatusCode.UNAUTHENTICATED.value[0] == expected.code.value[0]
        assert answer.messages == [], "nothing of the table reaches an unknown caller"
        assert answer.refusal().reason == expected.reason
        assert answer.refusal().messages == dict(expected.messages)


async def test_unknown_services_and_methods_are_unimplemented(edge: Edge) -> None:
    empty = b""
    for path in (
        "kozyr.nothing.v1.NoService/Get",
        "grpc.reflection.v1alpha.ServerReflection/ServerReflectionInfo",
        "kozyr.matchmaking.v1.MatchmakingService/EnterQueue",  # no target given here
        "not a path",
    ):
        answer = await grpc_web.call(edge.session, edge.url, path, empty, headers(token("ana")))
        assert answer.http_status == 200, path
        assert answer.code == grpc.StatusCode.UNIMPLEMENTED.value[0], path
        assert answer.refusal().reason == "UNKNOWN_SERVICE", path
    answer = await edge.call("NoSuchMethod", empty, headers(token("ana")))
    assert answer.code == grpc.StatusCode.UNIMPLEMENTED.value[0], "the service's own answer"


# ------------------------------------------------------------------ bad input


BAD_BODIES = {
    "empty": b"",
    "short prefix": b"\x00\x00\x00",
    "length past the end": b"\x00\x00\x00\x00\x10abc",
    "bytes after the message": request_body(b"\x0a\x01x") + b"\x00",
    "two messages": request_body(b"") + request_body(b""),
    "compressed": b"\x01" + request_body(b"")[1:],
    "trailer frame": b"\x80\x00\x00\x00\x00",
}


async def test_bad_framing_is_refused_clearly_and_changes_nothing(edge: Edge) -> None:
    table_id = await _new_table(edge.table.target)
    player, view = await _mover(edge, table_id)
    move = pb.SubmitActionRequest(
        table_id=table_id, request_id="web-bad-1", action=view.legal_actions[0]
    )
    good = request_body(move)
    for name, body in {
        **BAD_BODIES,
        "good frame, wrong length": good[:4] + b"\x00" + good[5:],
    }.items():
        async with edge.session.post(
            f"{edge.url}/{TABLE}/SubmitAction",
            data=body,
            headers=headers(token(player), accept_language="ro"),
        ) as response:
            answer = await grpc_web.read_answer(response)
        assert answer.code == grpc.StatusCode.INVALID_ARGUMENT.value[0], name
        refusal = answer.refusal()
        assert refusal.reason == "BAD_GRPC_WEB_FRAME", name
        assert next(iter(refusal.messages)) == "ro", name
    text = headers(token(player), text=True)
    async with edge.session.post(
        f"{edge.url}/{TABLE}/SubmitAction", data=b"not base64!", headers=text
    ) as response:
        assert (await grpc_web.read_answer(response)).refusal().reason == "BAD_GRPC_WEB_FRAME"
    assert (await _view(edge, table_id, player)).version == view.version, "nothing was played"


async def test_what_is_not_grpc_web_is_refused_by_http(edge: Edge) -> None:
    table_id = await _new_table(edge.table.target)
    body = request_body(pb.GetTableRequest(table_id=table_id))
    for content_type in ("application/json", "application/grpc", "application/grpc-web+json"):
        async with edge.session.post(
            f"{edge.url}/{TABLE}/GetTable",
            data=body,
            headers={**headers(token("ana")), "content-type": content_type},
        ) as response:
            assert response.status == 415, content_type
            assert "Access-Control-Allow-Origin" not in response.headers
    async with edge.session.post(
        f"{edge.url}/{TABLE}/GetTable",
        data=body,
        headers={**headers(token("ana")), "content-type": "text/plain", "Origin": ORIGIN},
    ) as response:
        assert response.status == 415
        assert response.headers["Access-Control-Allow-Origin"] == ORIGIN, "the page may read it"
    async with edge.session.get(f"{edge.url}/{TABLE}/GetTable") as response:
        assert response.status == 405


async def test_bad_headers_and_timeouts_are_refused(edge: Edge) -> None:
    table_id = await _new_table(edge.table.target)
    request = pb.GetTableRequest(table_id=table_id)
    for extra, reason in (
        ({"grpc-timeout": "soon"}, "BAD_HEADER"),
        ({"grpc-timeout": "123456789S"}, "BAD_HEADER"),
        ({"x-trace-bin": "***"}, "BAD_HEADER"),
    ):
        answer = await edge.call("GetTable", request, {**headers(token("ana")), **extra})
        assert answer.code == grpc.StatusCode.INVALID_ARGUMENT.value[0], extra
        assert answer.refusal().reason == reason, extra


async def test_a_message_past_the_limit_is_refused(edge: Edge) -> None:
    huge = pb.GetTableRequest(table_id="x" * (4 * 1024 * 1024 + 1))
    answer = await edge.call("GetTable", huge, headers(token("ana")))
    assert answer.code == grpc.StatusCode.RESOURCE_EXHAUSTED.value[0]
    assert answer.refusal().reason == "MESSAGE_TOO_LARGE"


# ------------------------------------------------------------------ CORS


async def test_an_allowed_origin_gets_its_preflight_and_may_read_the_status(edge: Edge) -> None:
    for origin in (ORIGIN, "http://127.0.0.1:5173"):
        async with edge.session.options(
            f"{edge.url}/{TABLE}/WatchTable",
            headers={
                "Origin": origin,
                "Access-Control-Request-Method": "POST",
                "Access-Control-Request-Headers": "authorization,content-type,x-grpc-web",
            },
        ) as response:
            assert response.status == 204, origin
            assert response.headers["Access-Control-Allow-Origin"] == origin
            assert "POST" in response.headers["Access-Control-Allow-Methods"]
            allowed = {
                h.strip() for h in response.headers["Access-Control-Allow-Headers"].split(",")
            }
            assert {"authorization", "content-type", "x-grpc-web", "grpc-timeout",
                    "accept-language", "x-request-id", "x-user-agent"} <= allowed  # fmt: skip
            assert "Access-Control-Allow-Credentials" not in response.headers
    table_id = await _new_table(edge.table.target)
    answer = await edge.call(
        "GetTable",
        pb.GetTableRequest(table_id=table_id),
        {**headers(token("ana")), "Origin": ORIGIN},
    )
    assert answer.code == 0
    assert answer.headers["Access-Control-Allow-Origin"] == ORIGIN
    exposed = {h.strip() for h in answer.headers["Access-Control-Expose-Headers"].split(",")}
    assert {"grpc-status", "grpc-message", "grpc-status-details-bin"} <= exposed


async def test_a_foreign_origin_is_refused_and_changes_nothing(edge: Edge) -> None:
    table_id = await _new_table(edge.table.target)
    player, view = await _mover(edge, table_id)
    for foreign in ("https://evil.example", "https://play.example.evil", "http://localhost:5173"):
        async with edge.session.options(
            f"{edge.url}/{TABLE}/SubmitAction",
            headers={"Origin": foreign, "Access-Control-Request-Method": "POST"},
        ) as response:
            assert response.status == 403, foreign
            assert "Access-Control-Allow-Origin" not in response.headers
        move = pb.SubmitActionRequest(
            table_id=table_id, request_id=f"web-foreign-{foreign}", action=view.legal_actions[0]
        )
        async with edge.session.post(
            f"{edge.url}/{TABLE}/SubmitAction",
            data=request_body(move),
            headers={**headers(token(player)), "Origin": foreign},
        ) as response:
            assert response.status == 403, foreign
            assert "Access-Control-Allow-Origin" not in response.headers
    assert (await _view(edge, table_id, player)).version == view.version, "nothing was played"


# ------------------------------------------------------------------ streams


@contextlib.asynccontextmanager
async def watching(
    edge: Edge, table_id: str, player: str, *, grpc_timeout: str | None = None
) -> AsyncIterator[FrameReader]:
    head = headers(token(player))
    if grpc_timeout is not None:
        head["grpc-timeout"] = grpc_timeout
    async with edge.session.post(
        f"{edge.url}/{TABLE}/WatchTable",
        data=request_body(pb.WatchTableRequest(table_id=table_id)),
        headers=head,
    ) as response:
        assert response.status == 200
        yield FrameReader(response)


async def _next_view(reader: FrameReader) -> Any:
    async with asyncio.timeout(WAIT_SECONDS):
        found = await reader.next()
    assert found is not None
    assert found[0] == 0x00, found
    return pb.WatchTableResponse.FromString(found[1]).view


async def test_a_watch_streams_a_view_after_every_move(edge: Edge) -> None:
    table_id = await _new_table(edge.table.target)
    async with watching(edge, table_id, "ana") as reader:
        first = await _next_view(reader)
        versions = [first.version]
        for _ in range(3):
            player, view = await _mover(edge, table_id)
            move = pb.SubmitActionRequest(
                table_id=table_id,
                request_id=f"web-move-{view.version}",
                action=view.legal_actions[0],
                expected_version=view.version,
            )
            done = await edge.call("SubmitAction", move, headers(token(player)))
            assert done.code == 0, done.message
            after = done.parsed(pb.SubmitActionResponse).view.version
            while versions[-1] < after:  # each view as soon as it is made, not at the end
                versions.append((await _next_view(reader)).version)
        assert versions == sorted(set(versions)), versions
        assert len(versions) >= 4, versions
        assert edge.edge.proxy.streams.open == 1


async def test_a_page_going_away_cancels_its_backend_watch(edge: Edge) -> None:
    table_id = await _new_table(edge.table.target)
    admission = edge.table.service.server.admission
    async with watching(edge, table_id, "ana") as reader:
        await _next_view(reader)
        assert admission.in_progress == 1, "the watch is open at the service"
        assert edge.edge.proxy.in_progress == 1
        reader.response.connection.transport.abort()  # type: ignore[union-attr]
    await _until(lambda: admission.in_progress == 0)
    await _until(lambda: edge.edge.proxy.in_progress == 0)


async def test_the_deadline_ends_a_watch_with_deadline_exceeded(edge: Edge) -> None:
    table_id = await _new_table(edge.table.target)
    admission = edge.table.service.server.admission
    async with watching(edge, table_id, "ana", grpc_timeout="300m") as reader:
        await _next_view(reader)
        async with asyncio.timeout(WAIT_SECONDS):
            flag, payload = await reader.next() or (None, b"")
            assert await reader.next() is None, "the trailer frame is the last"
    assert flag == 0x80
    trailers = grpc_web.parse_trailers(payload)
    assert trailers["grpc-status"] == str(grpc.StatusCode.DEADLINE_EXCEEDED.value[0])
    await _until(lambda: admission.in_progress == 0)


async def test_the_stream_limit_refuses_one_watch_too_many(
    table_service: RunningTableService,
) -> None:
    table_id = await _new_table(table_service.target)
    async with running_edge(table_service, grpc_max_concurrent_streams=1) as edge:
        async with watching(edge, table_id, "ana") as reader:
            await _next_view(reader)
            answer = await edge.call(
                "WatchTable", pb.WatchTableRequest(table_id=table_id), headers(token("bogdan"))
            )
            assert answer.code == grpc.StatusCode.RESOURCE_EXHAUSTED.value[0]
            assert answer.refusal().reason == "SERVER_BUSY"
            unary = await edge.call(
                "GetTable", pb.GetTableRequest(table_id=table_id), headers(token("bogdan"))
            )
            assert unary.code == 0, "calls are counted apart from streams"
        await _until(lambda: edge.edge.proxy.in_progress == 0)
        async with watching(edge, table_id, "bogdan") as reader:
            assert (await _next_view(reader)).seat == 1, "the freed slot is taken again"


async def test_stopping_the_edge_ends_open_watches_with_unavailable(
    table_service: RunningTableService,
) -> None:
    table_id = await _new_table(table_service.target)
    async with running_edge(table_service) as edge:
        async with watching(edge, table_id, "ana") as reader:
            await _next_view(reader)
            stopping = asyncio.create_task(edge.edge.stop())
            async with asyncio.timeout(WAIT_SECONDS):
                flag, payload = await reader.next() or (None, b"")
            await stopping
        assert flag == 0x80
        trailers = grpc_web.parse_trailers(payload)
        assert trailers["grpc-status"] == str(grpc.StatusCode.UNAVAILABLE.value[0])


def _calls(service: str, code: str) -> float:
    return (
        REGISTRY.get_sample_value(
            "kozyr_webedge_calls_total", {"grpc_service": service, "grpc_code": code}
        )
        or 0.0
    )


async def test_calls_are_counted_on_the_metrics_port(table_service: RunningTableService) -> None:
    table_id = await _new_table(table_service.target)
    before = (_calls(TABLE, "OK"), _calls(TABLE, "UNAUTHENTICATED"), _calls("", "UNIMPLEMENTED"))
    async with running_edge(table_service, metrics_host="127.0.0.1", metrics_port=0) as edge:
        request = pb.GetTableRequest(table_id=table_id)
        assert (await edge.call("GetTable", request, headers(token("ana")))).code == 0
        assert (await edge.call("GetTable", request, headers(None))).code == 16
        unknown = await grpc_web.call(edge.session, edge.url, "x.Y/Z", b"", headers(None))
        assert unknown.code == 12
        assert edge.edge.metrics_port is not None
        async with edge.session.get(f"http://127.0.0.1:{edge.edge.metrics_port}/metrics") as got:
            exported = await got.text()
    after = (_calls(TABLE, "OK"), _calls(TABLE, "UNAUTHENTICATED"), _calls("", "UNIMPLEMENTED"))
    assert [b - a for a, b in zip(before, after, strict=True)] == [1, 1, 1]
    assert (
        'kozyr_webedge_calls_total{grpc_code="OK",grpc_service="kozyr.table.v1.TableService"}'
        in (exported)
    )
    assert 'kozyr_webedge_open_calls{kind="stream"} 0.0' in exported


async def test_hundreds_of_random_bodies_are_answered_and_change_nothing(edge: Edge) -> None:
    """Random bytes, random frames of random bytes, as either content type: each gets a
    gRPC status (the edge's refusal or the service's), never an HTTP error or a dropped
    connection, and no move is made."""
    table_id = await _new_table(edge.table.target)
    player, view = await _mover(edge, table_id)
    rng = random.Random(29)
    codes: set[int] = set()
    for attempt in range(300):
        payload = rng.randbytes(rng.randrange(0, 40))
        body = payload if attempt % 2 else request_body(payload)
        text = attempt % 3 == 0
        async with edge.session.post(
            f"{edge.url}/{TABLE}/SubmitAction",
            data=base64.b64encode(body) if text else body,
            headers=headers(token(player), text=text),
        ) as response:
            answer = await grpc_web.read_answer(response)
        assert answer.http_status == 200, body
        assert answer.code != 0, body
        codes.add(answer.code)
    assert codes <= {grpc.StatusCode.INVALID_ARGUMENT.value[0]}, codes
    assert (await _view(edge, table_id, player)).version == view.version, "nothing was played"
