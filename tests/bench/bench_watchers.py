"""Idle watchers: what do thousands of idle WatchTable streams cost the table service?

    .venv/bin/python tests/bench/bench_watchers.py [--tables 10000] [--window 30]
                                                   [--reads-per-second 30] [--per-channel 100]
                                                   [--playing 1000] [--move-seconds 5]
                                                   [--poll-seconds S] [--no-fsync]

Issue 8, defect 2: 2,600 idle watch streams on 2,600 tables used to take 99 % of a core
(each watcher's 10 s poll replayed its table, which the table cache had evicted) and
GetTable's p50 rose to 295 ms. Target: 10,000 idle streams on 10,000 tables in one
process cost under 5 % of a core and leave GetTable p99 under 20 ms.

PostgreSQL and NATS come from $KOZYR_DATABASE_URL / $KOZYR_NATS_URL, else kozyr.infra
starts embedded servers (fsync on unless --no-fsync). The table service runs as its own
process (`python -m kozyr.table`, as deployed) on a scratch database. `--tables` 3-5-8
tables are created (bounded concurrency), then the service is measured over five
windows of `--window` seconds (at least three watch-poll intervals each):

* no watchers, idle    nothing but the service's own background work;
* no watchers, reads   GetTable on random tables at `--reads-per-second` (open loop: a
                       read starts on schedule whether or not the previous one answered);
* watchers, idle       one WatchTable stream per table, opened from this process over
                       channels of `--per-channel` streams each (each channel its own
                       HTTP/2 connection), every stream's first view read, then nothing
                       happens on any table;
* watchers, reads      the same streams and the same read load as the second window;
* watchers, N in play  (issue 13) the first `--playing` tables played at a human pace
                       — after each move the next seat reads its view and thinks a
                       random time, `--move-seconds` on average — players on their own
                       connections, the streams and the read load as before.

Per window: the service's CPU as % of one core, GetTable p50 / p99 / max, and the views
the idle streams received (0 expected: nothing changes). Also: the service's RSS before
and after the streams opened, how long creating and opening took, and GetTable with /
without watchers. Figures are printed, never asserted (DESIGN.md §9); the bench runs on
the same shared 2-core machine as the service, PostgreSQL and NATS.
"""

from __future__ import annotations

import argparse
import asyncio
import math
import os
import random
import sys
import time
import uuid
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import grpc

from kozyr.api.common.v1 import games_pb2
from kozyr.api.table.v1 import table_service_pb2 as pb
from kozyr.api.table.v1 import table_service_pb2_grpc as pb_grpc
from kozyr.client import TableClient
from kozyr.eventstore import migrate
from kozyr.runtime.auth import Role

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # run as a script
from tests.bench.bench_table import (
    ServiceProcess,
    cpu_seconds,
    percentile,
    scratch_database,
    servers,
    token,
)
from tests.support.tables import PlayerClient

DEFAULT_POLL_SECONDS = 10.0
"""The service's KOZYR_WATCH_POLL_SECONDS default: one batched version read per interval."""
TARGET_CPU_PERCENT = 5.0
TARGET_GET_P99_MS = 20.0
TARGET_RSS_MIB = 1024
TARGET_PLAY_P99_MS = 25.0
CREATE_CONCURRENCY = 32
OPEN_CONCURRENCY = 200
"""Streams being opened at once: each opening loads its table and builds a view."""


@dataclass
class WatchedService(ServiceProcess):
    """The table service with its watch-poll interval set (None: the service's default)."""

    poll_seconds: float | None = None

    def environment(self) -> dict[str, str]:
        env = super().environment()
        if self.poll_seconds is not None:
            env["KOZYR_WATCH_POLL_SECONDS"] = str(self.poll_seconds)
        return env


def rss_mib(pid: int) -> float:
    """Resident set size of a process (Linux /proc), in MiB."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return math.nan


# -- tables -------------------------------------------------------------------------------


async def create_tables(target: str, count: int) -> tuple[list[str], list[list[str]]]:
    """`count` 3-5-8 tables, CREATE_CONCURRENCY CreateTable calls in flight at once:
    their ids and each one's players, by seat."""
    run = uuid.uuid4().hex[:6]
    gate = asyncio.Semaphore(CREATE_CONCURRENCY)
    seated = [[f"{run}-t{index}-p{seat}" for seat in range(3)] for index in range(count)]
    async with TableClient(target, token("watchbench-matchmaker", Role.SERVICE)) as client:

        async def create(index: int) -> str:
            async with gate:
                created = await client.create_table(games_pb2.GAME_THREE_FIVE_EIGHT, seated[index])
            return created.table_id

        return list(await asyncio.gather(*(create(i) for i in range(count)))), seated


