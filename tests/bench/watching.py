"""Watching players: the players' real path, and the floor of the same work (issue 25).

Every seat of a table holds one stream and moves when its stream shows its turn: one
unary call per move, no read in the loop. The same driver plays two things:

* kozyr: one `PlayerClient` per seat (its own connection, token), `WatchTable` on its own
  seat's view, `SubmitAction` of one of `view.legal_actions` (never a Khözör signal)
  pinned to `view.version`; spectators (`WatchTable` without a seat) only watch;
* the floor's second mode (`tests/bench/floor.py`): `Watch` per seat, `Move` committing
  one ~300-byte row and pushing one ~300-byte message to each of the table's N streams.

Measured per run: accepted moves per second of wall time, the unary call's latency, the
service's CPU per move, and move → every watcher: from the mover sending its call to the
last of the table's streams receiving that version (or a newer one) — what a player waits
for the move to be on every screen. Closed loop (`think` 0): a seat moves as soon as its
stream shows its turn; open loop: after an exponential random think time of that mean.
"""

from __future__ import annotations

import asyncio
import bisect
import contextlib
import os
import random
import statistics
import time
import uuid
from collections.abc import AsyncIterator, Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import grpc

from kozyr.api.common.v1 import games_pb2
from kozyr.api.table.v1 import views_pb2
from kozyr.client import TableClient
from tests.bench.floor import FloorClient, FloorProcess, payload
from tests.support.tables import PlayerClient

FINISHED = -1
"""The seat to move, once the game is over: every seat's task ends (when every table of a
run has finished, the run ends there, its time is the time played)."""
CREATING = 16
"""Tables created at once before a run (a thousand, one by one, took a minute)."""
DRAIN_SECONDS = 2.0
"""After the clock stops, how long a closed loop's calls in flight may take to return."""


@dataclass
class Samples:
    """Everything measured in one run (all tables together), in seconds."""

    submit: list[float] = field(default_factory=list)
    to_every_watcher: list[float] = field(default_factory=list)
    refused: int = 0


@dataclass
class _Stream:
    """One stream of a table: what it last showed, and every version with its arrival."""

    seen_versions: list[int] = field(default_factory=list)
    seen_at: list[float] = field(default_factory=list)
    latest: tuple[int, int | None, object] | None = None
    changed: asyncio.Event = field(default_factory=asyncio.Event)


class WatchedTable:
    """A table whose first `seats` streams are seats (they move), the rest spectators."""

    def __init__(self, seats: int, streams: int, rng: random.Random) -> None:
        self.seats = seats
        self.streams = [_Stream() for _ in range(streams)]
        self.rng = rng
        self.acted = -1
        """The newest version a seat has moved on (each version gets one move)."""
        self.sent: list[tuple[int, float]] = []
        """(version moved on, when the call was sent) of every accepted move."""

    def open(self, index: int) -> AsyncIterator[tuple[int, int | None, object]]:
        """Stream `index`: (version, seat to move — None: nobody, FINISHED: the game is
        over —, what the mover needs)."""
        raise NotImplementedError

    async def move(self, seat: int, state: object) -> bool:
        """Make one move from `state`; False when there is no move to make."""
        raise NotImplementedError

    async def connect(self) -> None:
        raise NotImplementedError

    async def close(self) -> None:
        raise NotImplementedError

    async def follow(self, index: int) -> None:
        """Record everything stream `index` shows, and wake its seat."""
        stream = self.streams[index]
        async for version, mover, state in self.open(index):
            stream.seen_versions.append(version)
            stream.seen_at.append(time.perf_counter())
            stream.latest = (version, mover, state)
            stream.changed.set()

    async def play(
        self, seat: int, go: asyncio.Event, stop: asyncio.Event, think: float, samples: Samples
    ) -> None:
        """Seat `seat`: whenever its stream shows its turn on a version not yet moved on,
        (think, then) make one move."""
        stream = self.streams[seat]
        await go.wait()
        while not stop.is_set():
            await stream.changed.wait()
            stream.changed.clear()
            if stream.latest is None or stop.is_set():
                continue
            version, mover, state = stream.latest
            if mover == FINISHED:
                return
            if mover != seat or version <= self.acted:
                continue
            self.acted = version
            if think > 0:
                await asyncio.sleep(self.rng.expovariate(1 / think))
            sent = time.perf_counter()
            try:
                moved = await self.move(seat, state)
            except grpc.aio.AioRpcError:
                samples.refused += 1
                continue
            if moved:
                samples.submit.append(time.perf_counter() - sent)
                self.sent.append((version, sent))

    def to_every_watcher(self) -> list[float]:
        """Per accepted move: the last stream's first view newer than the version moved
        on, minus when the move was sent (moves some stream never showed are left out)."""
        delays = []
        for version, sent in self.sent:
            arrivals = []
            for stream in self.streams:
                at = bisect.bisect_right(stream.seen_versions, version)
                if at == len(stream.seen_versions):
                    break
                arrivals.append(stream.seen_at[at])
            else:
                delays.append(max(arrivals) - sent)
        return delays


