"""Issue 25's bench harness measures what docs/benchmarks.md says it does.

Benches are never run by `make test`; these check the definitions their figures rest
on, without any server: the floor's push names the version and the seat to move next,
move → every watcher is measured to the LAST stream of the table, the scaling law's
bound, and the clients' CPU cap (a real cgroup where one is writable).
"""

from __future__ import annotations

import argparse
import os
import random
import subprocess
import sys
import time
from pathlib import Path

import psutil
import pytest
from prometheus_client import CollectorRegistry, Histogram, generate_latest

from kozyr.runtime.metrics import GC_PAUSE_SECONDS
from tests.bench.capped import PERIOD_US, Hierarchy, capped, core_share, hierarchy
from tests.bench.floor import move_request, parse_push, push
from tests.bench.watching import GcPauses, Law, Result, Samples, WatchedTable, percentile

GC_BUCKETS = GC_PAUSE_SECONDS._upper_bounds[:-1]  # the service's own buckets, without +Inf


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


def run(moves: int, seconds: float, service: float, machine: float, clients: float = 0.0) -> Result:
    return Result(
        "kozyr", "3-5-8", 100, 3, 0.0, moves, seconds, Samples(), service, clients, machine
    )


def test_the_scaling_law_is_bound_by_the_workers_or_by_the_machine_whichever_is_less() -> None:
    law = Law.of(run(moves=1_000, seconds=2.0, service=2.0, machine=4.0))  # 2 ms, 4 ms a move

    assert (law.service_ms, law.machine_ms) == (2.0, 4.0)
    assert law.bound(workers=1, cores=2) == 500  # one worker: one core's worth of moves
    assert law.bound(workers=2, cores=2) == 500  # two: the machine's two cores, 4 ms a move
    assert law.bound(workers=2, cores=4) == 1_000
    assert law.bound(workers=2, cores=float("inf")) == 1_000


def test_a_cap_is_written_as_a_quota_of_the_period_in_either_cgroup_version(
    tmp_path: Path,
) -> None:
    assert Hierarchy(tmp_path, v2=True).quota_files(0.5) == {"cpu.max": f"50000 {PERIOD_US}"}
    assert Hierarchy(tmp_path, v2=False).quota_files(0.25) == {
        "cpu.cfs_period_us": str(PERIOD_US),
        "cpu.cfs_quota_us": "25000",
    }
    assert Hierarchy(tmp_path, v2=True).quota_files(0.001) == {"cpu.max": f"1000 {PERIOD_US}"}


def test_no_cpu_controller_is_said_not_pretended(tmp_path: Path) -> None:
    assert hierarchy(tmp_path) == "no cpu cgroup controller on this machine"


def test_a_capped_process_gets_its_share_of_a_core_and_no_more() -> None:
    """Real cgroups (root on cgroup v1 or v2 with the cpu controller), else skipped: a
    busy child capped at a fifth of a core is in its own group and uses at most about
    that (a cap holds under any load; how much more it gets once free depends on the
    machine's load, so only its way home is checked)."""
    found = hierarchy()
    if isinstance(found, str):
        pytest.skip(found)
    busy = subprocess.Popen([sys.executable, "-c", "while True: pass"])
    try:
        home = Path(f"/proc/{busy.pid}/cgroup").read_text()
        with capped(0.2, busy.pid) as why_not:
            assert why_not is None
            assert f"kozyr-capped-{busy.pid}" in Path(f"/proc/{busy.pid}/cgroup").read_text()
            assert capped_share(busy.pid, 1.0) < 0.3
        assert Path(f"/proc/{busy.pid}/cgroup").read_text() == home
        assert not (found.root / f"kozyr-capped-{busy.pid}").exists()
    finally:
        busy.kill()
        busy.wait()


def capped_share(pid: int, seconds: float) -> float:
    """The share of one core process `pid` used over the next `seconds`."""
    before, started = psutil.Process(pid).cpu_times(), time.perf_counter()
    time.sleep(seconds)
    after = psutil.Process(pid).cpu_times()
    used: float = after.user + after.system - before.user - before.system
    return used / (time.perf_counter() - started)


def gc_metrics(pauses: dict[str, list[float]]) -> str:
    """The exposition text of a `kozyr_gc_pause_seconds` histogram that saw `pauses`."""
    registry = CollectorRegistry()
    histogram = Histogram(
        "kozyr_gc_pause_seconds", "pauses", ["generation"], registry=registry, buckets=GC_BUCKETS
    )
    for generation, seconds in pauses.items():
        for pause in seconds:
            histogram.labels(generation).observe(pause)
    return generate_latest(registry).decode()


def test_gc_pauses_between_two_readings_are_counted_summed_and_bounded() -> None:
    earlier = GcPauses.parse(gc_metrics({"0": [0.0002], "2": [0.3]}))
    later = GcPauses.parse(gc_metrics({"0": [0.0002, 0.0004, 0.0008], "2": [0.3, 0.02, 0.04]}))

    between = later - earlier

    assert between.count == {"0": 2, "2": 2}
    assert between.total["2"] == pytest.approx(0.06)
    assert between.longest("2") == 0.05  # 0.04 s: the least bucket holding both
    assert between.longest("0") == 0.001
    assert between.longest("1") == 0.0
    assert between.summary().startswith("gen0 2 in 1 ms (longest ≤ 1 ms), gen2 2 in 60 ms")


@pytest.mark.parametrize("text", ["0", "-0.5", "nan", "half", str((os.cpu_count() or 1) + 1)])
def test_a_client_cpu_cap_that_no_cgroup_can_mean_is_refused(text: str) -> None:
    with pytest.raises(argparse.ArgumentTypeError):
        core_share(text)


def test_a_client_cpu_cap_within_the_machine_is_taken() -> None:
    assert core_share("0.5") == 0.5
    assert core_share(str(os.cpu_count() or 1)) == (os.cpu_count() or 1)
