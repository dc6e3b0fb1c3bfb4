"""The bots service assembled: NATS (public table events), the table client as the bots
identity, and the gRPC server: SuggestAction (hints for players, `kozyr.bots.hints`),
health and metrics.

`python -m kozyr.bots` runs one; tests start the same code as a process. Every replica
is alike: they share one durable consumer of the public `TurnStarted` events, and
nothing a bot knows lives in a process (it reads its seat's view at each turn).

Catching up at start: the durable consumer redelivers every event not yet acknowledged
(a turn started while no bots process ran, or one a killed replica held), so every open
computer turn gets its move. What it cannot redeliver is an event acknowledged without a
move (a table call that failed finally) — the only such case is a table gone
(NOT_FOUND); the turn's clock then plays the default move at its deadline.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from nats.aio.client import Client as NatsClient
from nats.aio.msg import Msg

from kozyr.api.bots.v1 import bots_service_pb2, bots_service_pb2_grpc
from kozyr.bots.hints import HintServicer
from kozyr.bots.inputs import InputLog
from kozyr.bots.levels import Level
from kozyr.bots.limiter import TokenBuckets
from kozyr.bots.player import Player
from kozyr.bots.settings import BotsSettings
from kozyr.bus.connection import ConnectionState, connect_when_reachable
from kozyr.bus.consumers import DurableConsumer
from kozyr.bus.streams import EventStreamSpec, ensure_stream, jetstream_name
from kozyr.bus.subjects import PUBLIC_CHANNEL, public_filter
from kozyr.bus.work import MessageWorker
from kozyr.client.caller import ServiceCaller
from kozyr.client.table import TableClient
from kozyr.runtime import (
    AuthPolicy,
    GrpcServer,
    ServiceSpec,
    get_logger,
    service_full_name,
)
from kozyr.runtime.auth import BOTS_SUBJECT, Role

SERVICE_NAME = service_full_name(bots_service_pb2, "BotsService")
AUTH_POLICY = AuthPolicy(method_roles={f"/{SERVICE_NAME}/SuggestAction": frozenset({Role.PLAYER})})
REQUIRED_SETTINGS = ("nats_url", "jwt_key", "table_target")
ACK_WAIT = 10.0
"""Seconds a replica may hold an event before another replica gets it: above the longest
handling (think_seconds is added to it) of a live replica."""
CONCURRENCY = 100
"""Turns played at once by one replica (each waits for its table's answers)."""


class BotsService:
    """One running bots replica. `await start()`, then `await stop()` (or run until signal)."""

    def __init__(self, settings: BotsSettings) -> None:
        assert settings.table_target is not None, "load_settings(required=...) checks it"
        self.settings = settings
        self.root = settings.subject_root
        self.inputs = InputLog(settings.bots_input_log) if settings.bots_input_log else None
        self.tables = ServiceCaller(
            settings.table_target, settings.token_minter(), settings.jwt_ttl_seconds,
            BOTS_SUBJECT, interceptors=[self.inputs.interceptor()] if self.inputs else [],
            credentials=settings.channel_credentials(),
        )  # fmt: skip
        self.player = Player(
            self.tables,
            Level(settings.bots_level),
            settings.bots_think_seconds,
            hard_budget_ms=settings.bots_hard_budget_ms,
        )
        self.forwarding = TableClient(
            settings.table_target, None, credentials=settings.channel_credentials()
        )
        """The hints' channel to the table: no token of its own, each call sends the caller's."""
        self.hints = HintServicer(
            self.forwarding,
            TokenBuckets(settings.bots_hints_per_second, settings.bots_hints_burst),
        )
        self.server = GrpcServer(
            settings, [ServiceSpec(SERVICE_NAME, self._register)], auth=AUTH_POLICY
        )
        self._nc: NatsClient | None = None
        self._worker: MessageWorker | None = None

    def _register(self, grpc_server: Any) -> None:
        bots_service_pb2_grpc.add_BotsServiceServicer_to_server(self.hints, grpc_server)

    async def start(self) -> int:
        """Connect to NATS, bind the shared consumer, serve health; returns the gRPC port."""
        nc = self._nc = await connect_when_reachable(
            self.settings.nats_servers,
            name=f"kozyr-bots-{self.root}",
            state=ConnectionState(get_logger("kozyr.bots"), "NATS"),
        )
        js = nc.jetstream()
        await ensure_stream(
            js, EventStreamSpec(PUBLIC_CHANNEL, self.root, replicas=self.settings.stream_replicas)
        )
        handler: Callable[[Msg], Awaitable[None]] = self.player.public_event
        if self.inputs is not None:
            handler = self.inputs.events(handler)
        self._worker = MessageWorker(js, self._consumer(), handler, concurrency=CONCURRENCY)
        await self._worker.start()
        self.server.add_shutdown_hook(self._close)
        self.server.add_shutdown_hook(self._stop_worker, before_stop=True)
        return await self.server.start()

    def _consumer(self) -> DurableConsumer:
        return DurableConsumer(
            stream=jetstream_name(PUBLIC_CHANNEL, self.root),
            durable="bots-public",
            filter_subjects=(public_filter("table", self.root),),
            ack_wait=ACK_WAIT + self.settings.bots_think_seconds,
            max_ack_pending=10_000,
        )

    async def _stop_worker(self) -> None:
        if self._worker is not None:
            await self._worker.stop()

    async def _close(self) -> None:
        await self.tables.close()
        await self.forwarding.close()
        if self._nc is not None:
            await self._nc.drain()
        if self.inputs is not None:
            self.inputs.close()

    async def stop(self, grace: float | None = None) -> None:
        await self.server.stop(grace)

    async def run_until_signal(self) -> None:
        await self.server.run_until_signal()
