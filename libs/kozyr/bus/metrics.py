"""Prometheus metrics of NATS consumers: how far behind each one is, and what became of
the messages it handled (every service's `MessageWorker`s)."""

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