# -- kozyr ----------------------------------------------------------------------------------


class KozyrTable(WatchedTable):
    """A kozyr table: a PlayerClient per seat (watch and submit), one per spectator."""

    def __init__(
        self,
        table_id: str,
        seats: list[PlayerClient],
        spectators: list[PlayerClient],
        rng: random.Random,
    ) -> None:
        super().__init__(len(seats), len(seats) + len(spectators), rng)
        self.table_id = table_id
        self.clients = [*seats, *spectators]

    async def open(self, index: int) -> AsyncIterator[tuple[int, int | None, object]]:
        seat = index if index < self.seats else None
        async for view in self.clients[index].watch(self.table_id, seat=seat):
            mover = view.turn.seats[0] if view.turn.seats else None
            if view.finished:
                mover = FINISHED
            yield view.version, mover, view

    async def move(self, seat: int, state: object) -> bool:
        assert isinstance(state, views_pb2.TableView)
        moves = [m for m in state.legal_actions if not m.HasField("toggle_signal")]
        if not moves:
            return False
        await self.clients[seat].submit(
            self.table_id, self.rng.choice(moves), expected_version=state.version
        )
        return True

    async def connect(self) -> None:
        await asyncio.gather(*(c.connect() for c in self.clients))

    async def close(self) -> None:
        for client in self.clients:
            await client.close()


async def kozyr_tables(
    target: str,
    count: int,
    game: games_pb2.Game.ValueType,
    seats: int,
    spectators: int,
    token: Callable[[str], str],
    service_token: str,
) -> list[WatchedTable]:
    """`count` new tables of `game`, a client per seat and per spectator."""
    run = uuid.uuid4().hex[:6]
    limit = asyncio.Semaphore(CREATING)

    async def create(matchmaker: TableClient, index: int) -> WatchedTable:
        players = [f"w{run}-t{index}-p{seat}" for seat in range(seats)]
        async with limit:
            created = await matchmaker.create_table(game, players)
        return KozyrTable(
            created.table_id,
            [PlayerClient(target, token(p)) for p in players],
            [PlayerClient(target, token(f"w{run}-t{index}-s{s}")) for s in range(spectators)],
            random.Random(index),
        )

    async with TableClient(target, service_token) as matchmaker:
        return list(await asyncio.gather(*(create(matchmaker, i) for i in range(count))))


# -- the floor's second mode ----------------------------------------------------------------


class FloorTable(WatchedTable):
    """A table of the floor's second mode: a FloorClient per seat (Watch and Move)."""

    def __init__(
        self, floor: FloorProcess, seats: int, token: Callable[[str], str], index: int
    ) -> None:
        super().__init__(seats, seats, random.Random(index))
        self.table_id = f"floor-{uuid.uuid4()}"
        self.index = index
        self.clients = [
            FloorClient(floor.target, token(f"{self.table_id}-{s}")) for s in range(seats)
        ]

    async def open(self, index: int) -> AsyncIterator[tuple[int, int | None, object]]:
        async for version, mover in self.clients[index].watch(self.table_id, self.seats):
            yield version, mover, version

    async def move(self, seat: int, state: object) -> bool:
        assert isinstance(state, int)
        await self.clients[seat].move(self.table_id, seat, state, payload(self.index, state))
        return True

    async def connect(self) -> None:
        await asyncio.gather(*(c.connect() for c in self.clients))

    async def close(self) -> None:
        for client in self.clients:
            await client.close()


def floor_tables(
    floor: FloorProcess, count: int, seats: int, token: Callable[[str], str]
) -> list[WatchedTable]:
    return [FloorTable(floor, seats, token, index) for index in range(count)]


