"""The clock service assembled: NATS (timers, presence, public events), the table client,
the gRPC server.

`python -m kozyr.clock` runs one; tests start the same code as a process. Every replica
is alike: the durable consumers share the work between them, and nothing the clock
knows lives in a process (timers, presence and the seat index are in NATS).
"""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from nats.aio.client import Client as NatsClient

from kozyr.api.clock.v1 import clock_service_pb2, clock_service_pb2_grpc
from kozyr.bus.connection import ConnectionState, connect_when_reachable
from kozyr.bus.consumers import DurableConsumer
from kozyr.bus.schedules import (
    MessageScheduler,
    ScheduleStreamSpec,
    ensure_schedule_stream,
    fire_filter,
)
from kozyr.bus.streams import EventStreamSpec, ensure_stream, jetstream_name
from kozyr.bus.subjects import PUBLIC_CHANNEL, public_filter
from kozyr.bus.work import MessageWorker, stop_workers
from kozyr.clock.covering import Covering
from kozyr.clock.follower import Follower
from kozyr.clock.presence import PresenceBook
from kozyr.clock.seating import SeatIndex
from kozyr.clock.servicer import ClockServicer
from kozyr.clock.settings import ClockSettings
from kozyr.clock.tables import TableCaller
from kozyr.clock.timing import Clock, SystemClock
from kozyr.clock.turns import TurnClock
from kozyr.clock.voice import VoiceRooms
from kozyr.runtime import (
    AuthPolicy,
    GrpcServer,
    ServiceSpec,
    get_logger,
    service_full_name,
)
from kozyr.runtime.auth import Role

SERVICE_NAME = service_full_name(clock_service_pb2, "ClockService")
PLAYER_ONLY = frozenset({Role.PLAYER})
AUTH_POLICY = AuthPolicy(
    method_roles={
        f"/{SERVICE_NAME}/Heartbeat": PLAYER_ONLY,
        f"/{SERVICE_NAME}/JoinVoice": PLAYER_ONLY,
    }
)
REQUIRED_SETTINGS = ("nats_url", "jwt_key", "table_target")
ACK_WAIT = 5.0
"""Seconds a replica may hold a message unacknowledged before another replica gets it:
the bound on a takeover's delay when a replica dies holding a fired timer (or the one
public event in flight). A slower handler only means a repeated, idempotent call."""
FIRE_CONCURRENCY = 200
"""Timers handled at once by one replica (a thousand may fire in the same second)."""


class ClockService:
    """One running clock replica. `await start()`, then `await stop()` (or run until signal)."""

    def __init__(self, settings: ClockSettings, *, clock: Clock | None = None) -> None:
        assert settings.table_target is not None, "load_settings(required=...) checks it"
        self.settings = settings
        self.root = settings.subject_root
        self.clock = clock or SystemClock(timedelta(seconds=settings.clock_time_offset_seconds))
        self.tables = TableCaller(
            settings.table_target,
            settings.token_minter(),
            settings.jwt_ttl_seconds,
            settings.channel_credentials(),
        )
        self.voice = VoiceRooms.from_settings(settings)
        self.server = GrpcServer(
            settings, [ServiceSpec(SERVICE_NAME, self._register)], auth=AUTH_POLICY
        )
        self._nc: NatsClient | None = None
        self._servicer: ClockServicer | None = None
        self._workers: list[MessageWorker] = []

    def _register(self, grpc_server: Any) -> None:
        assert self._servicer is not None
        clock_service_pb2_grpc.add_ClockServiceServicer_to_server(self._servicer, grpc_server)

    async def start(self) -> int:
        """Connect to NATS, set up its streams and consumers, serve; returns the gRPC port."""
        # Nothing the clock does works without NATS: wait for it (one warning while it
        # is unreachable), then serve; afterwards nats-py reconnects by itself.
        nc = self._nc = await connect_when_reachable(
            self.settings.nats_servers,
            name=f"kozyr-clock-{self.root}",
            state=ConnectionState(get_logger("kozyr.clock"), "NATS"),
        )
        js = nc.jetstream()
        replicas = self.settings.stream_replicas
        await ensure_schedule_stream(nc, ScheduleStreamSpec(self.root, replicas))
        await ensure_stream(js, EventStreamSpec(PUBLIC_CHANNEL, self.root, replicas=replicas))
        scheduler = MessageScheduler(js, self.root)
        presence = PresenceBook(
            nc, js, self.root, self.settings.clock_offline_after_seconds, replicas=replicas
        )
        await presence.open()
        seats = SeatIndex(js, self.root, replicas=replicas)
        await seats.open()
        turns = TurnClock(scheduler, self.clock, self.tables)
        covering = Covering(
            scheduler, self.clock, presence, seats, self.tables,
            self.settings.clock_cover_after_seconds,
        )  # fmt: skip
        follower = Follower(self.root, turns, covering, presence)
        self._servicer = ClockServicer(presence, covering, self.tables, self.voice, self.clock)
        self._workers = [
            MessageWorker(js, self._public_consumer(), follower.public_event),
            MessageWorker(js, self._fire_consumer(), follower.fired, concurrency=FIRE_CONCURRENCY),
            MessageWorker(
                js, self._presence_consumer(presence), follower.presence_entry, concurrency=50
            ),
        ]
        for worker in self._workers:
            await worker.start()
        self.server.add_shutdown_hook(self._close)
        self.server.add_shutdown_hook(self._stop_workers, before_stop=True)
        return await self.server.start()

    def _public_consumer(self) -> DurableConsumer:
        return DurableConsumer(
            stream=jetstream_name(PUBLIC_CHANNEL, self.root),
            durable="clock-public",
            filter_subjects=(public_filter("table", self.root),),
            ack_wait=ACK_WAIT,
            max_ack_pending=1,
        )

    def _fire_consumer(self) -> DurableConsumer:
        return DurableConsumer(
            stream=ScheduleStreamSpec(self.root).name,
            durable="clock-timers",
            filter_subjects=(fire_filter(self.root),),
            ack_wait=ACK_WAIT,
            max_ack_pending=10_000,
        )

    def _presence_consumer(self, presence: PresenceBook) -> DurableConsumer:
        return DurableConsumer(
            stream=presence.stream,
            durable="clock-presence",
            filter_subjects=(f"$KV.{presence.bucket}.>",),
            ack_wait=ACK_WAIT,
            max_ack_pending=10_000,
        )

    async def _stop_workers(self) -> None:
        await stop_workers(self._workers)

    async def _close(self) -> None:
        await self.tables.close()
        if self._nc is not None:
            await self._nc.drain()

    async def stop(self, grace: float | None = None) -> None:
        await self.server.stop(grace)

    async def run_until_signal(self) -> None:
        await self.server.run_until_signal()
