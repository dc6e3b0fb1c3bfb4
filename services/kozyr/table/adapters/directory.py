"""The table directory: which tables exist, who sits at them, when they opened and ended.

A read model for finding tables (the admin's `ListTables`, `kozyr tables`): one row per
table in `table_directory`, in the event store's database but owned by the table
service, never by the store (the store's own tables are read only through its API).
The log stays the truth, so the directory is disposable (docs/moderation.md, "Finding
tables"):

- the table service writes a table's row right after the append that opens it, and
  again after the append that ends its game; a call answers only once its row is
  written, and a retried call (same request id) writes it again, so a crash in between
  is repaired by the client's retry;
- `kozyr migrate` creates it, and the first process to use a database without it
  creates it too; whoever creates it fills it from the log (`rebuild`; in the service,
  in the background), so a lost directory comes back by itself: `DROP TABLE
  table_directory`, then `kozyr migrate` or a restart of the service.

Writes are idempotent upserts: a row is only ever completed (its end recorded once),
never moved back, so live writes and a rebuild may interleave freely.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import asyncpg

from kozyr.eventstore import EventStore, RecordedEvent
from kozyr.eventstore.dberrors import translate_errors
from kozyr.eventstore.urls import asyncpg_dsn
from kozyr.table.adapters.repository import STREAM_PREFIX, fold_recorded
from kozyr.table.domain.games import UnknownGame

SCHEMA_LOCK_KEY = 0x6B6F7A79_72_7464  # "kozyr" "td": creating the directory, once
DDL = """
CREATE TABLE table_directory (
    table_id uuid PRIMARY KEY,
    game text NOT NULL,
    seats text[] NOT NULL,
    created_at timestamptz NOT NULL,
    finished_at timestamptz
);
CREATE INDEX table_directory_newest ON table_directory (created_at DESC, table_id DESC);
CREATE INDEX table_directory_players ON table_directory USING gin (seats);
"""
UPSERT = """
INSERT INTO table_directory (table_id, game, seats, created_at, finished_at)
VALUES ($1, $2, $3, $4, $5)
ON CONFLICT (table_id) DO UPDATE
SET finished_at = COALESCE(table_directory.finished_at, EXCLUDED.finished_at)
"""
COLUMNS = "table_id::text, game, seats, created_at, finished_at"
REBUILD_PAGE = 1000


@dataclass(frozen=True, slots=True)
class ListedTable:
    """A table as the directory knows it."""

    table_id: str
    game_id: str
    seats: tuple[str, ...]
    """The player id per seat, "" for a computer seat."""
    created_at: datetime
    finished_at: datetime | None

    @property
    def finished(self) -> bool:
        return self.finished_at is not None


@dataclass(frozen=True, slots=True)
class TableQuery:
    """What to find; None means any."""

    player_id: str | None = None
    created_since: datetime | None = None
    finished: bool | None = None


@dataclass(frozen=True, slots=True)
class Cursor:
    """Where a page ended: the last table listed (pages are newest first)."""

    created_at: datetime
    table_id: str


class TableDirectory:
    """The `table_directory` read model over a small pool of its own."""

    def __init__(
        self, database_url: str, store: EventStore, *, pool_size: int = 2, timeout: float = 5.0
    ) -> None:
        """`timeout`: seconds for a connection, a wait for one, and a statement."""
        self._dsn = asyncpg_dsn(database_url)
        self._timeout = timeout
        self._store = store
        self._pool_size = pool_size
        self._pool: asyncpg.Pool | None = None
        self._ready = asyncio.Lock()
        self._rebuilding: asyncio.Task[int] | None = None

    async def record(
        self,
        table_id: str,
        game_id: str,
        seats: Sequence[str],
        created_at: datetime,
        finished_at: datetime | None = None,
    ) -> None:
        """Note a table (and its end, once known); safe to repeat."""
        async with self._connection() as connection:
            await connection.execute(
                UPSERT, table_id, game_id, list(seats), created_at, finished_at
            )

    async def find(
        self, query: TableQuery, limit: int, after: Cursor | None = None
    ) -> list[ListedTable]:
        """Up to `limit` tables matching `query`, newest first, after `after`."""
        statement, arguments = find_statement(query, limit, after)
        async with self._connection() as connection:
            rows = await connection.fetch(statement, *arguments)
        return [_listed(row) for row in rows]

    async def close(self) -> None:
        """Stop a rebuild in progress and close the pool."""
        if self._rebuilding is not None:
            self._rebuilding.cancel()
            await asyncio.gather(self._rebuilding, return_exceptions=True)
        pool, self._pool = self._pool, None
        if pool is not None:
            await pool.close()

    async def rebuild(self) -> int:
        """Fill the directory from the log (every table's creation, and its end); returns
        the number of tables recorded."""
        count, after = 0, 0
        while events := await self._store.read_all(after_global=after, limit=REBUILD_PAGE):
            after = events[-1].global_position
            for event in events:
                if event.type == "TableCreated" and event.stream.startswith(STREAM_PREFIX):
                    await self._record_from_log(event)
                    count += 1
        return count

    async def ensure(self) -> int:
        """Create the directory if it is missing and fill it from the log (awaited); the
        number of tables the log gave it (0 when it existed). `kozyr migrate` runs it."""
        async with self._connection():
            pass
        return await self.rebuilt()

    async def rebuilt(self) -> int:
        """Wait for the background rebuild started by this process, if any (tests)."""
        return await self._rebuilding if self._rebuilding is not None else 0

    async def _record_from_log(self, created: RecordedEvent) -> None:
        data = created.data
        ended = finish_time(await self._store.read(created.stream))
        seats = tuple(str(s) for s in data["seats"])
        await self.record(data["table_id"], data["game_id"], seats, created.recorded_at, ended)

    @asynccontextmanager
    async def _connection(self) -> AsyncIterator[Any]:
        with translate_errors():
            pool = await self._ready_pool()
            async with pool.acquire(timeout=self._timeout) as connection:
                yield connection

    async def _ready_pool(self) -> asyncpg.Pool:
        """The pool, the directory created (and its rebuild started) on first use."""
        if self._pool is not None:
            return self._pool
        async with self._ready:
            if self._pool is None:
                pool = await asyncpg.create_pool(
                    self._dsn,
                    min_size=0,
                    max_size=self._pool_size,
                    timeout=self._timeout,
                    command_timeout=self._timeout,
                )
                try:
                    created = await _create_if_missing(pool)
                except BaseException:
                    await pool.close()
                    raise
                if created:
                    self._rebuilding = asyncio.create_task(
                        self.rebuild(), name="table-directory-rebuild"
                    )
                self._pool = pool
            return self._pool


async def _create_if_missing(pool: asyncpg.Pool) -> bool:
    """Create the directory unless it exists; True when this call created it."""
    async with pool.acquire() as connection, connection.transaction():
        await connection.execute("SELECT pg_advisory_xact_lock($1)", SCHEMA_LOCK_KEY)
        if await connection.fetchval("SELECT to_regclass('table_directory') IS NOT NULL"):
            return False
        await connection.execute(DDL)
        return True


def find_statement(
    query: TableQuery, limit: int, after: Cursor | None = None
) -> tuple[str, list[Any]]:
    """The SELECT of `find` with only the filters asked for, and its arguments.

    One statement per combination of filters (at most 16, each prepared once), not one
    with `$n IS NULL OR …` clauses: a prepared statement's generic plan could not use
    the players' index for a clause that may be switched off."""
    where: list[str] = []
    arguments: list[Any] = []

    def given(value: Any, cast: str = "") -> str:
        arguments.append(value)
        return f"${len(arguments)}{cast}"

    if query.player_id is not None:
        where.append(f"seats @> ARRAY[{given(query.player_id, '::text')}]")
    if query.created_since is not None:
        where.append(f"created_at >= {given(query.created_since)}")
    if query.finished is not None:
        where.append(f"finished_at IS {'NOT ' if query.finished else ''}NULL")
    if after is not None:
        at, table = given(after.created_at), given(after.table_id, "::uuid")
        where.append(f"(created_at, table_id) < ({at}, {table})")
    condition = f" WHERE {' AND '.join(where)}" if where else ""
    statement = (
        f"SELECT {COLUMNS} FROM table_directory{condition}"
        f" ORDER BY created_at DESC, table_id DESC LIMIT {given(limit)}"
    )
    return statement, arguments


def finish_time(events: Sequence[RecordedEvent]) -> datetime | None:
    """When the table of these events (its whole stream, in order) ended; None if open,
    or if this build does not run its game (it cannot tell: listed as open)."""
    table = None
    try:
        for event in events:
            table = fold_recorded(table, [event])
            if table is not None and table.is_over:
                return event.recorded_at
    except UnknownGame:
        return None
    return None


def _listed(row: Any) -> ListedTable:
    return ListedTable(
        table_id=row["table_id"],
        game_id=row["game"],
        seats=tuple(row["seats"]),
        created_at=row["created_at"],
        finished_at=row["finished_at"],
    )