# -- one run --------------------------------------------------------------------------------


@dataclass(frozen=True)
class Result:
    what: str
    """"kozyr" or "floor"."""
    game: str
    tables: int
    streams: int
    """Streams per table (seats and spectators)."""
    think: float
    moves: int
    seconds: float
    samples: Samples
    cpu: float
    """CPU seconds of the serving process(es) during the run."""
    client_cpu: float
    """CPU seconds of this bench process (every client, the load generator) in the run."""
    machine_cpu: float
    """Busy CPU seconds of the whole machine in the run (every core: the service, the
    clients, PostgreSQL, NATS, the kernel and anything else running)."""
    workers: int = 1
    capped: str | None = None
    """The clients' CPU cap in force ("0.50 of a core"), else why none; None: not asked."""
    gc: GcPauses | None = None
    """The service's garbage collections during the run (one worker only)."""

    @property
    def rate(self) -> float:
        return self.moves / self.seconds

    @property
    def cpu_ms_per_move(self) -> float:
        return 1000 * self.cpu / max(self.moves, 1)

    @property
    def client_ms_per_move(self) -> float:
        """The clients' (this bench process's) CPU per move."""
        return 1000 * self.client_cpu / max(self.moves, 1)

    @property
    def machine_ms_per_move(self) -> float:
        """The whole machine's busy CPU per move."""
        return 1000 * self.machine_cpu / max(self.moves, 1)

    @property
    def cpu_share(self) -> float:
        """Share of one core the serving process(es) used."""
        return self.cpu / self.seconds


async def play(
    what: str,
    game: str,
    tables: Sequence[WatchedTable],
    cpu: Callable[[], float],
    seconds: float,
    think: float = 0.0,
) -> Result:
    """Connect every client, open every stream and wait for its first view, then play
    for `seconds`; `cpu()` reads the serving process's CPU seconds so far."""
    await asyncio.gather(*(t.connect() for t in tables))
    following = [asyncio.create_task(t.follow(i)) for t in tables for i in range(len(t.streams))]
    try:
        await asyncio.gather(*(s.changed.wait() for t in tables for s in t.streams))
        go, stop, samples = asyncio.Event(), asyncio.Event(), Samples()
        seats = [
            asyncio.create_task(t.play(s, go, stop, think, samples))
            for t in tables
            for s in range(t.seats)
        ]
        cpu_before, client_before, started = cpu(), time.process_time(), time.perf_counter()
        machine_before = machine_busy_seconds()
        go.set()
        done, _ = await asyncio.wait(seats, timeout=seconds)
        stop.set()
        for table in tables:
            for stream in table.streams:
                stream.changed.set()
        if not think:  # a closed loop's calls in flight are part of the run
            await asyncio.wait(seats, timeout=DRAIN_SECONDS)
        for task in seats:
            task.cancel()
        await asyncio.gather(*seats, return_exceptions=True)
        elapsed, used = time.perf_counter() - started, cpu() - cpu_before
        client = time.process_time() - client_before
        machine = machine_busy_seconds() - machine_before
        for task in done:
            task.result()  # a seat that failed fails the run
        await asyncio.sleep(0.5)  # the streams receive the last moves
        for task in following:
            if task.done():
                task.result()  # a stream that broke fails the run, not just its figures
    finally:
        for task in following:
            task.cancel()
        await asyncio.gather(*following, return_exceptions=True)
        for table in tables:
            with contextlib.suppress(Exception):
                await table.close()
    for table in tables:
        samples.to_every_watcher.extend(table.to_every_watcher())
    streams = len(tables[0].streams) if tables else 0
    return Result(
        what,
        game,
        len(tables),
        streams,
        think,
        len(samples.submit),
        elapsed,
        samples,
        used,
        client,
        machine,
    )


def machine_busy_seconds() -> float:
    """Busy CPU seconds of every core since boot (Linux /proc/stat: all but idle and
    iowait)."""
    fields = [int(f) for f in Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:]]
    idle = fields[3] + (fields[4] if len(fields) > 4 else 0)
    return (sum(fields[:8]) - idle) / os.sysconf("SC_CLK_TCK")


