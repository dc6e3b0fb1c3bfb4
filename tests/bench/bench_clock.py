"""The clock service: how late are expiries with 1,000 tables, what does one cost, and how
many presence heartbeats per second does a replica take?

    .venv/bin/python tests/bench/bench_clock.py [--tables 1000] [--turn 10] [--window 60]
                                                [--players 200] [--presence-window 20]

Issue 10's target: with 1,000 open tables whose turns expire, expiry happens within 1 s
of the deadline at p99.

PostgreSQL and NATS come from $KOZYR_DATABASE_URL / $KOZYR_NATS_URL, else embedded
servers; a NATS older than 2.12 (no message schedules) is replaced by an embedded one.
The table service and one clock replica run as processes (`python -m kozyr.table`,
`python -m kozyr.clock`). `--tables` 3-5-8 tables are opened with turns of the minimum
10 s, and nobody plays: every turn runs out, so the clock expires 1,000 turns every
`--turn` seconds (the clock runs 10 - `--turn` s ahead of the wall clock). After a
warm-up of one turn, for `--window` seconds:

* lateness: from each deadline (as the clock sees it) to the moment JetStream stored the
  turn's `TurnEnded(expired)` — the clock's timer, its ExpireTurn call, the table's
  append and the relay's publish, everything a watching service waits for;
* the clock's CPU per expiry (user + system seconds of its process / expiries), and the
  table service's, for scale.

Then presence: `--players` players send heartbeats back to back for `--presence-window`
seconds; heartbeats per second and the clock's CPU per heartbeat. Figures are printed,
never asserted (DESIGN.md §9); everything shares one 2-core machine.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import subprocess
import sys
import tempfile
import time
import urllib.request
import uuid
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path

import grpc
import nats
from grpc_health.v1 import health_pb2, health_pb2_grpc
from nats.aio.msg import Msg

from kozyr.api.common.v1 import games_pb2
from kozyr.api.table.v1 import events_pb2
from kozyr.api.table.v1 import table_service_pb2 as pb
from kozyr.client import ClockClient, TableClient
from kozyr.clock.service import SERVICE_NAME as CLOCK
from kozyr.eventstore import migrate
from kozyr.infra import EmbeddedNats, free_port
from kozyr.infra.servers import stop_process
from kozyr.runtime.auth import Role
from kozyr.table.service import SERVICE_NAME as TABLE

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # run as a script
from tests.bench.bench_table import (
    JWT_KEY,
    START_TIMEOUT,
    cpu_seconds,
    percentile,
    scratch_database,
    servers,
    token,
)

TURN_SECONDS = 10
STAGES = {
    "fired": "NATS stored the fired timer",
    "received": "the clock took it",
    "answered": "ExpireTurn answered",
}
CREATE_CONCURRENCY = 32
PLAYERS = ["ana", "bogdan", "chiara"]


@dataclass
class Process:
    """`python -m <module>` on a free port with KOZYR_* settings, stopped with SIGTERM."""

    module: str
    health_service: str
    settings: dict[str, str]
    port: int = field(default_factory=free_port)
    process: subprocess.Popen[bytes] | None = None

    @property
    def target(self) -> str:
        return f"127.0.0.1:{self.port}"

    @property
    def pid(self) -> int:
        assert self.process is not None
        return self.process.pid

    async def start(self) -> None:
        env = {k: v for k, v in os.environ.items() if not k.startswith("KOZYR_")}
        env.update(self.settings, KOZYR_GRPC_HOST="127.0.0.1", KOZYR_GRPC_PORT=str(self.port))
        self.process = subprocess.Popen(  # noqa: ASYNC220 — spawning does not block
            [sys.executable, "-m", self.module], env=env
        )
        request = health_pb2.HealthCheckRequest(service=self.health_service)
        async with (
            asyncio.timeout(START_TIMEOUT),
            grpc.aio.insecure_channel(self.target) as channel,
        ):
            health = health_pb2_grpc.HealthStub(channel)
            while True:
                if self.process.poll() is not None:
                    raise RuntimeError(f"{self.module} exited with {self.process.returncode}")
                with contextlib.suppress(grpc.aio.AioRpcError):
                    reply = await health.Check(request, timeout=1.0, wait_for_ready=True)
                    if reply.status == health_pb2.HealthCheckResponse.SERVING:
                        return
                await asyncio.sleep(0.1)

    def stop(self) -> None:
        stop_process(self.process)


@dataclass
class Expiries:
    """Expired turns seen on the public tree: (stored at, deadline) per turn."""

    offset: float
    deadlines: dict[tuple[str, int], datetime] = field(default_factory=dict)
    lateness: list[tuple[float, float]] = field(default_factory=list)
    """(monotonic time seen, seconds late)."""

    async def on(self, message: Msg) -> None:
        event = events_pb2.PublicTableEvent.FromString(message.data)
        which = event.WhichOneof("event")
        if which == "turn_started" and event.turn_started.HasField("deadline"):
            deadline = event.turn_started.deadline.ToDatetime(tzinfo=UTC)
            due = deadline - timedelta(seconds=self.offset)
            self.deadlines[(event.table_id, event.turn_started.number)] = due
        elif which == "turn_ended" and event.turn_ended.how == events_pb2.TURN_END_EXPIRED:
            key = (event.table_id, event.turn_ended.number)
            if key in self.deadlines:
                due = self.deadlines.pop(key)
                stored = message.metadata.timestamp.replace(tzinfo=UTC)
                self.lateness.append((time.monotonic(), (stored - due).total_seconds()))

    def since(self, start: float) -> list[float]:
        return [late for seen, late in self.lateness if seen >= start]


@contextlib.contextmanager
def schedules_nats(nats_url: str) -> Iterator[str]:
    """`nats_url` if it keeps message schedules (2.12+), else an embedded server's."""
    version = asyncio.run(_version(nats_url))
    if version >= (2, 12):
        yield nats_url
        return
    with tempfile.TemporaryDirectory(prefix="kozyr-bench-clock-") as scratch:
        server = EmbeddedNats(Path(scratch) / "nats")
        server.start()
        try:
            yield server.url
        finally:
            server.stop()


