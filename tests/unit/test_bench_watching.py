"""Issue 25's bench harness measures what docs/benchmarks.md says it does.

Benches are never run by `make test`; these check the two definitions their figures rest
on, without any server: the floor's push names the version and the seat to move next,
and move → every watcher is measured to the LAST stream of the table.
"""

from __future__ import annotations

import random

from tests.bench.floor import move_request, parse_push, push
from tests.bench.watching import WatchedTable, percentile


def test_a_floor_push_is_about_a_row_and_names_the_version_and_the_next_seat() -> None:
    message = push(41, 2)

    assert parse_push(message) == (41, 2)
    assert 280 <= len(message) <= 320


def test_a_floor_move_carries_its_table_seat_and_version_before_the_row() -> None:
    header, _, row = move_request("floor-t1", 1, 7, b'{"a":1}').partition(b"\n")

    assert header.decode().split() == ["floor-t1", "1", "7"]
    assert row == b'{"a":1}'


def seen(table: WatchedTable, stream: int, *arrivals: tuple[int, float]) -> None:
    table.streams[stream].seen_versions.extend(v for v, _ in arrivals)
    table.streams[stream].seen_at.extend(t for _, t in arrivals)


def test_move_to_every_watcher_runs_to_the_last_stream_showing_a_newer_version() -> None:
    table = WatchedTable(seats=2, streams=3, rng=random.Random(0))
    table.sent = [(3, 10.0), (4, 20.0)]  # moved on version 3 at 10 s, on 4 at 20 s
    seen(table, 0, (3, 9.0), (4, 10.2), (5, 20.1))
    seen(table, 1, (3, 9.0), (4, 10.5))  # never showed version 5
    seen(table, 2, (3, 9.0), (6, 10.9), (7, 20.3))  # 6 is newer than 3: it counts

    assert table.to_every_watcher() == [10.9 - 10.0]


def test_percentile_is_nearest_rank() -> None:
    values = [float(v) for v in range(1, 101)]

    assert percentile(values, 0.99) == 99.0
    assert percentile(values, 0.5) == 50.0
