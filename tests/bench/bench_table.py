"""Table service throughput, CPU and latency against the floor, over gRPC (issue 13).

    .venv/bin/python tests/bench/bench_table.py [--tables 1 10 100] [--khozor-tables 100]
        [--max-actions 100] [--open-tables 300] [--open-seconds 30] [--workers 1]
        [--scaling 2] [--full] [--no-fsync] [--profile]
        [--watching-tables 100] [--watching-khozor-tables 50] [--watching-seconds 15]
        [--human-tables 250 500 1000] [--human-khozor-tables 100 200 400]
        [--human-seconds 30] [--spectators 20] [--spectator-rounds 3]
        [--watching-workers 2] [--client-cpu 0.5]

PostgreSQL and NATS come from $KOZYR_DATABASE_URL / $KOZYR_NATS_URL, else kozyr.infra
starts embedded servers in a temporary directory (fsync on unless --no-fsync). A
scratch database is created, migrated and dropped. The table service runs as its own
process, exactly as deployed: `python -m kozyr.table`, configured by KOZYR_* variables
(`--workers` sets KOZYR_TABLE_WORKERS).

The floor (`tests/bench/floor.py`): a separate bare `grpc.aio` process whose handler
commits one ~300-byte row through an asyncpg pool of the service's size, called by the
same client machinery (`ServiceClient`) at the same concurrency just before each table
count is played: calls/s, p50/p99 and its CPU per call. Every figure of the service is
also printed as a ratio to it.

Each table has one scripted player per seat, one client (token, channel) each. The seat
whose turn it is reads its own view (GetTable, or the view its last SubmitAction
returned), picks one of `view.legal_actions` (never a Khözör signal) and submits it
pinned to `view.version`; the turn then passes to the next seat, which reads its view.
Every client is connected, every watch stream open and each table's first view read
before the clock starts (players keep their devices connected). A 3-5-8 table has one
spectator on WatchTable, a Khözör table (8 seats) one WatchTable per seat, each on its
own seat's view. Measured per run:

* actions/s — accepted SubmitActions per second of wall time, all tables together;
* SubmitAction latency p50/p95/p99 (and GetTable, the next seat's read);
* append → watcher: from the SubmitAction response arriving at the player to each
  watcher's first view of that version or a newer one (negative when the watcher's
  view arrives before the mover's response: both run in this one client process);
* service CPU per action: everything the service process (and its workers) spent,
  divided by the accepted actions — the move, the next seat's read, every push.

Closed loop: every player moves as soon as it is his turn (saturation). Open loop
(`--open-tables`): that many 3-5-8 tables whose players think an exponential random
time before each move, offered 60 % of the largest closed-loop 3-5-8 run's throughput,
for `--open-seconds`. `--scaling N`: the largest 3-5-8 run again on a service of N
worker processes (KOZYR_TABLE_WORKERS), and the ratio to one worker.

--profile samples the service process with py-spy during the largest 3-5-8 run (the
watching players' 3-5-8 run when there is one) and prints its busiest functions (self and
inclusive share of the samples in which the service was running Python, not waiting).

Watching players (issue 25, `tests/bench/watching.py`), on a fresh service process after
the runs above: every seat holds a WatchTable stream on its own view and moves when its
stream shows its turn — one SubmitAction per move, no GetTable in the loop, no spectator.
Closed loop for --watching-seconds on --watching-tables 3-5-8 tables and
--watching-khozor-tables Khözör tables (8 watching seats), each beside the floor's second
mode in the same run with the same N streams per table (a bare grpc.aio call committing one
row and pushing one ~300-byte message to each stream; the seat named in the push calls
next): moves/s, CPU per move, their ratios, and move → every watcher p50/p99 (from the
mover sending its call to the last of the table's streams receiving the new version).
Human pace: open loop at --human-rate moves/s per table (exponential think times) for
--human-seconds on each of --human-tables / --human-khozor-tables: SubmitAction p99, move
→ every watcher p99 and the service's CPU, and the largest count meeting 50 ms for both.
Spectators: one Khözör table closed loop with --spectators WatchTable streams without a
seat, against none: the ratio of CPU per move, the median of --spectator-rounds pairs.
Workers: the watching 3-5-8 run on a fresh service of one worker, then of
--watching-workers, this process (every client) capped at --client-cpu of a core in a
cpu cgroup (`tests/bench/capped.py`; uncapped, and saying why, where none is writable):
the ratio of moves/s, each run's CPU per move by who spent it (service, clients, the
rest of the machine) and the scaling law's bounds. An empty list (`--human-tables`
alone) or 0 skips a part.

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
import urllib.request
import uuid
from collections.abc import AsyncIterator, Awaitable, Iterator, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TypeVar

import asyncpg
import grpc
import psutil
from grpc_health.v1 import health_pb2, health_pb2_grpc

from kozyr.api.common.v1 import games_pb2
from kozyr.api.table.v1 import views_pb2
from kozyr.client import TableClient
from kozyr.eventstore import migrate
from kozyr.infra import free_port, libpq_dsn, provision
from kozyr.infra.servers import stop_process
from kozyr.runtime.auth import Role, mint_token
from kozyr.table.service import SERVICE_NAME

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # run as a script
from tests.bench import watching
from tests.bench.capped import capped, core_share
from tests.bench.floor import FloorProcess, FloorResult, run_floor
from tests.support.tables import PlayerClient

T = TypeVar("T")
JWT_KEY = "kozyr-bench-secret-kozyr-bench-secret-0123456789"
START_TIMEOUT = 60.0
FLOOR_CALLS = 6_000
"""Floor calls per concurrency measured (split between the callers)."""
TARGET_RATE_RATIO = {"3-5-8": 0.5, "Khözör": 0.35}
"""Issue 13: actions/s at 100 tables ≥ this share of the floor's calls/s."""
TARGET_CPU_RATIO = 2.0
"""Issue 13: service CPU per action ≤ this many times the floor's CPU per call."""
OPEN_LOAD_SHARE = 0.6
TARGET_OPEN_P99_MS = 25.0


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
    workers: int = 1
    """KOZYR_TABLE_WORKERS: processes serving the one port."""
    metrics_port: int = field(default_factory=free_port)
    """Its /metrics (one worker only: the garbage collector's pauses are read there)."""

    @property
    def target(self) -> str:
        return f"127.0.0.1:{self.port}"

    def gc_pauses(self) -> watching.GcPauses | None:
        """The garbage collector's pauses so far (kozyr_gc_pause_seconds); None with
        several workers (no metrics endpoint: they would share its port)."""
        if self.workers > 1:
            return None
        url = f"http://127.0.0.1:{self.metrics_port}/metrics"
        with urllib.request.urlopen(url, timeout=10) as reply:
            return watching.GcPauses.parse(reply.read().decode())

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
            KOZYR_TABLE_WORKERS=str(self.workers),
        )
        if self.workers == 1:
            env.update(KOZYR_METRICS_HOST="127.0.0.1", KOZYR_METRICS_PORT=str(self.metrics_port))
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
                        break
                await asyncio.sleep(0.1)
            while self.workers > 1 and self.listening() < self.workers:  # noqa: ASYNC110
                await asyncio.sleep(0.1)  # health answers once the first worker serves

    def listening(self) -> int:
        """Worker processes listening on the port."""
        workers = psutil.Process(self.pid).children()
        return sum(
            any(c.laddr and c.laddr.port == self.port for c in w.net_connections(kind="tcp"))
            for w in workers
        )

    def stop(self) -> None:
        stop_process(self.process)