async def _version(url: str) -> tuple[int, ...]:
    nc = await nats.connect(url)
    version = str(nc._server_info.get("version", "0.0"))
    await nc.close()
    return tuple(int(p) for p in version.split("-")[0].split(".")[:2])


async def lateness_buckets(port: int, stage: str) -> dict[float, float]:
    """The clock's cumulative lateness histogram of one stage: upper bound → count."""

    def scrape() -> str:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=5) as reply:
            return str(reply.read().decode())

    found: dict[float, float] = {}
    for line in (await asyncio.to_thread(scrape)).splitlines():
        if line.startswith("kozyr_clock_expiry_lateness_seconds_bucket{") and (
            f'stage="{stage}"' in line
        ):
            bound = line.split('le="')[1].split('"')[0]
            found[float(bound)] = float(line.rsplit(" ", 1)[1])
    return found


def bucket_delta(after: dict[float, float], before: dict[float, float]) -> dict[float, float]:
    return {bound: count - before.get(bound, 0.0) for bound, count in after.items()}


def bucket_percentile(cumulative: dict[float, float], share: float) -> float:
    """The smallest bucket bound holding `share` of the observations."""
    total = max(cumulative.values(), default=0.0)
    for bound in sorted(cumulative):
        if total and cumulative[bound] >= share * total:
            return bound
    return float("inf")


async def open_tables(target: str, count: int) -> list[str]:
    gate = asyncio.Semaphore(CREATE_CONCURRENCY)
    options = pb.ThreeFiveEightOptions(turn_seconds=TURN_SECONDS)
    async with TableClient(target, token("matchmaker", Role.SERVICE)) as mm:

        async def one() -> str:
            async with gate:
                created = await mm.create_table(
                    games_pb2.GAME_THREE_FIVE_EIGHT, PLAYERS, three_five_eight=options
                )
                return created.table_id

        return list(await asyncio.gather(*(one() for _ in range(count))))


@contextlib.asynccontextmanager
async def stack(
    database_url: str, nats_url: str, offset: float
) -> AsyncIterator[tuple[Process, Process, str, int]]:
    root = f"bench{uuid.uuid4().hex[:8]}"
    metrics_port = free_port()
    common = {
        "KOZYR_DATABASE_URL": database_url,
        "KOZYR_NATS_URL": nats_url,
        "KOZYR_SUBJECT_ROOT": root,
        "KOZYR_JWT_KEY": JWT_KEY,
        "KOZYR_LOG_LEVEL": "WARNING",
    }
    table = Process("kozyr.table", TABLE, dict(common))
    await table.start()
    clock = Process(
        "kozyr.clock",
        CLOCK,
        {
            **common,
            "KOZYR_TABLE_TARGET": table.target,
            "KOZYR_CLOCK_TIME_OFFSET_SECONDS": str(offset),
            "KOZYR_CLOCK_COVER_AFTER_SECONDS": "36000",
            "KOZYR_GRPC_MAX_CONCURRENT_CALLS": "5000",
            "KOZYR_METRICS_HOST": "127.0.0.1",
            "KOZYR_METRICS_PORT": str(metrics_port),
        },
    )
    try:
        await clock.start()
        yield table, clock, root, metrics_port
    finally:
        clock.stop()
        table.stop()
        with contextlib.suppress(Exception):
            await _cleanup(nats_url, root)