# -- watchers -----------------------------------------------------------------------------


@dataclass
class Watchers:
    """One idle WatchTable stream per table, spread over channels of `per_channel` streams.

    Every channel has its own subchannel pool, hence its own TCP connection: channels
    with equal arguments would otherwise share one connection and all its streams.
    """

    target: str
    per_channel: int
    channels: list[grpc.aio.Channel] = field(default_factory=list)
    tasks: list[asyncio.Task[None]] = field(default_factory=list)
    views: int = 0
    """Views received after each stream's first one (an idle table sends none)."""
    failures: list[str] = field(default_factory=list)

    async def open(self, table_ids: Sequence[str]) -> None:
        """Open every stream and wait until each has delivered its first view."""
        metadata = (("authorization", f"Bearer {token('watchbench-spectator')}"),)
        options = [("grpc.use_local_subchannel_pool", 1)]
        gate = asyncio.Semaphore(OPEN_CONCURRENCY)
        opened: list[asyncio.Future[None]] = []
        for start in range(0, len(table_ids), self.per_channel):
            channel = grpc.aio.insecure_channel(self.target, options=options)
            self.channels.append(channel)
            stub = pb_grpc.TableServiceStub(channel)
            for table_id in table_ids[start : start + self.per_channel]:
                first: asyncio.Future[None] = asyncio.get_running_loop().create_future()
                opened.append(first)
                self.tasks.append(
                    asyncio.create_task(self._watch(stub, table_id, metadata, gate, first))
                )
        await asyncio.gather(*opened, return_exceptions=True)  # failures are counted

    async def _watch(
        self,
        stub: pb_grpc.TableServiceStub,
        table_id: str,
        metadata: tuple[tuple[str, str], ...],
        gate: asyncio.Semaphore,
        first: asyncio.Future[None],
    ) -> None:
        call = stub.WatchTable(pb.WatchTableRequest(table_id=table_id), metadata=metadata)
        try:
            async with gate:
                await call.read()
            first.set_result(None)
            while await call.read() is not grpc.aio.EOF:
                self.views += 1
        except grpc.aio.AioRpcError as error:
            self.failures.append(f"{error.code().name}: {error.details()}")
            if not first.done():
                first.set_exception(error)
        finally:
            call.cancel()

    @property
    def live(self) -> int:
        return sum(not task.done() for task in self.tasks)

    async def close(self) -> None:
        for task in self.tasks:
            task.cancel()
        await asyncio.gather(*self.tasks, return_exceptions=True)
        for channel in self.channels:
            await channel.close()


# -- one window ---------------------------------------------------------------------------


@dataclass(frozen=True)
class Window:
    name: str
    seconds: float
    service_cpu: float
    """CPU seconds the service used in the window."""
    client_cpu: float
    """CPU seconds this bench process used in the window."""
    reads: list[float]
    """GetTable latencies, seconds (empty: no read load in this window)."""
    failed_reads: int
    idle_views: int | None
    """Views the idle streams received in the window (None: no streams open)."""
    submits: list[float] = field(default_factory=list)
    """SubmitAction latencies of the tables in play, seconds (empty: none played)."""
    player_reads: list[float] = field(default_factory=list)
    """GetTable latencies of the players (the next seat's read), seconds."""

    def share(self, cpu: float) -> float:
        return 100 * cpu / self.seconds


async def read_load(
    client: TableClient, table_ids: Sequence[str], rate: float, until: float
) -> tuple[list[float], int]:
    """GetTable on random tables, `rate` per second on schedule, until `until`."""
    latencies: list[float] = []
    failed = 0
    rng = random.Random(8)

    async def read(table_id: str) -> None:
        nonlocal failed
        started = time.perf_counter()
        try:
            await client.get_table(table_id)
        except grpc.aio.AioRpcError:
            failed += 1
        else:
            latencies.append(time.perf_counter() - started)

    reads: list[asyncio.Task[None]] = []
    due = time.perf_counter()
    while due < until:
        await asyncio.sleep(max(0.0, due - time.perf_counter()))
        reads.append(asyncio.create_task(read(rng.choice(table_ids))))
        due += 1 / rate
    await asyncio.gather(*reads)
    return latencies, failed


