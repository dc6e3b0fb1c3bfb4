"""ListTables' queries on a big table directory (issue 15, item 3).

    .venv/bin/python tests/bench/bench_list_tables.py [--tables 200000] [--players 20000]

PostgreSQL from $KOZYR_DATABASE_URL, else an embedded server in a temporary directory;
a scratch database is created and dropped. The directory (`kozyr.table.adapters.directory`) is
filled with `--tables` rows in one statement — three seats of random players each, a
creation time spread over 90 days, nine in ten finished — then each query ListTables
makes is timed through `TableDirectory.find` (the service's own SQL), 50 times with
random players, and a `record` (the write after an opening append) likewise. Printed:
p50 / p95 ms per query and the plan's access path; never asserted (DESIGN.md §9).
"""

from __future__ import annotations

import argparse
import asyncio
import random
import statistics
import sys
import time
import uuid
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # run as a script
import asyncpg

from kozyr.eventstore import PostgresEventStore, migrate
from kozyr.eventstore.urls import asyncpg_dsn
from kozyr.table.adapters.directory import Cursor, TableDirectory, TableQuery, find_statement
from tests.bench.bench_table import scratch_database, servers

RUNS = 50
PAGE = 50
FILL = """
INSERT INTO table_directory (table_id, game, seats, created_at, finished_at)
SELECT gen_random_uuid(), 'three_five_eight',
       ARRAY['p' || (random() * $2)::int, 'p' || (random() * $2)::int,
             'p' || (random() * $2)::int],
       created, CASE WHEN random() < 0.9 THEN created + interval '40 minutes' END
FROM (SELECT now() - random() * interval '90 days' AS created
      FROM generate_series(1, $1)) AS made
"""


async def timed(runs: int, call: Callable[[], Awaitable[object]]) -> list[float]:
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        await call()
        times.append((time.perf_counter() - start) * 1000)
    return times


def line(name: str, times: list[float], plan: str = "") -> None:
    p50 = statistics.median(times)
    p95 = statistics.quantiles(times, n=20)[-1]
    print(f"  {name:<40} p50 {p50:7.2f} ms   p95 {p95:7.2f} ms   {plan}")


async def plan_of(url: str, query: TableQuery, after: Cursor | None) -> str:
    """The access path PostgreSQL picks for the query (the plan's index names)."""
    connection = await asyncpg.connect(asyncpg_dsn(url))
    try:
        statement, arguments = find_statement(query, PAGE + 1, after)
        rows = await connection.fetch(f"EXPLAIN {statement}", *arguments)
    finally:
        await connection.close()
    text = " ".join(r[0] for r in rows)
    used = sorted({w for w in text.replace("(", " ").split() if w.startswith("table_directory_")})
    return ", ".join(used) or ("seq scan" if "Seq Scan" in text else "")


async def bench(url: str, tables: int, players: int) -> None:
    await migrate(url)
    store = PostgresEventStore(url)
    directory = TableDirectory(url, store)
    try:
        await directory.find(TableQuery(), 1)  # creates the directory
        connection = await asyncpg.connect(asyncpg_dsn(url))
        try:
            started = time.perf_counter()
            await connection.execute(FILL, tables, players)
            await connection.execute("VACUUM ANALYZE table_directory")  # as autovacuum would
            print(
                f"{tables:,} tables of {players:,} players filled in "
                f"{time.perf_counter() - started:.1f} s"
            )
        finally:
            await connection.close()

        def someone() -> str:
            return f"p{random.randrange(players)}"

        month = datetime.now(UTC) - timedelta(days=30)
        week = datetime.now(UTC) - timedelta(days=7)
        deep = await directory.find(TableQuery(), PAGE * 100)
        cursor = Cursor(deep[-1].created_at, deep[-1].table_id)
        cases: list[tuple[str, Callable[[], TableQuery], Cursor | None]] = [
            ("newest page, no filter", TableQuery, None),
            ("page 101, no filter (keyset)", TableQuery, cursor),
            ("one player's tables", lambda: TableQuery(someone()), None),
            (
                "one player, finished, last 30 days",
                lambda: TableQuery(someone(), month, True),
                None,
            ),
            ("one player, open", lambda: TableQuery(someone(), None, False), None),
            ("open tables, every player", lambda: TableQuery(None, None, False), None),
            ("created in the last 7 days", lambda: TableQuery(None, week, None), None),
        ]
        for name, query, after in cases:

            async def find(q: Callable[[], TableQuery] = query, a: Cursor | None = after) -> None:
                await directory.find(q(), PAGE + 1, a)

            line(name, await timed(RUNS, find), await plan_of(url, query(), after))

        async def record() -> None:
            seats = [someone(), someone(), ""]
            await directory.record(str(uuid.uuid4()), "three_five_eight", seats, datetime.now(UTC))

        line("record (the write after an opening append)", await timed(RUNS, record))
    finally:
        await directory.close()
        await store.close()


async def main(tables: int, players: int) -> None:
    with servers(durable=False) as (server_url, _nats):
        async with scratch_database(server_url) as url:
            await bench(url, tables, players)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tables", type=int, default=200_000)
    parser.add_argument("--players", type=int, default=20_000)
    args = parser.parse_args()
    asyncio.run(main(args.tables, args.players))