# -- one table ----------------------------------------------------------------------------


@dataclass(frozen=True)
class Game:
    """How a game is benched: its code, seats, and who watches a table."""

    name: str
    code: games_pb2.Game.ValueType
    seats: int
    seat_watchers: bool
    """True: every seat watches its own view (Khözör); False: one spectator (3-5-8)."""


THREE_FIVE_EIGHT = Game("3-5-8", games_pb2.GAME_THREE_FIVE_EIGHT, 3, seat_watchers=False)
KHOZOR = Game("Khözör", games_pb2.GAME_KHOZOR_TEAMS, 8, seat_watchers=True)


@dataclass
class Samples:
    """Everything measured in one run (all tables together), in seconds."""

    submit: list[float] = field(default_factory=list)
    get: list[float] = field(default_factory=list)
    to_watcher: list[float] = field(default_factory=list)
    refused: int = 0
    finished: int = 0


@dataclass
class Watcher:
    """One WatchTable stream of a table: a seat's own or a spectator's (seat None)."""

    client: TableClient
    seat: int | None
    watched: list[tuple[int, float]] = field(default_factory=list)
    """(version, when it was received), in arrival order."""
    first_view: asyncio.Event = field(default_factory=asyncio.Event)


@dataclass
class Table:
    """One table: a client per seat, its watchers, and when each version was seen."""

    table_id: str
    seats: list[PlayerClient]
    watchers: list[Watcher]
    rng: random.Random
    applied_at: dict[int, float] = field(default_factory=dict)
    """version → when the mover received the SubmitAction response that made it."""

    async def close(self) -> None:
        for client in [*self.seats, *(w.client for w in self.watchers)]:
            await client.close()

    async def watch(self, watcher: Watcher) -> None:
        """Record every view a watcher receives until the table finishes."""
        async for view in watcher.client.watch(self.table_id, seat=watcher.seat):
            watcher.watched.append((view.version, time.perf_counter()))
            watcher.first_view.set()
            if view.finished:
                return

    async def sit_down(self) -> views_pb2.TableView:
        """Connect every seat's client and read the view of the seat to move first,
        before the timed play: players keep their devices connected, and hundreds of
        tables connecting and reading in the same instant at the start of a run is a
        burst no table sees in play, not the service's latency under its load."""
        await asyncio.gather(*(seat.connect() for seat in self.seats))
        view = await self.seats[0].get_table(self.table_id)
        mover = view.turn.seats[0] if view.turn.seats else 0
        return view if mover == 0 else await self.seats[mover].get_table(self.table_id)

    async def play(
        self,
        start: views_pb2.TableView,
        max_actions: int | None,
        samples: Samples,
        think: float = 0.0,
    ) -> int:
        """Play from `start` (the view of the seat to move) until the end (or `max_actions`
        accepted moves); returns the moves made.

        `think` > 0: each move is sent after a random think time (exponential, that mean
        in seconds) — an open loop; 0: at once — a closed loop. Signals (Khözör's
        at-will taps, limited per minute) are never chosen.
        """
        view = start
        actions = 0
        while not view.finished and (max_actions is None or actions < max_actions):
            seat = view.turn.seats[0]
            if view.seat != seat:
                view = await self._read(seat, samples)
            moves = [m for m in view.legal_actions if not m.HasField("toggle_signal")]
            if think > 0:
                await asyncio.sleep(self.rng.expovariate(1 / think))
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
        """Per accepted move and watcher: its first view at least that new, minus the
        reply (no signals are played, so every viewer counts the same versions)."""
        delays = []
        for watcher in self.watchers:
            for version, applied in self.applied_at.items():
                seen = next((t for v, t in watcher.watched if v >= version), None)
                if seen is not None:
                    delays.append(seen - applied)
        return delays


