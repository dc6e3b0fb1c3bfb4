"""The bots service: decisions per second of one bots process keeping 100 all-computer
3-5-8 tables moving against a real table service process, and who spends the CPU.

    .venv/bin/python tests/bench/bench_bots_service.py [--tables 100] [--window 60]
        [--warmup 10] [--levels normal easy] [--no-scripted]

PostgreSQL and NATS come from $KOZYR_DATABASE_URL / $KOZYR_NATS_URL, else embedded
servers (kozyr.infra). For each level, on a scratch database: a table service process
(`python -m kozyr.table`) and one bots process (`python -m kozyr.bots`, think 0); `--tables`
3-5-8 tables are opened with every seat a computer of that level, and the bots play
them as fast as they can (a 3-5-8 game is ~950 moves, so no table ends in the window).
After `--warmup` seconds, for `--window` seconds:

* decisions/s — moves the bots made and the table applied (the bots' own
  `kozyr_bots_moves_total{outcome="applied"}`), all tables together;
* the bots process's CPU per decision (user + system), and the part of it spent
  choosing the move (`kozyr_bots_decision_seconds` sum) — the rest is the public event,
  GetTable and SubmitAction (gRPC, protobuf, asyncio);
* the table service's CPU per decision and its share of the two processes' CPU.

The peer (unless `--no-scripted`): the same number of 3-5-8 tables played on a fresh
table service by bench_table's scripted clients (a gRPC client per seat reading its view
and submitting a random listed move; one spectator watching each table) for the same
window — actions/s and the table service's CPU per action, so the bots' figures read as
ratios. Everything shares one (2-core, shared) machine with PostgreSQL and NATS: the
bench process, the table service and the bots compete for the same cores. Figures are
printed, never asserted (DESIGN.md §9).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import sys
import time
import urllib.request
import uuid
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from pathlib import Path

from kozyr.api.common.v1 import games_pb2, seats_pb2
from kozyr.api.table.v1 import table_service_pb2 as pb
from kozyr.bots.service import SERVICE_NAME as BOTS
from kozyr.client import TableClient
from kozyr.eventstore import migrate
from kozyr.infra import free_port
from kozyr.runtime.auth import Role

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # run as a script
from tests.bench.bench_clock import Process
from tests.bench.bench_table import (
    JWT_KEY,
    THREE_FIVE_EIGHT,
    ServiceProcess,
    cpu_seconds,
    run,
    scratch_database,
    servers,
    token,
    tree_cpu_seconds,
)

LEVELS = {"easy": seats_pb2.COMPUTER_LEVEL_EASY, "normal": seats_pb2.COMPUTER_LEVEL_NORMAL,
          "hard": seats_pb2.COMPUTER_LEVEL_HARD}  # fmt: skip
CREATE_CONCURRENCY = 16


@dataclass
class TableProcess(ServiceProcess):
    """bench_table's table service process, on a subject root the bots are told too."""

    root: str = field(default_factory=lambda: f"bench{uuid.uuid4().hex[:8]}")

    def environment(self) -> dict[str, str]:
        return {**super().environment(), "KOZYR_SUBJECT_ROOT": self.root}


@dataclass(frozen=True)
class BotsResult:
    level: str
    tables: int
    seconds: float
    decisions: int
    deciding: float
    """Seconds the bots spent choosing moves (their histogram's sum)."""
    bots_cpu: float
    table_cpu: float

    @property
    def rate(self) -> float:
        return self.decisions / self.seconds


@dataclass(frozen=True)
class ScriptedResult:
    tables: int
    seconds: float
    actions: int
    table_cpu: float

    @property
    def rate(self) -> float:
        return self.actions / self.seconds


def scrape(port: int) -> dict[str, float]:
    """The bots' samples this bench reads: applied moves and the decision time."""
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=5) as reply:
        text = reply.read().decode()
    found = {"applied": 0.0, "deciding": 0.0}
    for line in text.splitlines():
        if line.startswith('kozyr_bots_moves_total{outcome="applied"} '):
            found["applied"] = float(line.rsplit(" ", 1)[1])
        elif line.startswith("kozyr_bots_decision_seconds_sum{"):
            found["deciding"] += float(line.rsplit(" ", 1)[1])
    return found


async def open_tables(target: str, count: int, level: str) -> None:
    gate = asyncio.Semaphore(CREATE_CONCURRENCY)
    seats = [pb.SeatAssignment(computer=True, level=LEVELS[level])] * 3
    async with TableClient(target, token("matchmaker", Role.SERVICE)) as matchmaker:

        async def one() -> None:
            async with gate:
                await matchmaker.create_table(games_pb2.GAME_THREE_FIVE_EIGHT, seats)

        await asyncio.gather(*(one() for _ in range(count)))


@contextlib.asynccontextmanager
async def table_service(server_url: str, nats_url: str) -> AsyncIterator[TableProcess]:
    async with scratch_database(server_url) as database_url:
        await migrate(database_url)
        table = TableProcess(database_url, nats_url)
        await table.start()
        try:
            yield table
        finally:
            table.stop()


