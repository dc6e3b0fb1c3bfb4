"""The table service assembled: store, app, outbox relay, NATS listener, gRPC server.

`python -m kozyr.table` runs one; tests start one in-process on a free port with the
same code, so what is tested is what runs.
"""

from __future__ import annotations

import asyncio
import contextlib
from typing import Any

from kozyr.api.table.v1 import table_service_pb2
from kozyr.bus.service_relay import ServiceRelay
from kozyr.bus.streams import TABLE_CATEGORIES
from kozyr.eventstore import PostgresEventStore
from kozyr.eventstore.durability import check_commit_durability
from kozyr.runtime import AuthPolicy, GrpcServer, ServiceSpec, service_full_name
from kozyr.runtime.auth import Role
from kozyr.table import workers
from kozyr.table.adapters.directory import TableDirectory
from kozyr.table.adapters.listener import TableChangeListener
from kozyr.table.adapters.notifier import TableNotifier
from kozyr.table.adapters.poller import WatchPoller
from kozyr.table.adapters.schema_watch import SchemaWatch
from kozyr.table.app import TableApp
from kozyr.table.edge.servicer import TableServicer, add_to_server
from kozyr.table.settings import TableSettings

SERVICE_NAME = service_full_name(table_service_pb2, "TableService")
SERVICE_ONLY = frozenset({Role.SERVICE, Role.ADMIN})
AUTH_POLICY = AuthPolicy(
    method_roles={
        f"/{SERVICE_NAME}/CreateTable": SERVICE_ONLY,
        f"/{SERVICE_NAME}/ExpireTurn": SERVICE_ONLY,
        f"/{SERVICE_NAME}/SetSeatControl": SERVICE_ONLY,
        f"/{SERVICE_NAME}/SetSeatPresence": SERVICE_ONLY,
        f"/{SERVICE_NAME}/ListTables": frozenset({Role.ADMIN}),
    }
)
REQUIRED_SETTINGS = ("database_url", "nats_url", "jwt_key")


class TableService:
    """One running table service. `await start()`, then `await stop()` (or run until signal)."""

    def __init__(self, settings: TableSettings, *, pool_size: int = 20) -> None:
        assert settings.database_url is not None, "load_settings(required=...) checks it"
        self.settings = settings
        self.store = PostgresEventStore(
            settings.database_url, max_pool_size=pool_size, **settings.database_timeouts
        )
        self.notifier = TableNotifier()
        self.directory = TableDirectory(settings.database_url, self.store)
        self.app = TableApp(self.store, notifier=self.notifier, directory=self.directory)
        self.relay = ServiceRelay(
            self.store,
            settings.nats_servers,
            categories=TABLE_CATEGORIES,
            subject_root=settings.subject_root,
            service="table",
            stream_replicas=settings.stream_replicas,
        )
        self.listener = TableChangeListener(self.notifier, settings.subject_root)
        self.poller = WatchPoller(self.store, self.notifier, settings.watch_poll_seconds)
        self.servicer = TableServicer(self.app)
        self.server = GrpcServer(
            settings,
            [ServiceSpec(SERVICE_NAME, self._register)],
            auth=AUTH_POLICY,
            options=workers.reuse_port_options(settings),
            store_probe=self.store.check_writable,
        )
        self.servicer.shutting_down = self.server.shutting_down
        self.schema = SchemaWatch(settings.database_url, self.server, [SERVICE_NAME])
        self._poll_task: asyncio.Task[None] | None = None

    def _register(self, grpc_server: Any) -> None:
        add_to_server(self.servicer, grpc_server)

    async def start(self) -> int:
        """Connect everything and serve; returns the bound gRPC port."""
        await self.store.open()
        await check_commit_durability(
            self.store, allow_async_commit=self.settings.allow_async_commit
        )
        self.relay.start()
        # Play needs only PostgreSQL: NATS (wake-ups from other replicas, the relay's
        # publishing) is joined in the background and caught up when it arrives.
        self.listener.start(self.settings.nats_servers)
        self._poll_task = asyncio.create_task(self.poller.run(), name="watch-poller")
        self.server.add_shutdown_hook(self.listener.close)
        self.server.add_shutdown_hook(self._stop_poller)
        self.server.add_shutdown_hook(self.relay.stop)
        self.server.add_shutdown_hook(self.store.close)
        self.server.add_shutdown_hook(self.directory.close)
        # Hooks run newest first: snapshots being saved finish before the pool closes.
        self.server.add_shutdown_hook(self.app.tables.snapshots.flush)
        return await self._serve()

    async def _stop_poller(self) -> None:
        if self._poll_task is not None:
            self._poll_task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._poll_task

    async def _serve(self) -> int:
        """Start the gRPC server, NOT_SERVING while the event store is not migrated."""
        migrated = await self.schema.migrated()
        port = await self.server.start()
        await self.schema.hold_until_migrated(migrated)
        self.server.add_shutdown_hook(self.schema.stop, before_stop=True)
        self.server.add_shutdown_hook(self.servicer.stop_watches, before_stop=True)
        return port

    async def stop(self, grace: float | None = None) -> None:
        await self.server.stop(grace)

    async def run_until_signal(self) -> None:
        await self.server.run_until_signal()