async def open_tables(target: str, count: int, run: str, game: Game) -> list[Table]:
    async with TableClient(target, token("matchmaker", Role.SERVICE)) as matchmaker:
        tables = []
        for index in range(count):
            players = [f"{run}-t{index}-p{seat}" for seat in range(game.seats)]
            created = await matchmaker.create_table(game.code, players)
            if game.seat_watchers:
                watchers = [
                    Watcher(PlayerClient(target, token(p)), s) for s, p in enumerate(players)
                ]
            else:
                watchers = [Watcher(PlayerClient(target, token(f"{run}-t{index}-spectator")), None)]
            tables.append(
                Table(
                    created.table_id,
                    [PlayerClient(target, token(p)) for p in players],
                    watchers,
                    random.Random(index),
                )
            )
        return tables


# -- one run ------------------------------------------------------------------------------


@dataclass(frozen=True)
class Result:
    game: Game
    tables: int
    max_actions: int | None
    actions: int
    seconds: float
    samples: Samples
    service_cpu: float
    """CPU seconds the service process(es) used during the run."""
    client_cpu: float
    """CPU seconds this bench process (every client) used during the run."""
    think: float = 0.0
    """Mean think time of an open-loop run (0: closed loop)."""
    floor: FloorResult | None = None
    """The floor measured at the same concurrency, just before."""
    workers: int = 1
    """Table-service worker processes (KOZYR_TABLE_WORKERS)."""

    @property
    def rate(self) -> float:
        return self.actions / self.seconds

    @property
    def cpu_ms_per_action(self) -> float:
        return 1000 * self.service_cpu / max(self.actions, 1)


