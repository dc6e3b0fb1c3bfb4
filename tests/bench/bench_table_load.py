"""Cold against cached table loads: a finished 3-5-8 table and a finished Khözör match.

    .venv/bin/python tests/bench/bench_table_load.py [--loads 60] [--no-fsync]

PostgreSQL from $KOZYR_DATABASE_URL, else an embedded server in a temporary directory
(kozyr.infra); a scratch database is created, migrated and dropped. One whole game of
each kind is played through TableApp on the PostgreSQL event store, then loaded by
`TableRepository.load` — what every GetTable, WatchTable and command does first — in
four ways, interleaved round by round so that the shared machine's noise hits all alike:

* replay      a fresh repository with snapshots off: reads and folds every event (what
              every cache miss cost before snapshots);
* snapshot    a fresh repository (empty cache): the snapshot saved at the table's last
              event, and the (no) events after it;
* snap+99     a fresh repository, for another table of the game still in play (at
              about 3/5 of a game) whose snapshot is 99 events behind: the worst case
              of a table in play, snapshotted every 100 events;
* cached      a repository that holds the table: only the (no) events after it.

Printed per game: p50 / p95 / max ms and each cold way's p50 as a multiple of the cached
p50 of the same run. Figures are printed, never asserted (DESIGN.md §9). Target (issue
8): a finished 3-5-8 table cold-loads in ≤ 10 ms.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import sys
import time
from collections.abc import Awaitable, Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # run as a script
from kozyr.eventstore import PostgresEventStore, migrate
from kozyr.games import khozor_teams, three_five_eight
from kozyr.table.adapters.repository import TableRepository, fold_recorded, stream_of
from kozyr.table.adapters.snapshots import EVERY, encode_table, fold_key
from kozyr.table.app import Actor, TableApp
from kozyr.table.domain.model import Table
from tests.bench.bench_table import scratch_database, servers
from tests.unit.table.test_audit_games import (
    MATCHMAKER,
    PLAYERS,
    choose,
    play_to_the_end,
)

TARGET_MS = 10.0
WAYS = ("replay", "snapshot", f"snap+{EVERY - 1}", "cached")
EVENTS: dict[str, dict[str, int]] = {}
"""Per game and way: the events of the table loaded (its version)."""
TARGET_EVENTS_PER_SECOND = 200_000


def unsnapshotted(store: PostgresEventStore) -> TableApp:
    """The service's app, saving no snapshot: the bench saves those it measures."""
    app = TableApp(store)
    app.tables = TableRepository(store, snapshot_every=0)
    return app


async def in_play(app: TableApp, game_id: str, version: int) -> Table:
    """A table of `game_id` still in play at `version` events or more (the loads of a
    finished one would save a snapshot at its end, and then read that one)."""
    for attempt in range(20):
        table = await play_until(app, game_id, version, attempt)
        if not table.is_over:
            return table
    raise RuntimeError(f"no {game_id} table lasted {version} events")


async def play_until(app: TableApp, game_id: str, version: int, attempt: int) -> Table:
    """A table of `game_id` whose players moved until it reached `version` events."""
    rng = random.Random(attempt)
    created = await app.create(
        request_id=f"create-{game_id}-in-play-{attempt}",
        game_id=game_id,
        options={},
        seats=PLAYERS[game_id],
        actor=MATCHMAKER,
    )
    table = created.table
    while table.version < version and not table.is_over:
        seat, command = choose(table, rng)
        player = Actor(table.seats[seat], "player")
        outcome = await app.submit(
            table.table_id, command, request_id=f"move-{table.version}", actor=player
        )
        table = outcome.table
    return table


async def saved_behind(store: PostgresEventStore, table: Table, behind: int) -> None:
    """A snapshot of `table` as it was `behind` events ago (folded from its log)."""
    events = await store.read(stream_of(table.table_id), limit=table.version - behind)
    folded = fold_recorded(None, events)
    assert folded is not None
    data = encode_table(folded)
    assert await store.save_snapshot(stream_of(table.table_id), folded.version, fold_key(), data)


async def timed(load: Callable[[], Awaitable[Table]]) -> float:
    started = time.perf_counter()
    await load()
    return time.perf_counter() - started


async def measure(store: PostgresEventStore, game_id: str, loads: int) -> dict[str, list[float]]:
    """Seconds per load, each way, for one finished table of `game_id`."""
    table = await play_to_the_end(unsnapshotted(store), game_id, random.Random(f"{game_id}-8"))
    await saved_behind(store, table, 0)
    playing = await in_play(unsnapshotted(store), game_id, table.version * 3 // 5)
    await saved_behind(store, playing, EVERY - 1)
    table_id, in_play_id = table.table_id, playing.table_id
    warm = TableRepository(store)
    await warm.load(table_id)
    samples: dict[str, list[float]] = {way: [] for way in WAYS}
    for _ in range(loads):
        for way, load in (
            ("replay", lambda: TableRepository(store, snapshot_every=0).load(table_id)),
            ("snapshot", lambda: TableRepository(store).load(table_id)),
            (WAYS[2], lambda: TableRepository(store).load(in_play_id)),
            ("cached", lambda: warm.load(table_id)),
        ):
            samples[way].append(await timed(load))
    size = len(json.dumps(encode_table(table)))
    print(f"{game_id}: {table.version} events (snapshot {size:,} B), in play: {playing.version}")
    EVENTS[game_id] = dict.fromkeys(WAYS, table.version) | {WAYS[2]: playing.version}
    return samples


def percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(share * len(ordered)) - 1))]


def report(results: dict[str, dict[str, list[float]]]) -> None:
    print(
        f"\n{'game':<18}{'load':<12}{'p50 ms':>8}{'p95 ms':>8}{'max ms':>8}{'× cached':>10}"
        f"{'events/s at p50':>17}"
    )
    for game_id, samples in results.items():
        cached = percentile(samples["cached"], 0.5)
        for way in WAYS:
            values = samples[way]
            p50 = percentile(values, 0.5)
            rate = EVENTS[game_id][way] / p50
            print(
                f"{game_id:<18}{way:<12}{p50 * 1e3:8.2f}{percentile(values, 0.95) * 1e3:8.2f}"
                f"{max(values) * 1e3:8.2f}{p50 / cached:10.1f}{rate:17,.0f}"
            )
    print(f"\nTarget (issue 8): a finished 3-5-8 table cold-loads in ≤ {TARGET_MS:.0f} ms.")
    print(
        f"Target (issue 13): a cold load of a 1,000-event table ≥ {TARGET_EVENTS_PER_SECOND:,} "
        "events/s (the table's events ÷ the load's p50; snapshot: what a cold load reads)."
    )


async def bench(server_url: str, loads: int) -> dict[str, dict[str, list[float]]]:
    async with scratch_database(server_url) as database_url:
        await migrate(database_url)
        store = PostgresEventStore(database_url)
        try:
            return {
                game_id: await measure(store, game_id, loads)
                for game_id in (three_five_eight.GAME_ID, khozor_teams.GAME_ID)
            }
        finally:
            await store.close()


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--loads", type=int, default=60, help="loads per way and game")
    parser.add_argument("--no-fsync", action="store_true", help="embedded PostgreSQL only")
    args = parser.parse_args()
    with servers(durable=not args.no_fsync) as (server_url, _nats_url):
        report(asyncio.run(bench(server_url, args.loads)))


if __name__ == "__main__":
    main()
