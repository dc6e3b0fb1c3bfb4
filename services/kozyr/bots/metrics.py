"""Prometheus metrics of the bots service (module-level, `kozyr_bots_` prefix), served
on the runtime's metrics endpoint (KOZYR_METRICS_PORT) like every service's."""

from __future__ import annotations

from prometheus_client import Counter, Histogram

MOVES = Counter(
    "kozyr_bots_moves_total",
    "Moves a bot submitted, by outcome: applied, or duplicate (the turn's request id had "
    "already moved — a redelivery, a restart or another replica; nothing appended).",
    ["outcome"],
)
REFUSED = Counter(
    "kozyr_bots_refused_total",
    "Table calls of a bot refused, by the table's ErrorInfo reason (STALE_VERSION: the "
    "table moved on; SEAT_NOT_COMPUTER: the person is back; the status code if none).",
    ["reason"],
)
DECISION_BUCKETS = (1e-4, 2.5e-4, 5e-4, 1e-3, 2.5e-3, 5e-3, 0.01, 0.025, 0.05, 0.1, 0.25,
                    0.5, 1, 2.5, 5)  # fmt: skip
"""From a tenth of a millisecond (easy, normal) to seconds (a search level)."""
DECISION_SECONDS = Histogram(
    "kozyr_bots_decision_seconds",
    "Time to choose a move from a view, by level (the table calls not included).",
    ["level"],
    buckets=DECISION_BUCKETS,
)
HINTS = Counter(
    "kozyr_bots_hints_total",
    "SuggestAction calls, by outcome: given, or the refusal's reason.",
    ["outcome"],
)