@dataclass(frozen=True)
class GcPauses:
    """A process's garbage-collection pauses, from its `kozyr_gc_pause_seconds` histogram:
    per generation, how many, their total, and the histogram's cumulative buckets."""

    count: dict[str, float]
    total: dict[str, float]
    buckets: dict[str, dict[float, float]]
    """generation → upper bound in seconds → collections that took at most that long."""

    @classmethod
    def parse(cls, metrics: str) -> GcPauses:
        count: dict[str, float] = {}
        total: dict[str, float] = {}
        buckets: dict[str, dict[float, float]] = {}
        for line in metrics.splitlines():
            if not line.startswith("kozyr_gc_pause_seconds"):
                continue
            series, _, value = line.rpartition(" ")
            name, _, labels = series.partition("{")
            fields = dict(f.split("=", 1) for f in labels.rstrip("}").split(",") if f)
            generation = fields["generation"].strip('"')
            if name.endswith("_count"):
                count[generation] = float(value)
            elif name.endswith("_sum"):
                total[generation] = float(value)
            elif name.endswith("_bucket"):
                bound = float(fields["le"].strip('"'))
                buckets.setdefault(generation, {})[bound] = float(value)
        return cls(count, total, buckets)

    def __sub__(self, earlier: GcPauses) -> GcPauses:
        """The pauses between two readings."""
        return GcPauses(
            {g: n - earlier.count.get(g, 0.0) for g, n in self.count.items()},
            {g: t - earlier.total.get(g, 0.0) for g, t in self.total.items()},
            {
                g: {b: n - earlier.buckets.get(g, {}).get(b, 0.0) for b, n in bounds.items()}
                for g, bounds in self.buckets.items()
            },
        )

    def longest(self, generation: str) -> float:
        """An upper bound of the longest pause of `generation`: the least bucket bound
        that holds all of them (0 when there was none)."""
        everything = self.count.get(generation, 0.0)
        if not everything:
            return 0.0
        bounds = sorted(self.buckets.get(generation, {}).items())
        return next((b for b, n in bounds if n >= everything), float("inf"))

    def summary(self) -> str:
        return ", ".join(
            f"gen{g} {self.count[g]:.0f} in {1000 * self.total.get(g, 0.0):.0f} ms "
            f"(longest ≤ {1000 * self.longest(g):g} ms)"
            for g in sorted(self.count)
        )


# -- report ---------------------------------------------------------------------------------

TARGETS = {"3-5-8": (0.6, 1.7), "Khözör": (0.5, 2.0)}
"""Issue 25: watching players' moves/s ≥ this share of the floor's, CPU per move ≤ this
many times the floor's."""
TARGET_P99_MS = 50.0
TARGET_SPECTATOR_RATIO = 1.2
TARGET_WORKERS_RATIO = 1.6
"""Issue 25, target 4: two workers' moves/s ≥ this many times one worker's."""


def percentile(values: Sequence[float], share: float) -> float:
    """Nearest-rank percentile (`share` in 0..1); NaN without values."""
    if not values:
        return float("nan")
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(share * len(ordered)) - 1))]


def p_ms(values: Sequence[float], share: float) -> float:
    return 1000 * percentile(values, share)


def line(r: Result) -> str:
    s = r.samples
    loop = "closed" if not r.think else f"open {1 / r.think:.1f}/s"
    return (
        f"  {r.what:<6}{r.game:<7}{r.tables:>6}{r.streams:>8}  {loop:<11}{r.moves:>7}"
        f"{r.seconds:>7.1f}{r.rate:>8.0f}{p_ms(s.submit, 0.5):>8.1f}{p_ms(s.submit, 0.99):>8.1f}"
        f"{p_ms(s.to_every_watcher, 0.5):>8.1f}{p_ms(s.to_every_watcher, 0.99):>8.1f}"
        f"{s.refused:>8}{100 * r.cpu_share:>6.0f}%{r.cpu_ms_per_move:>9.2f}"
        f"{100 * r.client_cpu / r.seconds:>8.0f}%"
    )