async def measure(
    name: str,
    service: ServiceProcess,
    seconds: float,
    reader: TableClient | None,
    table_ids: Sequence[str],
    rate: float,
    watchers: Watchers | None,
) -> Window:
    """The service's CPU over `seconds` (and GetTable latencies if `reader` is given)."""
    print(f"window: {name} ({seconds:.0f} s) …", file=sys.stderr)
    views_before = watchers.views if watchers else 0
    service_before, client_before = cpu_seconds(service.pid), cpu_seconds(os.getpid())
    started = time.perf_counter()
    latencies: list[float] = []
    failed = 0
    if reader is None:
        await asyncio.sleep(seconds)
    else:
        latencies, failed = await read_load(reader, table_ids, rate, started + seconds)
    elapsed = time.perf_counter() - started
    return Window(
        name,
        elapsed,
        cpu_seconds(service.pid) - service_before,
        cpu_seconds(os.getpid()) - client_before,
        latencies,
        failed,
        watchers.views - views_before if watchers else None,
    )


# -- the run ------------------------------------------------------------------------------


@dataclass
class Run:
    """Everything one run measured, for the report."""

    tables: int
    playing: int = 0
    move_seconds: float = 0.0
    rss_start: float = 0.0
    """Before any table was created."""
    rss_tables: float = 0.0
    """After the tables were created and read, before the streams."""
    channels: int = 0
    poll_seconds: float = DEFAULT_POLL_SECONDS
    create_seconds: float = 0.0
    open_seconds: float = 0.0
    rss_before: float = 0.0
    rss_watching: float = 0.0
    rss_end: float = 0.0
    streams_live: int = 0
    failures: list[str] = field(default_factory=list)
    windows: list[Window] = field(default_factory=list)


async def bench(args: argparse.Namespace, server_url: str, nats_url: str) -> Run:
    poll = args.poll_seconds or DEFAULT_POLL_SECONDS
    seconds = max(args.window, 3 * poll)
    async with scratch_database(server_url) as database_url:
        await migrate(database_url)
        service = WatchedService(database_url, nats_url, poll_seconds=args.poll_seconds)
        await service.start()
        print(f"table service pid {service.pid}", file=sys.stderr)
        try:
            return await measure_service(
                service, args, Run(args.tables, poll_seconds=poll), seconds
            )
        finally:
            service.stop()


async def measure_service(
    service: ServiceProcess, args: argparse.Namespace, run: Run, seconds: float
) -> Run:
    """Create the tables, then the windows without streams, open them, the windows with."""
    print(f"creating {run.tables} tables …", file=sys.stderr)
    run.rss_start = rss_mib(service.pid)
    started = time.perf_counter()
    table_ids, seated = await create_tables(service.target, run.tables)
    run.create_seconds = time.perf_counter() - started
    load = Load(table_ids, args.reads_per_second, seconds)
    async with TableClient(service.target, token("watchbench-reader")) as reader:
        await read_load(reader, table_ids, load.rate, time.perf_counter() + 2)  # warm-up
        run.rss_before = run.rss_tables = rss_mib(service.pid)
        run.windows += await load.windows("no watchers", service, reader, None)
        watchers = Watchers(service.target, args.per_channel)
        print(f"opening {run.tables} watch streams …", file=sys.stderr)
        started = time.perf_counter()
        try:
            await watchers.open(table_ids)
            run.open_seconds = time.perf_counter() - started
            run.channels = len(watchers.channels)
            run.rss_watching = rss_mib(service.pid)
            run.windows += await load.windows("watchers", service, reader, watchers)
            if args.playing:
                run.playing, run.move_seconds = args.playing, args.move_seconds
                players = Players(service.target, table_ids[: args.playing], seated)
                run.windows.append(
                    await players.window(service, reader, load, watchers, args.move_seconds)
                )
            run.streams_live = watchers.live
            run.rss_end = rss_mib(service.pid)
        finally:
            run.failures = watchers.failures
            await watchers.close()
    return run


@dataclass(frozen=True)
class Load:
    """The windows' shape: how long each lasts, and the read load on which tables."""

    table_ids: Sequence[str]
    rate: float
    seconds: float

    async def windows(
        self, name: str, service: ServiceProcess, reader: TableClient, watchers: Watchers | None
    ) -> list[Window]:
        """An idle window, then one under the read load."""
        return [
            await measure(
                f"{name}, {kind}",
                service,
                self.seconds,
                client,
                self.table_ids,
                self.rate,
                watchers,
            )
            for kind, client in (("idle", None), ("reads", reader))
        ]


