"""Table service throughput and latency: N concurrent 3-5-8 tables played over gRPC.

    .venv/bin/python tests/bench/bench_table.py [--tables 1 10 100] [--max-actions 100]
                                                [--full] [--no-fsync] [--profile]

PostgreSQL and NATS come from $KOZYR_DATABASE_URL / $KOZYR_NATS_URL, else kozyr.infra
starts embedded servers in a temporary directory (fsync on unless --no-fsync). A
scratch database is created, migrated and dropped. The table service runs as its own
process, exactly as deployed: `python -m kozyr.table`, configured by KOZYR_* variables.

Each table has three scripted players, one client (token, channel) per seat. The seat
whose turn it is reads its own view (GetTable, or the view its last SubmitAction
returned), picks one of `view.legal_actions` and submits it pinned to `view.version`;
the turn then passes to the next seat, which reads its view. One spectator per table
follows the table with WatchTable. Measured per N (tables played concurrently):

* actions/s — accepted SubmitActions per second of wall time, all tables together;
* SubmitAction latency p50/p95/p99 (and GetTable, the next seat's read);
* append → watcher: from the SubmitAction response arriving at the player to the
  spectator's first view of that version or a newer one (negative when the watcher's
  view arrives before the mover's response: both run in this one client process).

--profile samples the service process with py-spy (`.venv/bin/pip install py-spy`)
during the largest run and prints its busiest functions (self and inclusive share of
the samples in which the service was running Python, not waiting).

A full 3-5-8 game is 18 deals (~900 moves); tables counts from --cap-from (default 100)
play only their first --max-actions moves, unless --full. Figures are printed, never
asserted (DESIGN.md §9). The bench clients run on the same (2-core, shared) machine as
the service, PostgreSQL and NATS, and compete with them for CPU.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import random
import signal
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import AsyncIterator, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import asyncpg
import grpc
from grpc_health.v1 import health_pb2, health_pb2_grpc

from kozyr.api.common.v1 import games_pb2
from kozyr.api.table.v1 import views_pb2
from kozyr.client import TableClient
from kozyr.eventstore import migrate
from kozyr.infra import free_port, libpq_dsn, provision
from kozyr.runtime.auth import Role, mint_token
from kozyr.table.service import SERVICE_NAME

JWT_KEY = "kozyr-bench-secret-kozyr-bench-secret-0123456789"
START_TIMEOUT = 60.0
TARGET_ACTIONS_PER_SECOND = 1_000
TARGET_P99_MS = 30.0


def token(subject: str, role: Role = Role.PLAYER) -> str:
    return mint_token(subject, role, key=JWT_KEY)


# -- infrastructure -----------------------------------------------------------------------


@contextlib.contextmanager
def servers(durable: bool) -> Iterator[tuple[str, str]]:
    """(database server URL, NATS URL): from the environment, else embedded servers
    in a temporary directory (kozyr.infra.provision decides)."""
    with (
        tempfile.TemporaryDirectory(prefix="kozyr-bench-table-") as scratch,
        provision(Path(scratch), durable=durable, use_docker=False) as infra,
    ):
        yield infra.database_url, infra.nats_url


@contextlib.asynccontextmanager
async def scratch_database(server_url: str) -> AsyncIterator[str]:
    name = f"kozyr_bench_{uuid.uuid4().hex[:8]}"
    base, _, _ = server_url.rpartition("/")
    admin = await asyncpg.connect(libpq_dsn(server_url))
    await admin.execute(f'CREATE DATABASE "{name}"')
    await admin.close()
    try:
        yield f"{base}/{name}"
    finally:
        admin = await asyncpg.connect(libpq_dsn(server_url))
        await admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        await admin.close()


@dataclass
class ServiceProcess:
    """`python -m kozyr.table` on a free port, stopped with SIGTERM."""

    database_url: str
    nats_url: str
    port: int = field(default_factory=free_port)
    process: subprocess.Popen[bytes] | None = None

    @property
    def target(self) -> str:
        return f"127.0.0.1:{self.port}"

    @property
    def pid(self) -> int:
        assert self.process is not None, "the service is not running"
        return self.process.pid

    def environment(self) -> dict[str, str]:
        env = {k: v for k, v in os.environ.items() if not k.startswith("KOZYR_")}
        env.update(
            KOZYR_DATABASE_URL=self.database_url,
            KOZYR_NATS_URL=self.nats_url,
            KOZYR_SUBJECT_ROOT=f"bench{uuid.uuid4().hex[:8]}",
            KOZYR_JWT_KEY=JWT_KEY,
            KOZYR_GRPC_HOST="127.0.0.1",
            KOZYR_GRPC_PORT=str(self.port),
            KOZYR_LOG_LEVEL="WARNING",
        )
        return env

    async def start(self) -> None:
        self.process = subprocess.Popen(  # noqa: ASYNC220 — spawning does not block
            [sys.executable, "-m", "kozyr.table"], env=self.environment()
        )
        request = health_pb2.HealthCheckRequest(service=SERVICE_NAME)
        async with (
            asyncio.timeout(START_TIMEOUT),
            grpc.aio.insecure_channel(self.target) as channel,
        ):
            health = health_pb2_grpc.HealthStub(channel)
            while True:
                if self.process.poll() is not None:
                    raise RuntimeError(f"kozyr.table exited with {self.process.returncode}")
                with contextlib.suppress(grpc.aio.AioRpcError):
                    reply = await health.Check(request, timeout=1.0, wait_for_ready=True)
                    if reply.status == health_pb2.HealthCheckResponse.SERVING:
                        return
                await asyncio.sleep(0.1)

    def stop(self) -> None:
        if self.process is None or self.process.poll() is not None:
            return
        self.process.send_signal(signal.SIGTERM)
        try:
            self.process.wait(20)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()


# -- one table ----------------------------------------------------------------------------


@dataclass
class Samples:
    """Everything measured in one run (all tables together), in seconds."""

    submit: list[float] = field(default_factory=list)
    get: list[float] = field(default_factory=list)
    to_watcher: list[float] = field(default_factory=list)
    refused: int = 0
    finished: int = 0


@dataclass
class Table:
    """One table: a client per seat, a spectator, and when each version was seen."""

    table_id: str
    seats: list[TableClient]
    watcher: TableClient
    rng: random.Random
    applied_at: dict[int, float] = field(default_factory=dict)
    """version → when the mover received the SubmitAction response that made it."""
    watched: list[tuple[int, float]] = field(default_factory=list)
    """(version, when the spectator received it), in arrival order."""
    first_view: asyncio.Event = field(default_factory=asyncio.Event)

    async def close(self) -> None:
        for client in [*self.seats, self.watcher]:
            await client.close()

    async def watch(self) -> None:
        """Record every view the spectator receives until the table finishes."""
        async for view in self.watcher.watch(self.table_id):
            self.watched.append((view.version, time.perf_counter()))
            self.first_view.set()
            if view.finished:
                return

    async def play(self, max_actions: int | None, samples: Samples) -> int:
        """Play until the end (or `max_actions` accepted moves); returns the moves made."""
        view = await self._read(0, samples)
        actions = 0
        while not view.finished and (max_actions is None or actions < max_actions):
            seat = view.turn.seats[0]
            if view.seat != seat:
                view = await self._read(seat, samples)
            moves = list(view.legal_actions)
            started = time.perf_counter()
            try:
                reply = await self.seats[seat].submit(
                    self.table_id, self.rng.choice(moves), expected_version=view.version
                )
            except grpc.aio.AioRpcError:
                samples.refused += 1
                view = await self._read(seat, samples)
                continue
            done = time.perf_counter()
            samples.submit.append(done - started)
            self.applied_at[reply.view.version] = done
            actions += 1
            view = reply.view
        samples.finished += view.finished
        return actions

    async def _read(self, seat: int, samples: Samples) -> views_pb2.TableView:
        started = time.perf_counter()
        view = await self.seats[seat].get_table(self.table_id)
        samples.get.append(time.perf_counter() - started)
        return view

    def watcher_delays(self) -> list[float]:
        """Per accepted move: the spectator's first view at least that new, minus the reply."""
        delays = []
        for version, applied in self.applied_at.items():
            seen = next((t for v, t in self.watched if v >= version), None)
            if seen is not None:
                delays.append(seen - applied)
        return delays


