"""Prometheus metrics of matchmaking (module-level, `kozyr_matchmaking_` prefix), served
on `KOZYR_METRICS_PORT` like every service's."""

from __future__ import annotations

from prometheus_client import Counter, Gauge, Histogram

MATCHES = Counter(
    "kozyr_matchmaking_matches_total",
    "Matches decided by this replica, by game and whether computers took seats.",
    ["game", "computers"],
)
WAIT = Histogram(
    "kozyr_matchmaking_wait_seconds",
    "How long the tickets of the matches this replica decided had waited.",
    ["game"],
    buckets=(1, 2, 5, 10, 20, 30, 45, 60, 90, 120, 300, 600, 900),
)
TABLES = Counter(
    "kozyr_matchmaking_tables_total",
    "Matches placed at a table (seated) or given up by the table service (released).",
    ["outcome"],
)
CONFLICTS = Counter(
    "kozyr_matchmaking_lobby_conflicts_total",
    "Lobby appends refused because another replica appended first (then decided again).",
)
SEARCHING = Gauge(
    "kozyr_matchmaking_searching_tickets", "Tickets searching, as this replica's lobby has it."
)
RATED = Counter(
    "kozyr_matchmaking_ratings_total", "Rating changes appended (one per person per table)."
)