def cpu_seconds(pid: int) -> float:
    """User + system CPU time of a process so far (Linux /proc)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def tree_cpu_seconds(pid: int) -> float:
    """CPU time of a process and its live children (the table service's workers)."""
    children = Path(f"/proc/{pid}/task/{pid}/children")
    kids = [int(p) for p in children.read_text().split()] if children.exists() else []
    total = cpu_seconds(pid)
    for kid in kids:
        with contextlib.suppress(FileNotFoundError):
            total += cpu_seconds(kid)
    return total


async def run(
    service: ServiceProcess,
    count: int,
    max_actions: int | None,
    game: Game = THREE_FIVE_EIGHT,
    *,
    think: float = 0.0,
    seconds: float | None = None,
) -> Result:
    """`count` tables played concurrently, each by its own clients and watchers; with
    `seconds`, the play stops after that long (an open-loop run)."""
    tables = await open_tables(service.target, count, f"r{uuid.uuid4().hex[:6]}", game)
    streams = [(t, w) for t in tables for w in t.watchers]
    watching = [asyncio.create_task(t.watch(w)) for t, w in streams]
    await asyncio.gather(*(w.first_view.wait() for _, w in streams))
    starts = await asyncio.gather(*(t.sit_down() for t in tables))
    samples = Samples()
    service_before, client_before = tree_cpu_seconds(service.pid), cpu_seconds(os.getpid())
    started = time.perf_counter()
    playing = [
        asyncio.create_task(t.play(start, max_actions, samples, think))
        for t, start in zip(tables, starts, strict=True)
    ]
    if seconds is not None:
        await asyncio.wait(playing, timeout=seconds)
        for task in playing:
            task.cancel()
    await asyncio.gather(*playing, return_exceptions=seconds is not None)
    elapsed = time.perf_counter() - started
    service_cpu = tree_cpu_seconds(service.pid) - service_before
    client_cpu = cpu_seconds(os.getpid()) - client_before
    await asyncio.sleep(0.5)  # let the watchers receive the last moves
    for watch_task in watching:
        watch_task.cancel()
    await asyncio.gather(*watching, return_exceptions=True)
    for table in tables:
        samples.to_watcher.extend(table.watcher_delays())
        await table.close()
    actions = len(samples.submit)  # every accepted move, however the play ended
    return Result(
        game, count, max_actions, actions, elapsed, samples, service_cpu, client_cpu, think
    )


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


def thread_cpu_seconds(pid: int) -> dict[int, float]:
    """User + system CPU time so far of each thread of process `pid`, by thread id (Linux
    /proc; the main thread's id is the pid)."""
    found: dict[int, float] = {}
    for task in Path(f"/proc/{pid}/task").iterdir():
        with contextlib.suppress(FileNotFoundError, ValueError):
            fields = (task / "stat").read_text().rpartition(")")[2].split()
            found[int(task.name)] = (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    return found


def main_thread_share(pid: int, before: dict[int, float], after: dict[int, float]) -> float:
    """The main thread's share of what process `pid`'s threads spent between two readings."""
    spent = {tid: after[tid] - before.get(tid, 0.0) for tid in after}
    return spent.get(pid, 0.0) / max(sum(spent.values()), 1e-9)


def on_main_thread(frames: list[str]) -> bool:
    """A sample of the main thread: a stack py-spy did not start in `threading` (grpc's
    poller thread, the only other Python thread, waits in native code without a frame)."""
    return not frames[0].startswith("Thread._bootstrap")


def hotspots(collapsed: Path, main_share: float, top: int = 25) -> None:
    """The functions the service's main thread spent its samples in: self (innermost) and
    inclusive. py-spy counts grpc's poller thread as busy whenever it waits inside grpc's
    native completion queue (15 % of the samples, 2026-12-03), while /proc showed every
    thread but the main one together spending 4–14 % of the process's CPU: the shares
    are of the main thread's samples, and the main thread's share of the process's CPU
    is printed beside them, from /proc."""
    own: dict[str, int] = {}
    inclusive: dict[str, int] = {}
    total = other = 0
    for line in collapsed.read_text().splitlines():
        stack, _, count_text = line.rpartition(" ")
        if not stack:
            continue
        count = int(count_text)
        frames = [_short(frame) for frame in stack.split(";")]
        if not on_main_thread(frames):
            other += count
            continue
        total += count
        own[frames[-1]] = own.get(frames[-1], 0) + count
        for frame in set(frames):
            inclusive[frame] = inclusive.get(frame, 0) + count
    print(
        f"\nService profile: {total} busy samples of the main thread (py-spy, 200 Hz), which"
        f" spent {100 * main_share:.0f} % of the process's CPU (/proc); {other} samples of"
        " other threads left out"
    )
    for title, table in (("self", own), ("inclusive", inclusive)):
        print(f"  top {top} by {title} time")
        for frame, count in sorted(table.items(), key=lambda kv: -kv[1])[:top]:
            print(f"    {100 * count / max(total, 1):5.1f}%  {frame}")


async def profiled(play: Awaitable[T], pid: int, output: Path | None) -> T:
    """`play` awaited while py-spy samples process `pid`: its busiest functions printed,
    the collapsed stacks copied to `output` (--profile-output), if given."""
    with tempfile.TemporaryDirectory() as scratch:
        collapsed = Path(scratch) / "service.txt"
        before = thread_cpu_seconds(pid)
        with sampled(pid, collapsed):
            result = await play
        hotspots(collapsed, main_thread_share(pid, before, thread_cpu_seconds(pid)))
        keep(collapsed, output)
    return result


def keep(collapsed: Path, output: Path | None) -> None:
    """Copy the collapsed stacks to `output` (--profile-output), if given."""
    if output is not None:
        output.write_text(collapsed.read_text())


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
    if not results:
        return
    print(
        "\nworkers game    tables  moves/table  loop     actions  seconds  actions/s   "
        "SubmitAction ms         GetTable ms             append→watcher ms   refused"
        "  CPU service/clients  service CPU ms/action"
    )
    print(
        f"{'':71}{'p50     p95     p99':>24}{'p50     p95     p99':>24}{'p50     p95     p99':>24}"
    )
    for r in results:
        per_table = "full game" if r.max_actions is None else f"first {r.max_actions}"
        loop = "closed" if r.think == 0 else f"open {r.think:.1f}s"
        print(
            f"{r.workers:>7} {r.game.name:<7}{r.tables:>7}  {per_table:>11}  {loop:<9}"
            f"{r.actions:>7}  {r.seconds:7.1f}  {r.rate:9.0f}  "
            f"{ms(r.samples.submit)} {ms(r.samples.get)} {ms(r.samples.to_watcher)}"
            f"  {r.samples.refused:>7}  {100 * r.service_cpu / r.seconds:5.0f}% "
            f"{100 * r.client_cpu / r.seconds:5.0f}%  {r.cpu_ms_per_action:13.2f}"
        )
    floors = {r.tables: r.floor for r in results if r.floor is not None}
    if not floors:
        return
    print("\nThe floor (a bare grpc.aio call committing one row, same client machinery):")
    print(
        f"{'callers':>7}  {'calls':>6}  {'calls/s':>8}  {'p50 ms':>7}  {'p99 ms':>7}  CPU ms/call"
    )
    for callers, f in sorted(floors.items()):
        p50, p99 = (percentile(f.latencies, q) * 1000 for q in (0.5, 0.99))
        print(
            f"{callers:>7}  {f.calls:>6}  {f.rate:8.0f}  {p50:7.1f}  {p99:7.1f}  "
            f"{f.cpu_ms_per_call:11.2f}"
        )
    print("\nRatios to the floor at the same concurrency, same run (issue 13's targets):")
    for r in results:
        at = floors.get(r.tables)
        if at is None or r.think:
            continue
        rate_target = TARGET_RATE_RATIO[r.game.name]
        print(
            f"  {r.game.name:<7}{r.tables:>4} tables, {r.workers} worker(s): actions/s ÷ floor "
            f"calls/s = {r.rate / at.rate:4.2f} (target ≥ {rate_target}); CPU per action ÷ "
            f"floor CPU per call = {r.cpu_ms_per_action / at.cpu_ms_per_call:4.2f} (target ≤ "
            f"{TARGET_CPU_RATIO})"
        )
    single = [r for r in results if r.workers == 1 and r.game is THREE_FIVE_EIGHT and not r.think]
    for r in results:
        base = next((b for b in single if b.tables == r.tables), None)
        if r.workers > 1 and base is not None:
            print(
                f"  {r.workers} workers against 1, {r.tables} 3-5-8 tables: actions/s "
                f"×{r.rate / base.rate:.2f}, CPU per action ×"
                f"{r.cpu_ms_per_action / base.cpu_ms_per_action:.2f}"
            )
    for r in results:
        if r.think:
            print(
                f"  open loop, {r.tables} tables at {r.rate:.0f} actions/s: SubmitAction p99 "
                f"{percentile(r.samples.submit, 0.99) * 1000:.1f} ms, append → watcher p99 "
                f"{percentile(r.samples.to_watcher, 0.99) * 1000:.1f} ms "
                f"(target ≤ {TARGET_OPEN_P99_MS:.0f} ms each)"
            )


# -- main ---------------------------------------------------------------------------------


async def bench(args: argparse.Namespace, server_url: str, nats_url: str) -> list[Result]:
    """Issue 13's runs, then issue 25's (printed as soon as they are done)."""
    async with scratch_database(server_url) as database_url:
        await migrate(database_url)
        floor = FloorProcess(database_url)
        await floor.start(token("floor-probe"))
        service = ServiceProcess(database_url, nats_url, workers=args.workers)
        await service.start()
        print(f"table service pid {service.pid}, floor pid {floor.pid}", file=sys.stderr)
        try:
            await run(service, 2, 20)  # warm-up: imports, caches, pools
            floors: dict[int, FloorResult] = {}
            results = []
            for count in args.tables:
                results.append(await measure(service, floor, floors, count, THREE_FIVE_EIGHT, args))
            for count in args.khozor_tables:
                results.append(await measure(service, floor, floors, count, KHOZOR, args))
            if args.open_tables and results:
                results.append(await open_loop(service, results, args))
        finally:
            service.stop()
        try:
            for workers in args.scaling:
                results.append(await scaled(database_url, nats_url, floor, floors, workers, args))
            await players(database_url, nats_url, floor, args)
            await workers_scaling(database_url, nats_url, args)
            return results
        finally:
            floor.stop()


async def players(
    database_url: str, nats_url: str, floor: FloorProcess, args: argparse.Namespace
) -> None:
    """Issue 25: watching players beside the floor's second mode, human pace, spectators
    — on a service of its own (none of the tables played above in its memory)."""
    parts = (args.watching_tables, args.watching_khozor_tables, args.spectators)
    if not any(parts) and not args.human_tables and not args.human_khozor_tables:
        return
    service = ServiceProcess(database_url, nats_url, workers=args.workers)
    await service.start()
    print(f"watching players: table service pid {service.pid}", file=sys.stderr)
    try:
        await watched(service, KHOZOR, 1, 5.0)  # warm-up: imports, caches, pools
        closed = []
        for game, count in (
            (THREE_FIVE_EIGHT, args.watching_tables),
            (KHOZOR, args.watching_khozor_tables),
        ):
            if count:
                profile = args.profile and game is THREE_FIVE_EIGHT and service.workers == 1
                kozyr = await watched(
                    service,
                    game,
                    count,
                    args.watching_seconds,
                    profile=profile,
                    profile_output=args.profile_output,
                )
                closed.append((kozyr, await floored(floor, game, count, args.watching_seconds)))
        think = 1 / args.human_rate
        human = [
            await watched(service, game, count, args.human_seconds, think=think)
            for game, counts in (
                (THREE_FIVE_EIGHT, args.human_tables),
                (KHOZOR, args.human_khozor_tables),
            )
            for count in counts
        ]
        spectators = []
        for _ in range(args.spectator_rounds if args.spectators else 0):
            none = await watched(service, KHOZOR, 1, args.watching_seconds)
            some = await watched(
                service, KHOZOR, 1, args.watching_seconds, spectators=args.spectators
            )
            spectators.append((none, some))
    finally:
        service.stop()
    watching.report(closed, human, spectators)


async def workers_scaling(database_url: str, nats_url: str, args: argparse.Namespace) -> None:
    """Issue 25, target 4: the watching players' 3-5-8 run on a fresh service of one
    worker, then of `--watching-workers`, with this process (every client: the load
    generator) capped at `--client-cpu` of a core during each run, so that the clients
    do not take the second core from the workers (`tests/bench/capped.py`)."""
    if args.watching_workers < 2 or not args.watching_tables:
        return
    runs = []
    for workers in (1, args.watching_workers):
        service = ServiceProcess(database_url, nats_url, workers=workers)
        await service.start()
        print(f"workers: table service of {workers}, pid {service.pid}", file=sys.stderr)
        try:
            await watched(service, THREE_FIVE_EIGHT, 4 * workers, 5.0)  # warm every worker
            with capped(args.client_cpu) as why_not:
                run = await watched(
                    service, THREE_FIVE_EIGHT, args.watching_tables, args.watching_seconds
                )
            cap = f"capped at {args.client_cpu:.2f} of a core" if why_not is None else why_not
            runs.append(replace(run, workers=workers, capped=cap))
        finally:
            service.stop()
    watching.workers_report(runs[0], runs[1], os.cpu_count() or 1)


async def watched(
    service: ServiceProcess,
    game: Game,
    count: int,
    seconds: float,
    *,
    think: float = 0.0,
    spectators: int = 0,
    profile: bool = False,
    profile_output: Path | None = None,
) -> watching.Result:
    """`count` tables of `game` played by watching seats (and `spectators` each)."""
    loop = "closed loop" if not think else f"open loop, {1 / think:.1f} moves/s a table"
    print(f"watching players: {game.name}, {count} table(s), {loop} …", file=sys.stderr)
    tables = await watching.kozyr_tables(
        service.target,
        count,
        game.code,
        game.seats,
        spectators,
        token,
        token("matchmaker", Role.SERVICE),
    )
    play = watching.play(
        "kozyr", game.name, tables, lambda: tree_cpu_seconds(service.pid), seconds, think
    )
    before = service.gc_pauses()
    result = await (profiled(play, service.pid, profile_output) if profile else play)
    after = service.gc_pauses()
    return result if before is None or after is None else replace(result, gc=after - before)


async def floored(floor: FloorProcess, game: Game, count: int, seconds: float) -> watching.Result:
    """The floor's second mode with `count` tables of `game.seats` watching seats."""
    print(f"floor, second mode: {count} table(s) of {game.seats} streams …", file=sys.stderr)
    tables = watching.floor_tables(floor, count, game.seats, token)
    return await watching.play("floor", game.name, tables, lambda: cpu_seconds(floor.pid), seconds)


async def scaled(
    database_url: str,
    nats_url: str,
    floor: FloorProcess,
    floors: dict[int, FloorResult],
    workers: int,
    args: argparse.Namespace,
) -> Result:
    """The largest 3-5-8 run again on a service of `workers` worker processes."""
    service = ServiceProcess(database_url, nats_url, workers=workers)
    await service.start()
    try:
        await run(service, 2 * workers, 20)  # warm-up of every worker, roughly
        result = await measure(service, floor, floors, max(args.tables), THREE_FIVE_EIGHT, args)
    finally:
        service.stop()
    return replace(result, workers=workers)


async def measure(
    service: ServiceProcess,
    floor: FloorProcess,
    floors: dict[int, FloorResult],
    count: int,
    game: Game,
    args: argparse.Namespace,
) -> Result:
    """The floor at `count` callers (once per count), then `count` tables of `game` (py-spy
    on the service for the largest 3-5-8 run, if asked)."""
    if count not in floors:
        print(f"floor, {count} caller(s) …", file=sys.stderr)
        tokens = [token(f"floor-{count}-{i}") for i in range(count)]
        floors[count] = await run_floor(floor, tokens, FLOOR_CALLS // count, cpu_seconds)
    capped = not args.full and count >= args.cap_from
    print(f"{game.name}: {count} table(s) …", file=sys.stderr)
    play = run(service, count, args.max_actions if capped else None, game)
    profile = args.profile and service.workers == 1 and not args.watching_tables
    if profile and game is THREE_FIVE_EIGHT and count == max(args.tables):
        result = await profiled(play, service.pid, args.profile_output)
    else:
        result = await play
    return replace(result, floor=floors[count])


async def open_loop(
    service: ServiceProcess, results: Sequence[Result], args: argparse.Namespace
) -> Result:
    """Many 3-5-8 tables whose players think before each move, offered 60 % of the
    largest closed-loop 3-5-8 run's throughput (its saturation) for `--open-seconds`."""
    saturated = max((r for r in results if r.game is THREE_FIVE_EIGHT), key=lambda r: r.tables).rate
    offered = OPEN_LOAD_SHARE * saturated
    think = args.open_tables / offered
    print(
        f"open loop: {args.open_tables} tables, {offered:.0f} actions/s offered "
        f"(think {think:.2f} s) …",
        file=sys.stderr,
    )
    return await run(
        service, args.open_tables, None, THREE_FIVE_EIGHT, think=think, seconds=args.open_seconds
    )


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
    parser.add_argument("--tables", type=int, nargs="*", default=[1, 10, 100])
    parser.add_argument("--khozor-tables", type=int, nargs="*", default=[100])
    parser.add_argument("--max-actions", type=int, default=100, help="moves per capped table")
    parser.add_argument("--cap-from", type=int, default=100, help="cap tables counts ≥ this")
    parser.add_argument("--full", action="store_true", help="every table plays a full game")
    parser.add_argument(
        "--open-tables", type=int, default=300, help="tables of the open-loop run (0: none)"
    )
    parser.add_argument("--open-seconds", type=float, default=30.0)
    parser.add_argument("--workers", type=int, default=1, help="KOZYR_TABLE_WORKERS")
    parser.add_argument(
        "--scaling",
        type=int,
        nargs="*",
        default=[2],
        help="worker counts the largest 3-5-8 run is repeated with (separate services)",
    )
    parser.add_argument("--watching-tables", type=int, default=100, help="3-5-8, 0: none")
    parser.add_argument("--watching-khozor-tables", type=int, default=50, help="0: none")
    parser.add_argument("--watching-seconds", type=float, default=15.0)
    parser.add_argument("--human-tables", type=int, nargs="*", default=[250, 500, 1000])
    parser.add_argument("--human-khozor-tables", type=int, nargs="*", default=[100, 200, 400])
    parser.add_argument("--human-seconds", type=float, default=30.0)
    parser.add_argument("--human-rate", type=float, default=0.2, help="moves/s per table")
    parser.add_argument("--spectators", type=int, default=20, help="0: no spectator run")
    parser.add_argument(
        "--spectator-rounds",
        type=int,
        default=3,
        help="spectator runs, each a game with none then a game with them (one table's "
        "game is the noisiest figure: the median ratio is the one read)",
    )
    parser.add_argument(
        "--watching-workers",
        type=int,
        default=2,
        help="target 4: the watching 3-5-8 run on 1 worker, then on this many (< 2: none)",
    )
    parser.add_argument(
        "--client-cpu",
        type=core_share,
        default=0.5,
        help="target 4: this process's CPU cap in cores during those runs (a cpu cgroup)",
    )
    parser.add_argument("--no-fsync", action="store_true", help="embedded PostgreSQL only")
    parser.add_argument("--profile", action="store_true", help="py-spy the largest run")
    parser.add_argument(
        "--profile-output", type=Path, help="keep --profile's collapsed stacks in this file"
    )
    return parser.parse_args()


if __name__ == "__main__":
    main()