async def open_tables(target: str, count: int, run: str) -> list[Table]:
    async with TableClient(target, token("matchmaker", Role.SERVICE)) as matchmaker:
        tables = []
        for index in range(count):
            players = [f"{run}-t{index}-p{seat}" for seat in range(3)]
            created = await matchmaker.create_table(games_pb2.GAME_THREE_FIVE_EIGHT, players)
            tables.append(
                Table(
                    created.table_id,
                    [TableClient(target, token(p)) for p in players],
                    TableClient(target, token(f"{run}-t{index}-spectator")),
                    random.Random(index),
                )
            )
        return tables


# -- one run ------------------------------------------------------------------------------


@dataclass(frozen=True)
class Result:
    tables: int
    max_actions: int | None
    actions: int
    seconds: float
    samples: Samples
    service_cpu: float
    """CPU seconds the service process used during the run."""
    client_cpu: float
    """CPU seconds this bench process (every client) used during the run."""

    @property
    def rate(self) -> float:
        return self.actions / self.seconds


def cpu_seconds(pid: int) -> float:
    """User + system CPU time of a process so far (Linux /proc)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


async def run(service: ServiceProcess, count: int, max_actions: int | None) -> Result:
    """`count` tables played concurrently, each by its own clients and spectator."""
    tables = await open_tables(service.target, count, f"r{uuid.uuid4().hex[:6]}")
    watchers = [asyncio.create_task(t.watch()) for t in tables]
    await asyncio.gather(*(t.first_view.wait() for t in tables))
    samples = Samples()
    service_before, client_before = cpu_seconds(service.pid), cpu_seconds(os.getpid())
    started = time.perf_counter()
    actions = await asyncio.gather(*(t.play(max_actions, samples) for t in tables))
    seconds = time.perf_counter() - started
    service_cpu = cpu_seconds(service.pid) - service_before
    client_cpu = cpu_seconds(os.getpid()) - client_before
    await asyncio.sleep(0.5)  # let the spectators receive the last moves
    for task in watchers:
        task.cancel()
    await asyncio.gather(*watchers, return_exceptions=True)
    for table in tables:
        samples.to_watcher.extend(table.watcher_delays())
        await table.close()
    return Result(count, max_actions, sum(actions), seconds, samples, service_cpu, client_cpu)


# -- profile ------------------------------------------------------------------------------


@contextlib.contextmanager
def sampled(pid: int, output: Path) -> Iterator[None]:
    """py-spy samples process `pid` for the duration of the block (raw collapsed stacks)."""
    spy = Path(sys.executable).with_name("py-spy")
    command = [str(spy), "record", "--pid", str(pid), "--rate", "200", "--nonblocking"]
    recorder = subprocess.Popen(
        [*command, "--format", "raw", "--output", str(output)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        yield
    finally:
        recorder.send_signal(signal.SIGINT)
        recorder.wait(60)


def hotspots(collapsed: Path, top: int = 25) -> None:
    """The functions the service spent its samples in: self (innermost) and inclusive."""
    own: dict[str, int] = {}
    inclusive: dict[str, int] = {}
    total = 0
    for line in collapsed.read_text().splitlines():
        stack, _, count_text = line.rpartition(" ")
        if not stack:
            continue
        count = int(count_text)
        frames = [_short(frame) for frame in stack.split(";")]
        total += count
        own[frames[-1]] = own.get(frames[-1], 0) + count
        for frame in set(frames):
            inclusive[frame] = inclusive.get(frame, 0) + count
    print(f"\nService profile: {total} busy samples (py-spy, 200 Hz)")
    for title, table in (("self", own), ("inclusive", inclusive)):
        print(f"  top {top} by {title} time")
        for frame, count in sorted(table.items(), key=lambda kv: -kv[1])[:top]:
            print(f"    {100 * count / max(total, 1):5.1f}%  {frame}")


def _short(frame: str) -> str:
    """`name (path/to/pkg/module.py:12)` → `name (pkg/module.py)`: one entry per function."""
    name, _, where = frame.partition(" (")
    path = where.rstrip(")").rpartition(":")[0] or where.rstrip(")")
    tail = "/".join(Path(path).parts[-2:])
    return f"{name} ({tail})"


# -- report -------------------------------------------------------------------------------


def percentile(values: Sequence[float], share: float) -> float:
    """Nearest-rank percentile (`share` in 0..1)."""
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(share * len(ordered)) - 1))]


def ms(values: Sequence[float]) -> str:
    if not values:
        return f"{'-':>23}"
    p50, p95, p99 = (percentile(values, q) * 1000 for q in (0.50, 0.95, 0.99))
    return f"{p50:7.1f}{p95:8.1f}{p99:8.1f}"


def report(results: Sequence[Result]) -> None:
    print(
        "\ntables  moves/table  actions  seconds  actions/s   "
        "SubmitAction ms         GetTable ms             append→watcher ms   refused"
        "  CPU service/clients"
    )
    print(
        f"{'':50}{'p50     p95     p99':>24}{'p50     p95     p99':>24}{'p50     p95     p99':>24}"
    )
    for r in results:
        per_table = "full game" if r.max_actions is None else f"first {r.max_actions}"
        print(
            f"{r.tables:>6}  {per_table:>11}  {r.actions:>7}  {r.seconds:7.1f}  {r.rate:9.0f}  "
            f"{ms(r.samples.submit)} {ms(r.samples.get)} {ms(r.samples.to_watcher)}"
            f"  {r.samples.refused:>7}  {100 * r.service_cpu / r.seconds:5.0f}% "
            f"{100 * r.client_cpu / r.seconds:5.0f}%"
        )
    print(
        f"\nTarget (issue 5): {TARGET_ACTIONS_PER_SECOND} actions/s with SubmitAction p99 < "
        f"{TARGET_P99_MS:.0f} ms at 100 tables."
    )


# -- main ---------------------------------------------------------------------------------


async def bench(args: argparse.Namespace, server_url: str, nats_url: str) -> list[Result]:
    async with scratch_database(server_url) as database_url:
        await migrate(database_url)
        service = ServiceProcess(database_url, nats_url)
        await service.start()
        print(f"table service pid {service.pid}", file=sys.stderr)
        try:
            await run(service, 2, 20)  # warm-up: imports, caches, pools
            return [await measure(service, count, args) for count in args.tables]
        finally:
            service.stop()


async def measure(service: ServiceProcess, count: int, args: argparse.Namespace) -> Result:
    """One run of `count` tables (py-spy on the service for the largest, if asked)."""
    capped = not args.full and count >= args.cap_from
    print(f"{count} table(s) …", file=sys.stderr)
    play = run(service, count, args.max_actions if capped else None)
    if not (args.profile and count == max(args.tables)):
        return await play
    with tempfile.TemporaryDirectory() as scratch:
        collapsed = Path(scratch) / "service.txt"
        with sampled(service.pid, collapsed):
            result = await play
        hotspots(collapsed)
    return result


def main() -> None:
    args = parse_arguments()
    print(f"load average before: {os.getloadavg()[0]:.2f}", file=sys.stderr)
    with servers(durable=not args.no_fsync) as (server_url, nats_url):
        results = asyncio.run(bench(args, server_url, nats_url))
    report(results)
    print(f"load average after: {os.getloadavg()[0]:.2f} (2 cores, shared)")


def parse_arguments() -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--tables", type=int, nargs="+", default=[1, 10, 100])
    parser.add_argument("--max-actions", type=int, default=100, help="moves per capped table")
    parser.add_argument("--cap-from", type=int, default=100, help="cap tables counts ≥ this")
    parser.add_argument("--full", action="store_true", help="every table plays a full game")
    parser.add_argument("--no-fsync", action="store_true", help="embedded PostgreSQL only")
    parser.add_argument("--profile", action="store_true", help="py-spy the largest run")
    return parser.parse_args()


if __name__ == "__main__":
    main()
