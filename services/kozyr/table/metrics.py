"""Prometheus metrics of the table service (DESIGN.md §8): moves, appends, relay lag.

Served with the gRPC edge's metrics on KOZYR_METRICS_PORT. Module-level objects:
Prometheus' registry is process-wide.
"""

from __future__ import annotations

import asyncio
import contextlib

from prometheus_client import Counter, Gauge

from kozyr.bus.relay import outbox_backlog
from kozyr.eventstore import EventStore
from kozyr.runtime.logging import get_logger

COMMANDS = Counter(
    "kozyr_table_commands_total",
    "Commands appended to table streams, by game and kind (create, move, expire, seat).",
    ["game", "kind"],
)
EVENTS = Counter(
    "kozyr_table_events_appended_total",
    "Events appended to table streams (chance draws included), by game.",
    ["game"],
)
OUTBOX_BACKLOG = Gauge(
    "kozyr_outbox_backlog_events", "Outbox rows not yet published to NATS (relay lag, rows)."
)
OUTBOX_OLDEST_SECONDS = Gauge(
    "kozyr_outbox_oldest_seconds", "Age of the oldest unpublished outbox row (relay lag, time)."
)

_log = get_logger("kozyr.table.metrics")


def appended(game: str, kind: str, events: int) -> None:
    COMMANDS.labels(game, kind).inc()
    EVENTS.labels(game).inc(events)


async def sample_relay_lag(store: EventStore, every_seconds: float = 5.0) -> None:
    """Keep the relay-lag gauges fresh until cancelled."""
    while True:
        try:
            rows, age = await outbox_backlog(store)
        except Exception as error:  # a metric must never take the service down
            _log.warning("relay lag sample failed", error=str(error))
        else:
            OUTBOX_BACKLOG.set(rows)
            OUTBOX_OLDEST_SECONDS.set(age or 0.0)
        await asyncio.sleep(every_seconds)


async def stop(task: asyncio.Task[None]) -> None:
    task.cancel()
    with contextlib.suppress(asyncio.CancelledError):
        await task
