"""One bot move is one trace: a table service over real gRPC and PostgreSQL, the bots'
player fed the real public `TurnStarted` from NATS, spans kept by an in-memory
exporter — the bot's turn span, the table's server spans for its GetTable and
SubmitAction, and the append inside SubmitAction share one trace, parent to child."""

from __future__ import annotations

import asyncio

import nats
import pytest
from nats.aio.msg import Msg
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from kozyr.api.common.v1 import games_pb2
from kozyr.api.table.v1.events_pb2 import PublicTableEvent
from kozyr.bots.levels import Level
from kozyr.bots.player import Player
from kozyr.client import TableClient
from kozyr.client.caller import ServiceCaller
from kozyr.runtime import load_settings
from kozyr.runtime.auth import BOTS_SUBJECT, Role
from kozyr.runtime.tracing import using_provider
from tests.integration.table.conftest import running_table_service
from tests.support.tables import JWT_KEY, token

pytestmark = pytest.mark.integration

SUBMIT = "kozyr.table.v1.TableService/SubmitAction"
GET = "kozyr.table.v1.TableService/GetTable"


def _named(spans: tuple[ReadableSpan, ...], name: str) -> list[ReadableSpan]:
    return [s for s in spans if s.name == name]


async def test_a_bot_move_is_one_trace_from_its_turn_to_the_append(
    database_url: str, nats_url: str, subject_root: str
) -> None:
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    nc = await nats.connect(nats_url)
    started: asyncio.Queue[Msg] = asyncio.Queue()

    async def heard(message: Msg) -> None:
        started.put_nowait(message)

    await nc.subscribe(f"{subject_root}.public.table.*.TurnStarted", cb=heard)
    minter = load_settings(jwt_key=JWT_KEY).token_minter()
    with using_provider(provider):
        async with running_table_service(database_url, nats_url, subject_root) as running:
            async with TableClient(running.target, token("mm", Role.SERVICE)) as mm:
                await mm.create_table(games_pb2.GAME_THREE_FIVE_EIGHT, [None, None, None])
            turn = await asyncio.wait_for(started.get(), 30)
            turn_number = PublicTableEvent.FromString(turn.data).turn_started.number
            exporter.clear()
            player = Player(ServiceCaller(running.target, minter, 60, BOTS_SUBJECT), Level.EASY, 0)
            await player.public_event(turn)
            await player._tables.close()
    await nc.close()

    spans = exporter.get_finished_spans()
    (bot_turn,) = _named(spans, "bots.turn")
    (get,) = _named(spans, GET)
    (submit,) = _named(spans, SUBMIT)
    (append,) = _named(spans, "table.append")
    assert bot_turn.context is not None
    trace_id = bot_turn.context.trace_id
    assert {s.context.trace_id for s in (get, submit, append) if s.context} == {trace_id}
    assert get.parent is not None
    assert get.parent.span_id == bot_turn.context.span_id
    assert submit.parent is not None
    assert submit.parent.span_id == bot_turn.context.span_id
    assert submit.context is not None
    assert append.parent is not None
    assert append.parent.span_id == submit.context.span_id
    assert bot_turn.attributes is not None
    assert bot_turn.attributes["turn"] == turn_number
