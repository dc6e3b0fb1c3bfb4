"""The web edge in front of every client-facing service at once — table, matchmaking and
bots in-process on real gRPC, real PostgreSQL and NATS — each reached over real HTTP by
its own path: a ticket watched until it is seated, a hint, a backend that is down."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

import aiohttp
import grpc
import pytest

from kozyr.api.bots.v1 import bots_service_pb2 as bots_pb
from kozyr.api.common.v1 import games_pb2
from kozyr.api.matchmaking.v1 import matchmaking_service_pb2 as mm_pb
from kozyr.api.table.v1 import table_service_pb2 as pb
from kozyr.client import TableClient
from kozyr.infra import free_port
from kozyr.runtime.auth import Role
from kozyr.webedge.service import WebEdge
from kozyr.webedge.settings import WebEdgeSettings
from tests.integration.bots.conftest import running_bots
from tests.integration.matchmaking.conftest import running_matchmaking
from tests.integration.table.conftest import RunningTableService
from tests.support import grpc_web
from tests.support.grpc_web import FrameReader, headers, request_body
from tests.support.tables import token

pytestmark = pytest.mark.integration

WAIT_SECONDS = 30.0
"""Only a bound on a hang: the ticket's stream is read, not timed."""
MATCHMAKING = "kozyr.matchmaking.v1.MatchmakingService"


async def _edge(**targets: str) -> tuple[WebEdge, str]:
    edge = WebEdge(
        WebEdgeSettings.load(
            **targets,
            webedge_host="127.0.0.1",
            webedge_port=0,
            shutdown_grace_seconds=1,
            log_level="WARNING",
        )
    )
    return edge, f"http://127.0.0.1:{await edge.start()}"


@pytest.fixture
async def session() -> AsyncIterator[aiohttp.ClientSession]:
    async with aiohttp.ClientSession() as opened:
        yield opened


async def _frames(reader: FrameReader) -> AsyncIterator[tuple[int, bytes]]:
    async with asyncio.timeout(WAIT_SECONDS):
        async for frame in reader.frames():
            yield frame


async def test_a_ticket_is_watched_through_the_edge_until_it_is_seated(
    table_service: RunningTableService,
    matchmaking_database_url: str,
    nats_url: str,
    subject_root: str,
    session: aiohttp.ClientSession,
) -> None:
    async with running_matchmaking(
        matchmaking_database_url, nats_url, subject_root, table_service.target
    ) as matchmaking:
        edge, url = await _edge(
            table_target=table_service.target, matchmaking_target=matchmaking.target
        )
        try:
            entered = await grpc_web.call(
                session,
                url,
                f"{MATCHMAKING}/EnterQueue",
                mm_pb.EnterQueueRequest(
                    request_id="web-queue-1",
                    game=games_pb2.GAME_THREE_FIVE_EIGHT,
                    fill_with_computers=True,
                ),
                headers(token("ana")),
            )
            assert entered.code == 0, entered.message
            ticket_id = entered.parsed(mm_pb.EnterQueueResponse).ticket_id
            states: list[Any] = []
            async with session.post(
                f"{url}/{MATCHMAKING}/WatchTicket",
                data=request_body(mm_pb.WatchTicketRequest(ticket_id=ticket_id)),
                headers=headers(token("ana")),
            ) as response:
                async for flag, payload in _frames(FrameReader(response)):
                    assert flag == 0x00, grpc_web.parse_trailers(payload)
                    states.append(mm_pb.WatchTicketResponse.FromString(payload))
                    if states[-1].state == mm_pb.TICKET_STATE_MATCHED:
                        break
            seated = states[-1]
            assert seated.ticket_id == ticket_id
            assert seated.state == mm_pb.TICKET_STATE_MATCHED
            assert seated.table_id
            view = await grpc_web.call(
                session,
                url,
                "kozyr.table.v1.TableService/GetTable",
                pb.GetTableRequest(table_id=seated.table_id),
                headers(token("ana")),
            )
            assert view.code == 0, view.message
            assert view.parsed(pb.GetTableResponse).view.HasField("seat"), "Ana is seated"
        finally:
            await edge.stop()


async def test_a_hint_comes_from_the_bots_service_through_the_edge(
    table_service: RunningTableService,
    nats_url: str,
    subject_root: str,
    session: aiohttp.ClientSession,
) -> None:
    players = ["ana", "bogdan", "chiara"]
    async with TableClient(table_service.target, token("matchmaker", Role.SERVICE)) as mm:
        table_id = (await mm.create_table(games_pb2.GAME_THREE_FIVE_EIGHT, players)).table_id
    async with TableClient(table_service.target, token("ana")) as ana:
        view = await ana.get_table(table_id)
    mover = players[view.turn.seats[0]]
    async with running_bots(table_service, nats_url, subject_root) as bots:
        edge, url = await _edge(table_target=table_service.target, bots_target=bots.target)
        try:
            answer = await grpc_web.call(
                session,
                url,
                "kozyr.bots.v1.BotsService/SuggestAction",
                bots_pb.SuggestActionRequest(table_id=table_id),
                headers(token(mover)),
            )
        finally:
            await edge.stop()
    assert answer.code == 0, answer.message
    hint = answer.parsed(bots_pb.SuggestActionResponse)
    async with TableClient(table_service.target, token(mover)) as client:
        mine = await client.get_table(table_id)
    assert hint.seat == players.index(mover)
    assert hint.view_version == mine.version
    assert hint.action in mine.legal_actions


async def test_a_backend_that_is_down_is_unavailable(session: aiohttp.ClientSession) -> None:
    edge, url = await _edge(table_target=f"127.0.0.1:{free_port()}")
    try:
        answer = await grpc_web.call(
            session,
            url,
            "kozyr.table.v1.TableService/GetTable",
            pb.GetTableRequest(table_id="x"),
            {**headers(token("ana")), "grpc-timeout": "2S"},
        )
    finally:
        await edge.stop()
    assert answer.http_status == 200
    assert answer.code == grpc.StatusCode.UNAVAILABLE.value[0], answer.message
