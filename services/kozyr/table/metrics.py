"""Prometheus metrics of the table service (DESIGN.md §8): moves and appends (its relay's
lag: `kozyr.bus.metrics`, sampled by `ServiceRelay`).

Served with the gRPC edge's metrics on KOZYR_METRICS_PORT. Module-level objects:
Prometheus' registry is process-wide.
"""

from __future__ import annotations

from prometheus_client import Counter

COMMANDS = Counter(
    "kozyr_table_commands_total",
    "Commands appended to table streams, by game and kind (create, move, expire, seat, seed).",
    ["game", "kind"],
)
EVENTS = Counter(
    "kozyr_table_events_appended_total",
    "Events appended to table streams (chance draws included), by game.",
    ["game"],
)


def appended(game: str, kind: str, events: int) -> None:
    COMMANDS.labels(game, kind).inc()
    EVENTS.labels(game).inc(events)