@dataclass
class Players:
    """Three players per table in play, each with his own token and connection."""

    target: str
    table_ids: Sequence[str]
    seated: Sequence[Sequence[str]]
    submits: list[float] = field(default_factory=list)
    reads: list[float] = field(default_factory=list)
    refused: int = 0

    async def window(
        self,
        service: ServiceProcess,
        reader: TableClient,
        load: Load,
        watchers: Watchers,
        move_seconds: float,
    ) -> Window:
        """`len(table_ids)` tables played at a human pace — after each move the next seat
        reads its view and thinks a random time (exponential, `move_seconds` on average)
        — while every stream stays open and the read load runs, for one window."""
        name = f"watchers, {len(self.table_ids)} in play"
        print(f"window: {name} ({load.seconds:.0f} s) …", file=sys.stderr)
        until = time.perf_counter() + load.seconds
        views_before = watchers.views
        service_before, client_before = cpu_seconds(service.pid), cpu_seconds(os.getpid())
        started = time.perf_counter()
        playing = [
            asyncio.create_task(self._play(i, until, move_seconds))
            for i in range(len(self.table_ids))
        ]
        latencies, failed = await read_load(reader, load.table_ids, load.rate, until)
        await asyncio.wait(playing, timeout=max(0.0, until - time.perf_counter()))
        elapsed = time.perf_counter() - started
        service_cpu = cpu_seconds(service.pid) - service_before
        client_cpu = cpu_seconds(os.getpid()) - client_before
        for task in playing:
            task.cancel()
        await asyncio.gather(*playing, return_exceptions=True)
        return Window(
            name,
            elapsed,
            service_cpu,
            client_cpu,
            latencies,
            failed,
            watchers.views - views_before,
            self.submits,
            self.reads,
        )

    async def _play(self, index: int, until: float, move_seconds: float) -> None:
        table_id, rng = self.table_ids[index], random.Random(index)
        clients = [PlayerClient(self.target, token(p)) for p in self.seated[index]]
        try:
            await asyncio.sleep(rng.uniform(0, move_seconds))  # tables start apart
            view = await self._read(clients[0], table_id)
            while time.perf_counter() < until and not view.finished:
                seat = view.turn.seats[0]
                if view.seat != seat:
                    view = await self._read(clients[seat], table_id)
                await asyncio.sleep(rng.expovariate(1 / move_seconds))
                if time.perf_counter() >= until:
                    return
                started = time.perf_counter()
                try:
                    reply = await clients[seat].submit(
                        table_id,
                        rng.choice(list(view.legal_actions)),
                        expected_version=view.version,
                    )
                except grpc.aio.AioRpcError:
                    self.refused += 1
                    view = await self._read(clients[seat], table_id)
                    continue
                self.submits.append(time.perf_counter() - started)
                view = reply.view
        finally:
            for client in clients:
                await client.close()

    async def _read(self, client: TableClient, table_id: str) -> Any:
        started = time.perf_counter()
        view = await client.get_table(table_id)
        self.reads.append(time.perf_counter() - started)
        return view


# -- report -------------------------------------------------------------------------------


def latency(values: Sequence[float]) -> str:
    if not values:
        return f"{'-':>8}{'-':>8}{'-':>8}{'-':>7}"
    p50, p99 = (percentile(values, q) * 1000 for q in (0.50, 0.99))
    return f"{p50:8.1f}{p99:8.1f}{max(values) * 1000:8.1f}{len(values):7}"