async def _cleanup(nats_url: str, root: str) -> None:
    nc = await nats.connect(nats_url)
    js = nc.jetstream()
    for info in await js.streams_info():
        name = info.config.name or ""
        if root.upper() in name:
            await js.delete_stream(name)
    await nc.close()


async def expiries(args: argparse.Namespace, database_url: str, nats_url: str) -> None:
    offset = TURN_SECONDS - args.turn
    async with stack(database_url, nats_url, offset) as (table, clock, root, metrics):
        seen = Expiries(offset)
        nc = await nats.connect(nats_url)
        tap = await nc.jetstream().subscribe(
            f"{root}.public.table.>", cb=seen.on, ordered_consumer=True
        )
        started = time.perf_counter()
        await open_tables(table.target, args.tables)
        print(f"{args.tables} tables opened in {time.perf_counter() - started:.1f} s")
        await asyncio.sleep(args.turn * 1.5)  # warm-up: every table's first turn has run out
        clock_cpu, table_cpu = cpu_seconds(clock.pid), cpu_seconds(table.pid)
        buckets = {stage: await lateness_buckets(metrics, stage) for stage in STAGES}
        start = time.monotonic()
        await asyncio.sleep(args.window)
        stages = {
            stage: bucket_delta(await lateness_buckets(metrics, stage), buckets[stage])
            for stage in STAGES
        }
        clock_cpu, table_cpu = (
            cpu_seconds(clock.pid) - clock_cpu,
            cpu_seconds(table.pid) - table_cpu,
        )
        late = seen.since(start)
        await tap.unsubscribe()
        await nc.close()
    if not late:
        print("no expiry seen in the window")
        return
    p50, p99 = percentile(late, 0.5), percentile(late, 0.99)
    print(
        f"{len(late)} expiries in {args.window} s ({len(late) / args.window:.0f}/s) on "
        f"{args.tables} tables, one every {args.turn} s per table"
    )
    print(
        f"lateness deadline → TurnEnded stored: p50 {p50 * 1000:.0f} ms, p99 {p99 * 1000:.0f} ms, "
        f"max {max(late) * 1000:.0f} ms; within 1 s: {sum(x <= 1 for x in late) / len(late):.1%}"
    )
    for stage, counts in stages.items():
        print(
            f"lateness deadline → {STAGES[stage]} (the clock's histogram, bucket bounds): "
            f"p50 ≤ {bucket_percentile(counts, 0.5)} s, p99 ≤ {bucket_percentile(counts, 0.99)} s"
        )
    print(
        f"CPU per expiry: clock {clock_cpu / len(late) * 1000:.2f} ms "
        f"({clock_cpu / args.window:.0%} of a core), table service "
        f"{table_cpu / len(late) * 1000:.2f} ms ({table_cpu / args.window:.0%} of a core)"
    )


async def presence(args: argparse.Namespace, database_url: str, nats_url: str) -> None:
    async with stack(database_url, nats_url, 0.0) as (_, clock, _root, _metrics):
        stop = asyncio.Event()
        counts = [0] * args.players

        async def player(index: int) -> None:
            async with ClockClient(clock.target, token(f"p{index}")) as me:
                while not stop.is_set():
                    await me.heartbeat()
                    counts[index] += 1

        before = cpu_seconds(clock.pid)
        tasks = [asyncio.create_task(player(i)) for i in range(args.players)]
        await asyncio.sleep(args.presence_window)
        stop.set()
        await asyncio.gather(*tasks)
        cpu = cpu_seconds(clock.pid) - before
    total = sum(counts)
    print(
        f"presence: {total / args.presence_window:.0f} heartbeats/s from {args.players} players "
        f"back to back; clock CPU {cpu / total * 1000:.2f} ms per heartbeat "
        f"({cpu / args.presence_window:.0%} of a core)"
    )


async def bench(args: argparse.Namespace, server_url: str, nats_url: str) -> None:
    async with scratch_database(server_url) as database_url:
        await migrate(database_url)
        await expiries(args, database_url, nats_url)
    async with scratch_database(server_url) as database_url:
        await migrate(database_url)
        await presence(args, database_url, nats_url)


def main() -> None:
    args = parse_arguments()
    with servers(durable=True) as (server_url, env_nats), schedules_nats(env_nats) as nats_url:
        asyncio.run(bench(args, server_url, nats_url))


def parse_arguments() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tables", type=int, default=1000)
    parser.add_argument("--turn", type=float, default=10.0, help="seconds each turn lasts")
    parser.add_argument("--window", type=float, default=60.0)
    parser.add_argument("--players", type=int, default=200)
    parser.add_argument("--presence-window", type=float, default=20.0)
    return parser.parse_args()


if __name__ == "__main__":
    main()
