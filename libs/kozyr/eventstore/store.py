"""`PostgresEventStore`: the event log on PostgreSQL.

Design in docs/eventstore.md. In short: an append is a single SQL statement (so a single
round trip and an implicit transaction) that bumps the stream version at the expected
version, records the request id, inserts the events and queues them in the outbox. The
hash chain is computed here, in Python, from the previous head hash; the head is read
from the database or from a small cache that is only ever a hint, because the statement
also requires `head_hash = previous` and falls back to a fresh read when the hint is wrong.

Statements run on asyncpg directly (a pool without the per-release reset query): measured
against SQLAlchemy's pool + Core execution, this halves the client-side cost of an append
and of replay (numbers in docs/eventstore.md). SQLAlchemy describes the schema
(`kozyr.eventstore.schema`) and runs the Alembic migrations.
"""

from __future__ import annotations

import asyncio
import base64
import json
from collections import OrderedDict
from collections.abc import AsyncIterator, Callable, Mapping, Sequence
from contextlib import asynccontextmanager
from datetime import UTC, datetime
from types import TracebackType
from typing import Any, Self
from uuid import UUID, uuid4

from asyncpg import (
    Connection,
    Pool,
    UniqueViolationError,
    connect,
    create_pool,
)

from kozyr.eventstore import statements
from kozyr.eventstore.appending import AppendPlan, plan_append
from kozyr.eventstore.dberrors import constraint_name, translate, translate_errors
from kozyr.eventstore.errors import (
    ConcurrencyConflict,
    IdempotencyConflict,
    StoreUnavailable,
    StreamCorrupted,
    VerifyFailure,
)
from kozyr.eventstore.hashing import GENESIS_HASH, decode_json, fingerprint_command
from kozyr.eventstore.model import (
    AppendResult,
    NewEvent,
    NewMessage,
    OutboxBacklog,
    OutboxEntry,
    OutboxReader,
    RecordedEvent,
    Snapshot,
    StreamHead,
    VerifyReport,
)
from kozyr.eventstore.rows import events_from_rows, outbox_from_rows
from kozyr.eventstore.schema import OUTBOX_CHANNEL
from kozyr.eventstore.urls import asyncpg_dsn
from kozyr.eventstore.verification import verify_events

_REFUSING_CONSTRAINTS = frozenset({"stream_requests_pkey", "events_stream_position_key"})
"""Unique violations that mean "somebody else appended first": the append is refused."""


def _utc_now() -> datetime:
    return datetime.now(UTC)


async def _keep_session(connection: Connection) -> None:
    """Pool reset hook: asyncpg already rolled back any open transaction; our sessions
    set nothing else, so the default reset query (a round trip per release) is skipped."""


class _HeadCache:
    """Last known (version, head hash) per stream: saves the head read before an append.

    Only a hint: a stale entry makes the conditional UPDATE match nothing, and the store
    then reads the real head. Bounded (least recently used entries are dropped).
    """

    def __init__(self, capacity: int) -> None:
        self._capacity = capacity
        self._entries: OrderedDict[str, tuple[int, bytes]] = OrderedDict()

    def get(self, stream: str) -> tuple[int, bytes] | None:
        entry = self._entries.get(stream)
        if entry is not None:
            self._entries.move_to_end(stream)
        return entry

    def put(self, stream: str, version: int, head_hash: bytes) -> None:
        if self._capacity <= 0:
            return
        self._entries[stream] = (version, head_hash)
        self._entries.move_to_end(stream)
        while len(self._entries) > self._capacity:
            self._entries.popitem(last=False)

    def forget(self, stream: str) -> None:
        self._entries.pop(stream, None)