def report(run: Run, rate: float) -> None:
    print(
        f"\nIdle watchers: {run.tables} tables (created in {run.create_seconds:.0f} s), "
        f"{run.tables} WatchTable streams over {run.channels} channels (open in "
        f"{run.open_seconds:.0f} s); watch poll every {run.poll_seconds:g} s; "
        f"GetTable load {rate:g}/s on random tables"
    )
    print(
        f"\n{'window':20}{'seconds':>8}{'service CPU':>13}{'bench CPU':>11}"
        f"{'GetTable ms':>14}{'':10}{'reads':>7}{'failed':>8}{'idle views':>12}"
    )
    print(f"{'':20}{'':8}{'% of a core':>13}{'%':>11}{'p50':>8}{'p99':>8}{'max':>8}")
    for w in run.windows:
        views = "-" if w.idle_views is None else str(w.idle_views)
        print(
            f"{w.name:20}{w.seconds:8.0f}{w.share(w.service_cpu):13.1f}"
            f"{w.share(w.client_cpu):11.1f}{latency(w.reads)}{w.failed_reads:8}{views:>12}"
        )
    print(
        f"\nservice RSS: {run.rss_start:.0f} MiB before the tables, {run.rss_before:.0f} MiB "
        f"with them, {run.rss_watching:.0f} MiB with the streams open, {run.rss_end:.0f} MiB "
        f"at the end ({run.streams_live} of {run.tables} streams still open)"
    )
    per_table = (run.rss_before - run.rss_start) * 1024 / run.tables
    per_stream = (run.rss_watching - run.rss_before) * 1024 / run.tables
    print(f"RSS per open table {per_table:.1f} KiB, per watch stream {per_stream:.1f} KiB")
    for w in run.windows:
        if w.submits:
            p50, p99 = (percentile(w.submits, q) * 1000 for q in (0.5, 0.99))
            reads_p99 = percentile(w.player_reads, 0.99) * 1000
            print(
                f"{run.playing} tables in play (a move every {run.move_seconds:g} s each, "
                f"{len(w.submits) / w.seconds:.0f} moves/s): SubmitAction p50 / p99 "
                f"{p50:.1f} / {p99:.1f} ms, the players' GetTable p99 {reads_p99:.1f} ms, "
                f"service CPU {w.share(w.service_cpu):.0f} % of a core; views pushed "
                f"{w.idle_views}"
            )
            print(
                f"Target (issue 13): under {TARGET_RSS_MIB} MiB RSS, SubmitAction and GetTable "
                f"p99 ≤ {TARGET_PLAY_P99_MS:g} ms, the idle streams < {TARGET_CPU_PERCENT:g} % "
                "of a core (the idle window above)."
            )
    ratios(run.windows)
    if run.failures:
        print(f"stream failures: {len(run.failures)}, e.g. {run.failures[0]}")
    print(
        f"\nTarget (issue 8): 10,000 idle streams on 10,000 tables cost < "
        f"{TARGET_CPU_PERCENT:g} % of a core, GetTable p99 < {TARGET_GET_P99_MS:g} ms."
    )


def ratios(windows: Sequence[Window]) -> None:
    """With the streams / without: GetTable latency, and the CPU the streams add."""
    if len(windows) < 4:
        return
    idle_without, reads_without, idle_with, reads_with = windows[:4]
    p50, p99 = (
        percentile(reads_with.reads, q) / percentile(reads_without.reads, q) for q in (0.50, 0.99)
    )
    print(f"GetTable with / without watchers: p50 ×{p50:.2f}, p99 ×{p99:.2f}")
    print(
        "service CPU the open streams add (with − without): "
        f"idle {delta(idle_with, idle_without):+.1f}, "
        f"under reads {delta(reads_with, reads_without):+.1f} % of a core"
    )


def delta(with_: Window, without: Window) -> float:
    return with_.share(with_.service_cpu) - without.share(without.service_cpu)


# -- main ---------------------------------------------------------------------------------


def main() -> None:
    args = parse_arguments()
    print(f"load average before: {os.getloadavg()[0]:.2f}", file=sys.stderr)
    with servers(durable=not args.no_fsync) as (server_url, nats_url):
        run = asyncio.run(bench(args, server_url, nats_url))
    report(run, args.reads_per_second)
    print(f"load average after: {os.getloadavg()[0]:.2f} (2 cores, shared)")


def parse_arguments() -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--tables", type=int, default=10_000, help="tables, one stream each")
    parser.add_argument("--window", type=float, default=30.0, help="seconds per window")
    parser.add_argument("--reads-per-second", type=float, default=30.0)
    parser.add_argument("--per-channel", type=int, default=100, help="streams per channel")
    parser.add_argument(
        "--poll-seconds", type=float, default=None, help="KOZYR_WATCH_POLL_SECONDS (default 10)"
    )
    parser.add_argument(
        "--playing", type=int, default=1_000, help="tables played in the last window (0: none)"
    )
    parser.add_argument(
        "--move-seconds", type=float, default=5.0, help="mean time between a table's moves"
    )
    parser.add_argument("--no-fsync", action="store_true", help="embedded PostgreSQL only")
    return parser.parse_args()


if __name__ == "__main__":
    main()
