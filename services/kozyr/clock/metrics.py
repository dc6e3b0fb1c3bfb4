"""Prometheus metrics of the clock service (module-level, `kozyr_clock_` prefix)."""

from __future__ import annotations

from prometheus_client import Counter, Histogram

EXPIRIES = Counter(
    "kozyr_clock_expiries_total",
    "Turn timers fired and sent to ExpireTurn, by whether the table applied the default move.",
    ["applied"],
)
EXPIRY_LATENESS = Histogram(
    "kozyr_clock_expiry_lateness_seconds",
    "From a turn's deadline to: NATS storing the fired timer (stage fired), the clock "
    "receiving it (received), the table's answer to ExpireTurn (answered).",
    ["stage"],
    buckets=(0.025, 0.05, 0.1, 0.15, 0.2, 0.25, 0.3, 0.4, 0.5, 0.75, 1, 2.5, 5, 10, 30, 60),
)
COVERS = Counter("kozyr_clock_covers_total", "Seats covered by a computer for an absent player.")
PRESENCE_CHANGES = Counter(
    "kozyr_clock_presence_changes_total", "Players coming online or going offline.", ["online"]
)