class PostgresEventStore:
    """The event log in PostgreSQL. Safe for concurrent use by many tasks and replicas.

    The connection pool is created on first use (or by `await store.open()`, which also
    proves the database is reachable); `await store.close()` releases it.

    Nothing waits on the database without a bound, so a hung server (or a saturated
    pool) fails calls with `StoreUnavailable` instead of holding them: `connect_timeout`
    for a new connection, `acquire_timeout` for a free one from the pool,
    `statement_timeout` for each statement (asyncpg's `command_timeout` client-side and
    PostgreSQL's `statement_timeout` server-side). A statement cut short by a timeout or
    by the caller's cancellation never leaves half an append: an append is one statement,
    so one transaction. Its connection is closed, never handed back mid-statement; if
    the database had already received it, the append is whole in the log, and a retry
    with the same request id answers it.
    """

    def __init__(
        self,
        database_url: str,
        *,
        min_pool_size: int = 0,
        max_pool_size: int = 10,
        connect_timeout: float = 5.0,
        acquire_timeout: float = 5.0,
        statement_timeout: float = 5.0,
        application_name: str = "kozyr-eventstore",
        head_cache_size: int = 10_000,
        clock: Callable[[], datetime] = _utc_now,
        new_event_id: Callable[[], UUID] = uuid4,
    ) -> None:
        self._dsn = asyncpg_dsn(database_url)
        self._connect_timeout = connect_timeout
        self._pool_options: dict[str, Any] = {
            "min_size": min_pool_size,
            "max_size": max_pool_size,
            "timeout": connect_timeout,
            "command_timeout": statement_timeout,
            "server_settings": {
                "application_name": application_name,
                "statement_timeout": str(max(1, round(statement_timeout * 1000))),
            },
        }
        self._acquire_timeout = acquire_timeout
        self._pool: Pool | None = None
        self._pool_lock = asyncio.Lock()
        self._heads = _HeadCache(head_cache_size)
        self._queued_listeners: list[Callable[[], None]] = []
        """The `on_queued` of this store's open outbox readers: told of every append."""
        self._clock = clock
        self._new_event_id = new_event_id

    async def open(self) -> Self:
        """Create the pool now and check the database answers (raises `StoreUnavailable`)."""
        async with self._connect() as connection:
            await connection.fetchval("SELECT 1")
        return self

    async def check_writable(self) -> None:
        """Raise `StoreUnavailable` unless an append could be made now: the database
        answers, is the primary (a standby in recovery takes none; after a failover the
        pool may still hold a connection to the old primary turned standby), and has
        the event store's tables (`SchemaNotMigrated` otherwise).

        The health probe of a service that met an outage (`kozyr.runtime.outages`)."""
        async with self._connect() as connection:
            in_recovery, _ = await connection.fetchrow(statements.WRITABLE)
        if in_recovery:
            raise StoreUnavailable("the database is a standby (in recovery): it takes no append")

    async def synchronous_commit(self) -> str:
        """The `synchronous_commit` setting of this store's sessions ("on", "off", …)."""
        async with self._connect() as connection:
            return str(await connection.fetchval(statements.SYNCHRONOUS_COMMIT))

    async def close(self) -> None:
        """Close the pool (waits for connections in use to be released)."""
        pool, self._pool = self._pool, None
        if pool is not None:
            await pool.close()

    async def __aenter__(self) -> Self:
        return await self.open()

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        await self.close()

    # -- writing ---------------------------------------------------------------------

    async def append(
        self,
        stream: str,
        expected_version: int,
        events: Sequence[NewEvent],
        *,
        request_id: str,
        metadata: Mapping[str, Any] | None = None,
        command_fingerprint: str | None = None,
        messages: Sequence[NewMessage] = (),
    ) -> AppendResult:
        """Append `events` to `stream` if it is at `expected_version`, atomically.

        `messages` are queued in the outbox after the events, in the same transaction
        (nothing of them is stored when the append is refused or repeated).
        Raises `ConcurrencyConflict` when the stream moved on, `IdempotencyConflict` when
        `request_id` was used for different events (or another `command_fingerprint`),
        `InvalidEvent` before writing anything unstorable, `StoreUnavailable` when the
        database cannot be reached. A repeated `request_id` returns the first result
        with `duplicate=True` and appends nothing.
        """
        plan = plan_append(
            stream,
            expected_version,
            events,
            request_id=request_id,
            metadata=metadata,
            command_fingerprint=command_fingerprint,
            recorded_at=self._clock(),
            new_event_id=self._new_event_id,
            messages=messages,
        )
        async with self._connect() as connection:
            return await self._append(connection, plan)

    async def _append(self, connection: Connection, plan: AppendPlan) -> AppendResult:
        cached = self._heads.get(plan.stream)
        if cached is not None and cached[0] == plan.expected_version:
            result = await self._write(connection, plan, cached[1])
            if result is not None:
                return result
            self._heads.forget(plan.stream)
        head = await self._head(connection, plan.stream)
        version, head_hash = head if head else (0, GENESIS_HASH)
        if version == plan.expected_version:
            result = await self._write(connection, plan, head_hash)
            if result is not None:
                return result
        return await self._refused(connection, plan)

    async def _write(
        self, connection: Connection, plan: AppendPlan, previous_head: bytes
    ) -> AppendResult | None:
        """Try the one-statement append; None when it was refused (conflict or duplicate)."""
        hashes = plan.chain(previous_head)
        arguments = _append_arguments(plan, hashes)
        if plan.expected_version == 0:
            statement = statements.APPEND_TO_NEW_STREAM
        else:
            statement = statements.APPEND_TO_EXISTING_STREAM
            arguments.append(previous_head)
        try:
            rows = await connection.fetch(statement, *arguments)
        except UniqueViolationError as error:
            if constraint_name(error) in _REFUSING_CONSTRAINTS:
                return None
            raise
        if not rows:
            return None
        self._heads.put(plan.stream, plan.new_version, hashes[-1])
        for listener in self._queued_listeners:
            listener()
        return plan.recorded(hashes, [row[0] for row in rows])

    async def _refused(self, connection: Connection, plan: AppendPlan) -> AppendResult:
        """Explain a refused append: a repeat of a recorded request, or a real conflict."""
        first = await self._recorded_request(connection, plan.stream, plan.request_id)
        if first is not None:
            fingerprint, result = first
            if fingerprint != plan.fingerprint:
                raise IdempotencyConflict(plan.stream, plan.request_id)
            return result
        head = await self._head(connection, plan.stream)
        actual = head[0] if head else 0
        if actual == plan.expected_version:
            raise StreamCorrupted(
                plan.stream,
                actual,
                VerifyFailure.HEAD_MISMATCH,
                "the stream refused an append at its own version (head hash changed)",
            )
        raise ConcurrencyConflict(plan.stream, plan.expected_version, actual)

    # -- reading ---------------------------------------------------------------------

    async def read(
        self, stream: str, from_version: int = 0, limit: int | None = None
    ) -> list[RecordedEvent]:
        """Events of `stream` with position > `from_version`, in order (at most `limit`)."""
        async with self._connect() as connection:
            rows = await connection.fetch(statements.READ_STREAM, stream, from_version, limit)
        return events_from_rows(rows)

    async def read_all(self, after_global: int = 0, limit: int = 1000) -> list[RecordedEvent]:
        """Events of every stream by global position (audits and rebuilds, not tailing:
        a concurrent append can commit a lower global position later — use NATS to follow)."""
        async with self._connect() as connection:
            rows = await connection.fetch(statements.READ_ALL, after_global, limit)
        return events_from_rows(rows)

    async def head(self, stream: str) -> StreamHead | None:
        """The stream's version and head hash; None for a stream with no events."""
        async with self._connect() as connection:
            head = await self._head(connection, stream)
        if head is None:
            return None
        return StreamHead(stream=stream, version=head[0], head_hash=head[1].hex())

    async def versions(self, streams: Sequence[str]) -> dict[str, int]:
        """The versions of those of `streams` that exist, in one query.

        Lets a process check thousands of watched streams for changes without reading
        any of their events.
        """
        if not streams:
            return {}
        async with self._connect() as connection:
            rows = await connection.fetch(statements.VERSIONS, list(streams))
        return {row[0]: int(row[1]) for row in rows}

    async def result_of(
        self, stream: str, request_id: str, *, command_fingerprint: str | None = None
    ) -> AppendResult | None:
        """The result of the append made with `request_id`, or None if there was none.

        Lets a service answer a retried command before deciding it again (a re-decided
        command could be refused by the rules the second time round). With
        `command_fingerprint`, a request id first used for another command raises
        `IdempotencyConflict` instead of answering with that command's result.
        """
        async with self._connect() as connection:
            first = await self._recorded_request(connection, stream, request_id)
        if first is None:
            return None
        if command_fingerprint is not None and first[0] != fingerprint_command(command_fingerprint):
            raise IdempotencyConflict(stream, request_id)
        return first[1]

    async def verify(self, stream: str) -> VerifyReport:
        """Walk the stream's hash chain and report the first bad position, if any.

        Head and events are read in one REPEATABLE READ snapshot, so a concurrent
        append cannot make a sound stream look inconsistent.
        """
        async with (
            self._connect() as connection,
            connection.transaction(isolation="repeatable_read", readonly=True),
        ):
            head = await self._head(connection, stream)
            rows = await connection.fetch(statements.READ_STREAM, stream, 0, None)
        stream_head = (
            StreamHead(stream=stream, version=head[0], head_hash=head[1].hex()) if head else None
        )
        return verify_events(stream, stream_head, events_from_rows(rows))

    # -- snapshots (an optimisation for readers, never a source of truth) --------------

    async def save_snapshot(
        self, stream: str, version: int, key: str, data: Mapping[str, Any]
    ) -> bool:
        """Keep `data` as the stream's state at `version` folded by `key`'s code.

        False (nothing stored) when the stream has no event at `version` or the key
        already has a snapshot at least as new. Snapshots of other keys are dropped.
        """
        text = json.dumps(data, ensure_ascii=False)
        async with self._connect() as connection:
            row = await connection.fetchrow(
                statements.SAVE_SNAPSHOT, stream, version, key, text, self._clock()
            )
        return row is not None

    async def read_snapshot(self, stream: str, key: str) -> Snapshot | None:
        """The stream's snapshot for `key`, if the event it was saved at is unchanged."""
        async with self._connect() as connection:
            row = await connection.fetchrow(statements.READ_SNAPSHOT, stream, key)
        if row is None:
            return None
        data = decode_json(row[1])
        return Snapshot(stream, int(row[0]), key, data, bytes(row[2]).hex())

    # -- the outbox (read by the relay through this contract, never by SQL of its own) --

    @asynccontextmanager
    async def outbox_reader(
        self, *, lock_key: int, on_queued: Callable[[], None], name: str = "kozyr-outbox"
    ) -> AsyncIterator[OutboxReader]:
        """A reader on its own connection (not the pool's): the leader's advisory lock
        lives on it, so leadership ends the moment the connection does, and every read
        and removal of the leader goes through it. `name` is its application_name.

        Appends do not NOTIFY (migration 0004: a notifying transaction holds a
        database-wide lock through its commit's flush, which serialised every append):
        this store calls `on_queued` itself after each append, and a reader that does
        not lead passes the news on with `wake_leader`."""
        with translate_errors():
            connection = await connect(
                self._dsn,
                timeout=self._connect_timeout,
                server_settings={"application_name": name},
            )
        self._queued_listeners.append(on_queued)
        try:
            yield _PostgresOutboxReader(connection, lock_key, on_queued)
        finally:
            self._queued_listeners.remove(on_queued)
            connection.terminate()

    async def outbox_backlog(self) -> OutboxBacklog:
        """Entries waiting and the oldest one's age in seconds: the relay lag."""
        async with self._connect() as connection:
            count, age = await connection.fetchrow(statements.OUTBOX_BACKLOG)
        return OutboxBacklog(int(count), None if age is None else float(age))

    # -- helpers ---------------------------------------------------------------------

    @asynccontextmanager
    async def _connect(self) -> AsyncIterator[Connection]:
        with translate_errors():
            pool = await self._get_pool()
            # asyncio.timeout, not acquire(timeout=): asyncpg would wrap every acquire
            # in asyncio.wait_for, a task per append and per read.
            async with asyncio.timeout(self._acquire_timeout):
                connection = await pool.acquire()
            try:
                yield connection
            except asyncio.CancelledError:
                connection.terminate()  # maybe mid-statement: asyncpg would wait on it
                raise
            except Exception as error:
                if isinstance(translate(error), StoreUnavailable):
                    connection.terminate()  # never hand a broken connection back
                raise
            finally:
                await pool.release(connection)

    async def _get_pool(self) -> Pool:
        if self._pool is not None:
            return self._pool
        async with self._pool_lock:
            if self._pool is None:
                self._pool = await create_pool(self._dsn, reset=_keep_session, **self._pool_options)
            return self._pool

    async def _head(self, connection: Connection, stream: str) -> tuple[int, bytes] | None:
        row = await connection.fetchrow(statements.HEAD, stream)
        if row is None:
            self._heads.forget(stream)
            return None
        version, head_hash = int(row[0]), bytes(row[1])
        self._heads.put(stream, version, head_hash)
        return version, head_hash

    async def _recorded_request(
        self, connection: Connection, stream: str, request_id: str
    ) -> tuple[bytes, AppendResult] | None:
        row = await connection.fetchrow(statements.REQUEST, stream, request_id)
        if row is None:
            return None
        fingerprint, first, last = bytes(row[0]), int(row[1]), int(row[2])
        rows = await connection.fetch(statements.READ_POSITIONS, stream, first, last)
        result = AppendResult(stream=stream, events=tuple(events_from_rows(rows)), duplicate=True)
        return fingerprint, result


