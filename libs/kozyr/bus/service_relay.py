"""A service's own outbox relay, run beside it: every service that appends events (the
table service, matchmaking) has its own database and publishes its outbox itself, with
its own categories and NATS user (docs/architecture.md, "Databases").

`ServiceRelay.start()` starts the relay and the sampling of its lag into the
`kozyr_outbox_*` gauges (served on the service's KOZYR_METRICS_PORT); `stop()` — a
shutdown hook of the service, run before its store closes — ends both, letting the
relay finish the batch in flight.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Sequence

import structlog

from kozyr.bus import metrics
from kozyr.bus.relay import OutboxRelay, outbox_backlog
from kozyr.eventstore.model import EventStore

LAG_SAMPLE_SECONDS = 5.0

log = structlog.get_logger(__name__)


class ServiceRelay:
    """The relay of one service's event store, with its lag gauges."""

    def __init__(
        self,
        store: EventStore,
        nats_servers: str | Sequence[str],
        *,
        categories: Sequence[str],
        subject_root: str,
        service: str,
        stream_replicas: int = 1,
    ) -> None:
        self.store = store
        self.relay = OutboxRelay(
            store,
            nats_servers,
            categories=categories,
            subject_root=subject_root,
            application_name=f"kozyr-{service}-relay",
            stream_replicas=stream_replicas,
        )
        self._tasks: list[asyncio.Task[None]] = []

    def start(self) -> None:
        """Relay in the background (connecting to NATS when it can), sample the lag."""
        self._tasks = [
            asyncio.create_task(self.relay.run(), name="outbox-relay"),
            asyncio.create_task(sample_lag(self.store), name="relay-lag"),
        ]

    async def stop(self) -> None:
        """Stop sampling; let the relay publish and delete its batch in flight, then end."""
        if not self._tasks:
            return
        relaying, sampling = self._tasks
        self._tasks = []
        sampling.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await sampling
        self.relay.stop()
        await relaying


async def sample_lag(store: EventStore, every_seconds: float = LAG_SAMPLE_SECONDS) -> None:
    """Keep the relay-lag gauges fresh until cancelled."""
    while True:
        try:
            rows, age = await outbox_backlog(store)
        except Exception as error:  # a metric must never take the service down
            log.warning("relay lag sample failed", error=str(error))
        else:
            metrics.OUTBOX_BACKLOG.set(rows)
            metrics.OUTBOX_OLDEST_SECONDS.set(age or 0.0)
        await asyncio.sleep(every_seconds)
