"""Event store throughput, side by side with the PyPI `eventsourcing` library and the floor.

    .venv/bin/python tests/bench/bench_eventstore.py [--database-url URL] [--nats-url URL]

Without URLs: $KOZYR_DATABASE_URL / $KOZYR_NATS_URL, else embedded servers (kozyr.infra,
durable: fsync on) under .bench/. A scratch database is created and dropped.

Measured, best of --rounds rounds (the machine is shared: best-of is the least noisy):

* appends/s: commands of 1 and 3 events, 1 and 8 concurrent writers, each writer on its
  own stream (and 8 writers on ONE stream, retrying on conflict, as a worst case);
* the same payloads stored by eventsourcing's PostgreSQL recorders (psycopg 3):
  PostgresApplicationRecorder (global order + NOTIFY, the like-for-like) and
  PostgresAggregateRecorder (per-aggregate rows only, no global order: a lower bound);
* the floor: a bare one-row INSERT + COMMIT loop on asyncpg;
* events replayed/s from a 1,000-event stream (ours, eventsourcing, raw asyncpg fetch);
* relay latency, append → message on NATS: the relay woken in its own process, woken
  by another process's standby relay (NOTIFY), or polling.

Figures are printed, never asserted (DESIGN.md §9).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import statistics
import sys
import threading
import time
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import asyncpg
import nats
from eventsourcing.persistence import StoredEvent
from eventsourcing.postgres import (
    PostgresAggregateRecorder,
    PostgresApplicationRecorder,
    PostgresDatastore,
)
from sqlalchemy.engine import make_url

from kozyr.bus.relay import OutboxRelay
from kozyr.bus.streams import TABLE_CATEGORIES
from kozyr.eventstore import ConcurrencyConflict, NewEvent, PostgresEventStore, migrate
from kozyr.eventstore.urls import asyncpg_dsn, sqlalchemy_url

METADATA = {"actor": "player-1", "correlation_id": "bench"}


def payload(index: int, slot: int) -> dict[str, Any]:
    return {"seat": slot % 3, "card": "7H", "trick": index, "slot": slot}


@dataclass(frozen=True)
class Figure:
    name: str
    writers: int
    per_command: int
    commands: int
    seconds: float

    @property
    def commands_per_second(self) -> float:
        return self.commands / self.seconds

    @property
    def events_per_second(self) -> float:
        return self.commands * self.per_command / self.seconds


# -- our store ----------------------------------------------------------------------------


async def ours(store: PostgresEventStore, writers: int, per_command: int, count: int) -> Figure:
    async def writer() -> None:
        stream = f"table-{uuid.uuid4().hex}"
        for index in range(count):
            events = [NewEvent("CardPlayed", payload(index, slot)) for slot in range(per_command)]
            await store.append(
                stream, index * per_command, events, request_id=f"r{index}", metadata=METADATA
            )

    started = time.perf_counter()
    await asyncio.gather(*(writer() for _ in range(writers)))
    return Figure(
        "kozyr PostgresEventStore", writers, per_command, writers * count, _since(started)
    )


async def ours_one_stream(store: PostgresEventStore, writers: int, count: int) -> Figure:
    """Eight writers on one stream: each conflict costs a retry (the worst case)."""
    stream = f"table-{uuid.uuid4().hex}"

    async def writer(name: int) -> None:
        expected = 0
        for index in range(count):
            while True:
                try:
                    result = await store.append(
                        stream,
                        expected,
                        [NewEvent("CardPlayed", payload(index, name))],
                        request_id=f"w{name}-{index}",
                        metadata=METADATA,
                    )
                    expected = result.version
                    break
                except ConcurrencyConflict as conflict:
                    expected = conflict.actual

    started = time.perf_counter()
    await asyncio.gather(*(writer(n) for n in range(writers)))
    return Figure("kozyr, all writers on ONE stream", writers, 1, writers * count, _since(started))


# -- eventsourcing ------------------------------------------------------------------------


def eventsourcing_datastore(url: str, pool_size: int) -> PostgresDatastore:
    parsed = make_url(sqlalchemy_url(url))
    return PostgresDatastore(
        dbname=parsed.database or "postgres",
        host=parsed.host or "127.0.0.1",
        port=parsed.port or 5432,
        user=parsed.username or "postgres",
        password=parsed.password or "",
        pool_size=pool_size,
    )


def stored_events(originator: uuid.UUID, index: int, per_command: int) -> list[StoredEvent]:
    return [
        StoredEvent(
            originator_id=originator,
            originator_version=index * per_command + slot + 1,
            topic="CardPlayed",
            state=json.dumps({"data": payload(index, slot), "metadata": METADATA}).encode(),
        )
        for slot in range(per_command)
    ]


def eventsourcing(
    recorder: PostgresAggregateRecorder, name: str, writers: int, per_command: int, count: int
) -> Figure:
    def writer() -> None:
        originator = uuid.uuid4()
        for index in range(count):
            recorder.insert_events(stored_events(originator, index, per_command))

    threads = [threading.Thread(target=writer) for _ in range(writers)]
    started = time.perf_counter()
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return Figure(name, writers, per_command, writers * count, _since(started))


# -- the floor ----------------------------------------------------------------------------


async def floor(dsn: str, writers: int, count: int) -> Figure:
    connections = [await asyncpg.connect(dsn) for _ in range(writers)]
    await connections[0].execute(
        "CREATE TABLE IF NOT EXISTS bench_floor (id bigserial PRIMARY KEY, data jsonb NOT NULL)"
    )

    async def writer(connection: asyncpg.Connection) -> None:
        for index in range(count):
            await connection.execute(
                "INSERT INTO bench_floor (data) VALUES ($1::jsonb)", json.dumps(payload(index, 0))
            )

    started = time.perf_counter()
    await asyncio.gather(*(writer(c) for c in connections))
    seconds = _since(started)
    for connection in connections:
        await connection.close()
    return Figure("floor: asyncpg INSERT+COMMIT", writers, 1, writers * count, seconds)


# -- replay -------------------------------------------------------------------------------


async def replay_figures(
    store: PostgresEventStore, recorder: PostgresAggregateRecorder, dsn: str, repeats: int
) -> list[tuple[str, float]]:
    stream = f"table-{uuid.uuid4().hex}"
    for index in range(100):
        events = [NewEvent("CardPlayed", payload(index, slot)) for slot in range(10)]
        await store.append(stream, index * 10, events, request_id=f"r{index}", metadata=METADATA)
    originator = uuid.uuid4()
    for index in range(100):
        recorder.insert_events(stored_events(originator, index, 10))
    connection = await asyncpg.connect(dsn)
    raw = (
        "SELECT global_position, event_id, stream, position, type, schema_version, "
        "data::text, metadata::text, recorded_at, hash FROM events "
        "WHERE stream = $1 AND position > $2 ORDER BY position"
    )

    async def kozyr_read() -> int:
        return len(await store.read(stream))

    async def eventsourcing_read() -> int:
        return len(recorder.select_events(originator))

    async def raw_fetch() -> int:
        return len(await connection.fetch(raw, stream, 0))

    figures = [
        ("kozyr PostgresEventStore.read", await _best_rate(kozyr_read, repeats)),
        ("eventsourcing select_events", await _best_rate(eventsourcing_read, repeats)),
        ("floor: asyncpg fetch (no objects)", await _best_rate(raw_fetch, repeats)),
    ]
    await connection.close()
    return figures


async def _best_rate(read: Callable[[], Awaitable[int]], repeats: int) -> float:
    best = 0.0
    for _ in range(repeats):
        started = time.perf_counter()
        count = await read()
        best = max(best, count / _since(started))
    return best


# -- relay latency ------------------------------------------------------------------------


WAKE_UPS = {
    "in-process: the leader's own store wakes it (poll 1 s)": ("leader", 1.0),
    "across processes: the appender's standby relay NOTIFYs (poll 1 s)": ("standby", 1.0),
    "no relay in the appender's process: polling every 50 ms": ("none", 0.05),
}
"""How the leading relay learns of an append → (who appends, the leader's poll interval)."""


async def relay_latency(
    url: str, nats_url: str, *, appender: str, idle_interval: float, samples: int
) -> list[float]:
    """Append → message on NATS, one event at a time. `appender`: "leader" appends
    through the leading relay's store; "standby" through a second store (another
    process) whose relay stands by; "none" through a second store with no relay."""
    root = f"bench{uuid.uuid4().hex[:8]}"
    admin = await asyncpg.connect(asyncpg_dsn(url))
    await admin.execute("DELETE FROM outbox")  # the throughput runs' events: not for NATS
    await admin.close()
    client = await nats.connect(nats_url)
    arrivals: dict[str, float] = {}
    arrived = asyncio.Event()

    async def on_message(message: Any) -> None:
        arrivals[message.headers["Nats-Msg-Id"]] = time.perf_counter()
        arrived.set()

    await client.subscribe(f"{root}.table.>", cb=on_message)
    latencies: list[float] = []
    async with PostgresEventStore(url) as store, PostgresEventStore(url) as elsewhere:
        relays = [
            OutboxRelay(
                store,
                nats_url,
                categories=TABLE_CATEGORIES,
                subject_root=root,
                idle_interval=idle_interval,
            )
        ]
        tasks = [asyncio.create_task(relays[0].run())]
        await _at_most_30_s(lambda: relays[0].stats.leader)
        if appender == "standby":
            relays.append(
                OutboxRelay(
                    elsewhere,
                    nats_url,
                    categories=TABLE_CATEGORIES,
                    subject_root=root,
                    idle_interval=600,
                )
            )
            tasks.append(asyncio.create_task(relays[1].run()))
            await _at_most_30_s(lambda: relays[1].stats.sessions > 0)  # it stands by
        appending = store if appender == "leader" else elsewhere
        stream = f"table-{uuid.uuid4().hex}"
        for index in range(samples):
            arrived.clear()
            started = time.perf_counter()
            result = await appending.append(
                stream, index, [NewEvent("CardPlayed", payload(index, 0))], request_id=f"r{index}"
            )
            event_id = str(result.events[0].event_id)
            while event_id not in arrivals:
                await asyncio.wait_for(arrived.wait(), timeout=30)
                arrived.clear()
            latencies.append(arrivals[event_id] - started)
            await asyncio.sleep(0.02)
        for relay in relays:
            relay.stop()
        await asyncio.gather(*tasks)
    await client.close()
    return latencies


async def _at_most_30_s(condition: Callable[[], bool]) -> None:
    """Wait until `condition` holds, or 30 s (the measurement then shows the delay)."""
    for _ in range(3000):
        if condition():
            return
        await asyncio.sleep(0.01)


# -- running ------------------------------------------------------------------------------


def _since(started: float) -> float:
    return time.perf_counter() - started


@contextlib.contextmanager
def servers(database_url: str | None, nats_url: str | None) -> Iterator[tuple[str, str]]:
    if database_url and nats_url:
        yield database_url, nats_url
        return
    from kozyr.infra import provision

    env = dict(os.environ)
    if database_url:
        env["KOZYR_DATABASE_URL"] = database_url
    if nats_url:
        env["KOZYR_NATS_URL"] = nats_url
    with provision(Path(".bench/eventstore"), env=env, durable=True, use_docker=False) as infra:
        yield infra.database_url, infra.nats_url


@contextlib.asynccontextmanager
async def scratch_database(server_url: str) -> AsyncIterator[str]:
    name = f"kozyr_bench_{uuid.uuid4().hex[:8]}"
    admin = await asyncpg.connect(asyncpg_dsn(server_url))
    await admin.execute(f'CREATE DATABASE "{name}"')
    await admin.close()
    parsed = make_url(sqlalchemy_url(server_url)).set(database=name)
    try:
        yield parsed.render_as_string(hide_password=False)
    finally:
        admin = await asyncpg.connect(asyncpg_dsn(server_url))
        await admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        await admin.close()


async def main(args: argparse.Namespace) -> None:
    with servers(args.database_url, args.nats_url) as (server_url, nats_url):
        async with scratch_database(server_url) as url:
            await migrate(url)
            await run_all(url, nats_url, args)


async def run_all(url: str, nats_url: str, args: argparse.Namespace) -> None:
    parts = set(args.only or ["appends", "replay", "relay"])
    datastore = eventsourcing_datastore(url, pool_size=8)
    application = PostgresApplicationRecorder(datastore, events_table_name="es_application")
    aggregate = PostgresAggregateRecorder(datastore, events_table_name="es_aggregate")
    application.create_table()
    aggregate.create_table()
    print(f"load average before: {os.getloadavg()[0]:.2f}", file=sys.stderr)
    async with PostgresEventStore(url, max_pool_size=16) as store:
        if "appends" in parts:
            report_appends(await append_figures(store, application, aggregate, url, args))
        if "replay" in parts:
            report_replay(await replay_figures(store, aggregate, asyncpg_dsn(url), args.rounds * 3))
    if "relay" in parts:
        report_latencies(
            {
                name: await relay_latency(
                    url, nats_url, appender=appender, idle_interval=poll, samples=args.samples
                )
                for name, (appender, poll) in WAKE_UPS.items()
            }
        )
    print(f"\nload average after: {os.getloadavg()[0]:.2f} (2 cores, shared)")


async def append_figures(
    store: PostgresEventStore,
    application: PostgresAggregateRecorder,
    aggregate: PostgresAggregateRecorder,
    url: str,
    args: argparse.Namespace,
) -> dict[tuple[str, int, int], Figure]:
    """Every append workload, interleaved round by round; the best round of each kept."""
    best: dict[tuple[str, int, int], Figure] = {}

    def keep(figure: Figure) -> None:
        key = (figure.name, figure.writers, figure.per_command)
        if key not in best or figure.seconds < best[key].seconds:
            best[key] = figure

    recorders = [
        (application, "eventsourcing ApplicationRecorder"),
        (aggregate, "eventsourcing AggregateRecorder"),
    ]
    for round_ in range(args.rounds):
        print(f"round {round_ + 1}/{args.rounds} …", file=sys.stderr)
        for writers in (1, 8):
            count = args.commands if writers == 1 else max(args.commands // 4, 10)
            for per_command in (1, 3):
                keep(await ours(store, writers, per_command, count))
                for recorder, name in recorders:
                    keep(
                        await asyncio.to_thread(
                            eventsourcing, recorder, name, writers, per_command, count
                        )
                    )
            keep(await floor(asyncpg_dsn(url), writers, count))
        keep(await ours_one_stream(store, 8, max(args.commands // 8, 10)))
    return best


def report_appends(best: dict[tuple[str, int, int], Figure]) -> None:
    print("\nAppends (best of rounds; commands/s and events/s)")
    print(f"{'implementation':40} {'writers':>7} {'ev/cmd':>6} {'cmds/s':>9} {'events/s':>9}")
    for figure in sorted(best.values(), key=lambda f: (f.writers, f.per_command, f.name)):
        print(
            f"{figure.name:40} {figure.writers:>7} {figure.per_command:>6} "
            f"{figure.commands_per_second:>9.0f} {figure.events_per_second:>9.0f}"
        )
    print("\nRatios: kozyr ÷ other, same writers and events per command")
    for writers in (1, 8):
        for per_command in (1, 3):
            mine = best[("kozyr PostgresEventStore", writers, per_command)]
            for other in ("eventsourcing ApplicationRecorder", "eventsourcing AggregateRecorder"):
                theirs = best[(other, writers, per_command)]
                ratio = mine.commands_per_second / theirs.commands_per_second
                print(f"  {writers} writer(s), {per_command} event(s): vs {other:34} {ratio:5.2f}×")
            floor_figure = best.get(("floor: asyncpg INSERT+COMMIT", writers, 1))
            if floor_figure and per_command == 1:
                ratio = mine.commands_per_second / floor_figure.commands_per_second
                print(f"  {writers} writer(s), 1 event(s): vs the floor {'':25} {ratio:5.2f}×")


def report_replay(replay: list[tuple[str, float]]) -> None:
    print("\nReplay of a 1,000-event stream (events/s, best)")
    for name, rate in replay:
        print(f"  {name:40} {rate:>10.0f}")


def report_latencies(latencies: dict[str, list[float]]) -> None:
    print("\nRelay latency, append → message on NATS (ms)")
    for name, values in latencies.items():
        ordered = sorted(values)
        p95 = ordered[int(0.95 * (len(ordered) - 1))]
        print(f"  {name:68} p50 {statistics.median(values) * 1000:7.1f}   p95 {p95 * 1000:7.1f}")


def parse_arguments() -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--database-url", default=os.environ.get("KOZYR_DATABASE_URL"))
    parser.add_argument("--nats-url", default=os.environ.get("KOZYR_NATS_URL"))
    parser.add_argument("--commands", type=int, default=400, help="commands per single writer")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--samples", type=int, default=40, help="relay latency samples")
    parser.add_argument(
        "--only", action="append", choices=["appends", "replay", "relay"], help="repeatable"
    )
    return parser.parse_args()


if __name__ == "__main__":
    asyncio.run(main(parse_arguments()))