def _append_arguments(plan: AppendPlan, hashes: Sequence[bytes]) -> list[Any]:
    # The events' jsonb text is joined around each event's data as the plan encoded it
    # for its hash (types are identifiers: nothing to escape); one encoding per event.
    events = ",".join(
        f'{{"event_id":"{event.event_id}","position":{event.position},'
        f'"type":"{event.type}","schema_version":{event.schema_version},'
        f'"data":{event.data_json.decode()},"hash":"{event_hash.hex()}"}}'
        for event, event_hash in zip(plan.events, hashes, strict=True)
    )
    messages = [
        {
            "seq": seq,
            "message_id": str(message.message_id),
            "channel": message.channel,
            "type": message.type,
            "payload": base64.b64encode(message.payload).decode("ascii"),
        }
        for seq, message in enumerate(plan.messages, start=1)
    ]
    return [
        plan.stream,
        plan.expected_version,
        plan.new_version,
        hashes[-1],
        plan.request_id,
        plan.fingerprint,
        plan.recorded_at,
        plan.metadata_json.decode(),
        f"[{events}]",
        json.dumps(messages),
    ]


class _PostgresOutboxReader:
    """`OutboxReader` on one dedicated connection (see `PostgresEventStore.outbox_reader`)."""

    def __init__(
        self, connection: Connection, lock_key: int, on_queued: Callable[[], None]
    ) -> None:
        self._connection = connection
        self._key = lock_key
        self._on_queued = on_queued
        self._leading = False

    async def lead(self) -> bool:
        if not self._leading:
            with translate_errors():
                self._leading = bool(
                    await self._connection.fetchval(statements.OUTBOX_LEAD, self._key)
                )
                if self._leading:
                    await self._connection.add_listener(OUTBOX_CHANNEL, self._notified)
        return self._leading

    async def pending(self, limit: int) -> list[OutboxEntry]:
        self._check_leading()
        with translate_errors():
            rows = await self._connection.fetch(statements.OUTBOX_PENDING, limit)
        return outbox_from_rows(rows)

    async def remove(self, ids: Sequence[int]) -> None:
        self._check_leading()
        with translate_errors():
            await self._connection.execute(statements.OUTBOX_REMOVE, list(ids))

    async def wake_leader(self) -> None:
        with translate_errors():
            await self._connection.execute(statements.OUTBOX_WAKE, OUTBOX_CHANNEL)

    def _notified(self, *_: object) -> None:
        self._on_queued()

    def _check_leading(self) -> None:
        if not self._leading:
            raise RuntimeError("only the leading outbox reader may read or remove entries")