async def bots_run(args: argparse.Namespace, server_url: str, nats_url: str, level: str
                   ) -> BotsResult:  # fmt: skip
    async with table_service(server_url, nats_url) as table:
        metrics = free_port()
        bots = Process(
            "kozyr.bots",
            BOTS,
            {
                "KOZYR_NATS_URL": nats_url,
                "KOZYR_SUBJECT_ROOT": table.root,
                "KOZYR_JWT_KEY": JWT_KEY,
                "KOZYR_TABLE_TARGET": table.target,
                "KOZYR_BOTS_THINK_SECONDS": "0",
                "KOZYR_LOG_LEVEL": "WARNING",
                "KOZYR_METRICS_HOST": "127.0.0.1",
                "KOZYR_METRICS_PORT": str(metrics),
            },
        )
        await bots.start()
        try:
            print(f"{level}: {args.tables} tables …", file=sys.stderr)
            await open_tables(table.target, args.tables, level)
            await asyncio.sleep(args.warmup)
            before = await asyncio.to_thread(scrape, metrics)
            bots_cpu, table_cpu = cpu_seconds(bots.pid), tree_cpu_seconds(table.pid)
            started = time.perf_counter()
            await asyncio.sleep(args.window)
            after = await asyncio.to_thread(scrape, metrics)
            bots_cpu = cpu_seconds(bots.pid) - bots_cpu
            table_cpu = tree_cpu_seconds(table.pid) - table_cpu
            elapsed = time.perf_counter() - started
        finally:
            bots.stop()
    return BotsResult(
        level,
        args.tables,
        elapsed,
        int(after["applied"] - before["applied"]),
        after["deciding"] - before["deciding"],
        bots_cpu,
        table_cpu,
    )


async def scripted_run(args: argparse.Namespace, server_url: str, nats_url: str
                       ) -> ScriptedResult:  # fmt: skip
    async with table_service(server_url, nats_url) as table:
        print(f"scripted clients: {args.tables} tables …", file=sys.stderr)
        await run(table, 2, 20)  # warm-up: imports, caches, pools
        result = await run(table, args.tables, None, THREE_FIVE_EIGHT, seconds=args.window)
    return ScriptedResult(args.tables, result.seconds, result.actions, result.service_cpu)


def report(results: list[BotsResult], scripted: ScriptedResult | None) -> None:
    print(f"\none bots process, {results[0].tables} all-computer 3-5-8 tables, think 0:")
    print("| level | decisions/s | bots CPU ms/decision (choosing) | table CPU ms/decision "
          "| table's share of the CPU |")  # fmt: skip
    print("|---|---:|---:|---:|---:|")
    for r in results:
        share = f"{r.table_cpu / max(r.bots_cpu + r.table_cpu, 1e-9):.0%}"
        if not r.decisions:
            print(f"| {r.level} | 0 in {r.seconds:.0f} s | — | — | {share} |")
            continue
        n = r.decisions
        print(
            f"| {r.level} | {r.rate:.1f} | {1000 * r.bots_cpu / n:.2f} "
            f"({1000 * r.deciding / n:.2f}) | {1000 * r.table_cpu / n:.2f} | {share} |"
        )
    if scripted is None:
        return
    per_action = 1000 * scripted.table_cpu / max(scripted.actions, 1)
    print(
        f"\npeer: scripted clients on {scripted.tables} tables: {scripted.rate:.0f} actions/s, "
        f"table CPU {per_action:.2f} ms/action"
    )
    for r in (r for r in results if r.decisions):
        print(
            f"  {r.level}: decisions/s ×{r.rate / max(scripted.rate, 1e-9):.2f} of the scripted "
            f"clients' actions/s; table CPU per move ×"
            f"{(r.table_cpu / max(r.decisions, 1)) / max(per_action / 1000, 1e-9):.2f}"
        )


async def bench(args: argparse.Namespace, server_url: str, nats_url: str) -> None:
    results = [await bots_run(args, server_url, nats_url, level) for level in args.levels]
    scripted = None if args.no_scripted else await scripted_run(args, server_url, nats_url)
    report(results, scripted)


def main() -> None:
    args = parse_arguments()
    print(f"load average before: {os.getloadavg()[0]:.2f}", file=sys.stderr)
    with servers(durable=True) as (server_url, nats_url):
        asyncio.run(bench(args, server_url, nats_url))
    print(f"load average after: {os.getloadavg()[0]:.2f} (2 cores, shared)")


def parse_arguments() -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--tables", type=int, default=100)
    parser.add_argument("--window", type=float, default=60.0)
    parser.add_argument("--warmup", type=float, default=10.0)
    parser.add_argument("--levels", nargs="+", default=["normal", "easy"], choices=list(LEVELS))
    parser.add_argument("--no-scripted", action="store_true", help="skip the scripted peer")
    return parser.parse_args()


if __name__ == "__main__":
    main()