def report(
    closed: Sequence[tuple[Result, Result]],
    human: Sequence[Result],
    spectators: Sequence[tuple[Result, Result]],
) -> None:
    """Issue 25's figures: every run, then the ratios and the largest human-pace counts."""
    print("\nWatching players (issue 25): every seat on WatchTable, one SubmitAction a move")
    print(
        "  who   game   tables streams  loop          moves   secs moves/s  call ms       "
        "move→every watcher  refused  CPU  CPU ms  clients"
    )
    print(f"{'':58}p50     p99     p50     p99{'':18}/move      CPU")
    runs = [*(r for pair in closed for r in pair), *human, *(r for p in spectators for r in p)]
    for r in runs:
        print(line(r))
    for r in runs:
        if r.gc is not None:
            loop = "closed" if not r.think else f"open {1 / r.think:.1f}/s"
            print(f"  garbage collector, {r.game} {r.tables} tables {loop}: {r.gc.summary()}")
    for kozyr, floor in closed:
        rate_target, cpu_target = TARGETS[kozyr.game]
        print(
            f"  {kozyr.game} {kozyr.tables} tables, {kozyr.streams} watching seats: moves/s ÷ "
            f"floor = {kozyr.rate / floor.rate:.2f} (target ≥ {rate_target}); CPU per move "
            f"÷ floor = {kozyr.cpu_ms_per_move / floor.cpu_ms_per_move:.2f} (target ≤ "
            f"{cpu_target})"
        )
    for game in dict.fromkeys(r.game for r in human):
        meeting = [
            r.tables
            for r in human
            if r.game == game
            and p_ms(r.samples.submit, 0.99) <= TARGET_P99_MS
            and p_ms(r.samples.to_every_watcher, 0.99) <= TARGET_P99_MS
        ]
        best = max(meeting) if meeting else "none of those measured"
        print(
            f"  human pace, {game}: largest table count with SubmitAction p99 and move → "
            f"every watcher p99 ≤ {TARGET_P99_MS:.0f} ms: {best}"
        )
    ratios = [some.cpu_ms_per_move / none.cpu_ms_per_move for none, some in spectators]
    if spectators:
        none, some = spectators[0]
        each = ", ".join(f"×{r:.2f}" for r in ratios)
        print(
            f"  {some.streams - none.streams} spectators on {some.tables} {some.game} table(s):"
            f" CPU per move ×{statistics.median(ratios):.2f} of none, the median of "
            f"{len(ratios)} round(s) ({each}; target < {TARGET_SPECTATOR_RATIO})"
        )


@dataclass(frozen=True)
class Law:
    """Issue 25's scaling law, from one run's CPU per move: N workers on C cores make
    at most min(N / service, C / machine) moves per second of CPU — each worker is one
    process on at most one core, and every move also costs the clients, PostgreSQL,
    NATS and the kernel their share of the same C cores."""

    service_ms: float
    """One worker's CPU per move (the service's whole tree ÷ moves)."""
    machine_ms: float
    """The whole machine's busy CPU per move: the service, clients, PostgreSQL, NATS."""

    @classmethod
    def of(cls, run: Result) -> Law:
        return cls(run.cpu_ms_per_move, run.machine_ms_per_move)

    def bound(self, workers: int, cores: float) -> float:
        """The most moves/s `workers` can make on `cores` cores."""
        return 1000 * min(workers / self.service_ms, cores / self.machine_ms)


def workers_report(one: Result, many: Result, cores: int) -> None:
    """Target 4: `many.workers` workers against one on the same run, the clients capped,
    each run's CPU per move by who spent it, and the law's bounds beside the figures."""
    print(
        f"\nWorkers (issue 25, target 4): {one.game}, {one.tables} tables watching, closed loop; "
        f"clients {one.capped or 'not capped'}"
    )
    print("  workers  moves/s  service CPU  ms/move: service  clients  rest  machine  bound")
    for run in (one, many):
        law = Law.of(run)
        rest = run.machine_ms_per_move - run.cpu_ms_per_move - run.client_ms_per_move
        print(
            f"  {run.workers:>7}{run.rate:>9.0f}{100 * run.cpu_share:>11.0f}%"
            f"{run.cpu_ms_per_move:>18.2f}{run.client_ms_per_move:>9.2f}"
            f"{rest:>6.2f}{law.machine_ms:>9.2f}{law.bound(run.workers, cores):>7.0f}"
        )
    law = Law.of(one)
    print(
        f"  {many.workers} workers ÷ 1: moves/s ×{many.rate / one.rate:.2f} (target ≥ "
        f"{TARGET_WORKERS_RATIO}); the law from one worker's run, min(N / service, C / "
        f"machine): {many.workers} workers on these {cores} cores ≤ "
        f"{law.bound(many.workers, cores):.0f} moves/s, on {many.workers} cores free of "
        f"everything else ≤ {law.bound(many.workers, float('inf')):.0f}"
    )
