"""Prometheus metrics of the bus: how far behind each NATS consumer is and what became of
the messages it handled (every service's `MessageWorker`s); how far behind a service's
outbox relay is (table and matchmaking, each over its own database: `ServiceRelay`)."""

from __future__ import annotations

from prometheus_client import Counter, Gauge

CONSUMER_PENDING = Gauge(
    "kozyr_nats_consumer_pending_messages",
    "Messages of a durable consumer's stream not yet delivered to it (its lag), as the "
    "last message or empty fetch reported.",
    ["consumer"],
)
HANDLED = Counter(
    "kozyr_nats_messages_handled_total",
    "Messages a consumer handled: acked, or retried (handler failed: redelivered later).",
    ["consumer", "outcome"],
)
OUTBOX_BACKLOG = Gauge(
    "kozyr_outbox_backlog_events", "Outbox rows not yet published to NATS (relay lag, rows)."
)
OUTBOX_OLDEST_SECONDS = Gauge(
    "kozyr_outbox_oldest_seconds", "Age of the oldest unpublished outbox row (relay lag, time)."
)
