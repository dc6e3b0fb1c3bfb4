"""What only a real PostgreSQL can show: concurrent writers, killed connections, the
append-only table, the outbox rows, plain-SQL tampering, outages."""

from __future__ import annotations

import asyncio
import json
import uuid
from collections.abc import AsyncIterator

import asyncpg
import pytest

from kozyr.eventstore import (
    AppendResult,
    ConcurrencyConflict,
    NewEvent,
    NewMessage,
    PostgresEventStore,
    SchemaNotMigrated,
    StoreUnavailable,
    VerifyFailure,
    migrate,
)
from kozyr.eventstore.schema import OUTBOX_CHANNEL
from kozyr.eventstore.urls import asyncpg_dsn

pytestmark = pytest.mark.integration


@pytest.fixture
async def migrated_url(database_url: str) -> str:
    await migrate(database_url)
    return database_url


@pytest.fixture
async def store(migrated_url: str) -> AsyncIterator[PostgresEventStore]:
    async with PostgresEventStore(migrated_url, max_pool_size=60) as opened:
        yield opened


@pytest.fixture
async def admin(migrated_url: str) -> AsyncIterator[asyncpg.Connection]:
    """A superuser connection to the test database, for plain-SQL checks and sabotage."""
    connection = await asyncpg.connect(asyncpg_dsn(migrated_url))
    yield connection
    await connection.close()


def new_stream() -> str:
    return f"table-{uuid.uuid4().hex[:12]}"


def one_event(label: str) -> list[NewEvent]:
    return [NewEvent("CardPlayed", {"card": label})]


async def count_rows(admin: asyncpg.Connection, table: str, stream: str) -> int:
    column = "id" if table == "streams" else "stream"
    if table == "outbox":
        query = (
            "SELECT count(*) FROM outbox o JOIN events e USING (global_position) "
            "WHERE e.stream = $1"
        )
    else:
        query = f"SELECT count(*) FROM {table} WHERE {column} = $1"
    return int(await admin.fetchval(query, stream))


async def wait_for_backend(
    admin: asyncpg.Connection, application_name: str, wait_event_type: str
) -> int:
    """The pid of the named backend once it is waiting on `wait_event_type` (bounded wait)."""
    for _ in range(600):
        pid = await admin.fetchval(
            "SELECT pid FROM pg_stat_activity WHERE application_name = $1 AND wait_event_type = $2",
            application_name,
            wait_event_type,
        )
        if pid is not None:
            return int(pid)
        await asyncio.sleep(0.05)
    raise AssertionError(f"backend {application_name!r} never waited on {wait_event_type}")


# -- concurrency -----------------------------------------------------------------------


async def test_fifty_concurrent_appends_at_one_version_let_exactly_one_win(
    store: PostgresEventStore,
) -> None:
    stream = new_stream()
    await store.append(stream, 0, one_event("first"), request_id="seed")

    outcomes = await asyncio.gather(
        *(store.append(stream, 1, one_event(f"w{i}"), request_id=f"writer-{i}") for i in range(50)),
        return_exceptions=True,
    )

    winners = [o for o in outcomes if isinstance(o, AppendResult)]
    conflicts = [o for o in outcomes if isinstance(o, ConcurrencyConflict)]
    assert len(winners) == 1
    assert len(conflicts) == 49
    assert all((c.expected, c.actual) == (1, 2) for c in conflicts)
    events = await store.read(stream)
    assert [e.position for e in events] == [1, 2]
    assert events[1] == winners[0].events[0]
    assert (await store.verify(stream)).ok


async def test_concurrent_writers_that_retry_build_one_contiguous_chain(
    store: PostgresEventStore,
) -> None:
    """Eight writers, each retrying on conflict from the version it is told: no gaps."""
    stream = new_stream()

    async def writer(name: str, count: int) -> None:
        expected = 0
        for index in range(count):
            while True:
                try:
                    result = await store.append(
                        stream, expected, one_event(f"{name}-{index}"), request_id=f"{name}-{index}"
                    )
                    expected = result.version
                    break
                except ConcurrencyConflict as conflict:
                    expected = conflict.actual

    await asyncio.gather(*(writer(f"w{i}", 5) for i in range(8)))

    events = await store.read(stream)
    assert [e.position for e in events] == list(range(1, 41))
    assert len({e.data["card"] for e in events}) == 40
    assert (await store.verify(stream)).ok


@pytest.mark.parametrize("expected_version", [0, 1])
async def test_twenty_concurrent_repeats_of_one_request_append_once(
    store: PostgresEventStore, expected_version: int
) -> None:
    stream = new_stream()
    if expected_version:
        await store.append(stream, 0, one_event("seed"), request_id="seed")
    events = [NewEvent("CardPlayed", {"card": "7H"}), NewEvent("TrickWon", {"seat": 1})]

    results = await asyncio.gather(
        *(store.append(stream, expected_version, events, request_id="retry-me") for _ in range(20))
    )

    originals = [r for r in results if not r.duplicate]
    assert len(originals) == 1
    assert all(r.events == originals[0].events for r in results)
    assert [e.position for e in await store.read(stream)] == list(range(1, expected_version + 3))
    assert (await store.verify(stream)).ok


async def test_a_stale_head_cache_in_another_replica_is_harmless(
    migrated_url: str, store: PostgresEventStore
) -> None:
    stream = new_stream()
    async with PostgresEventStore(migrated_url) as replica:
        await store.append(stream, 0, one_event("a"), request_id="a")
        await replica.append(stream, 1, one_event("b"), request_id="b")  # store's cache: v1
        with pytest.raises(ConcurrencyConflict) as raised:
            await store.append(stream, 1, one_event("c"), request_id="c")
        assert raised.value.actual == 2
        await store.append(stream, 2, one_event("c"), request_id="c")
    assert [e.data["card"] for e in await store.read(stream)] == ["a", "b", "c"]
    assert (await store.verify(stream)).ok


# -- atomicity -------------------------------------------------------------------------


async def test_a_connection_killed_mid_append_leaves_no_event_and_no_outbox_row(
    migrated_url: str, admin: asyncpg.Connection
) -> None:
    """Hold an append inside its statement (after every insert, before the commit), kill
    its backend, and find nothing of it: no stream, no event, no outbox row, no request."""
    await admin.execute(
        """
        CREATE FUNCTION test_hold() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN
            PERFORM pg_advisory_lock_shared(4242);
            RETURN NULL;
        END $$;
        CREATE TRIGGER test_hold AFTER INSERT ON outbox
            FOR EACH STATEMENT EXECUTE FUNCTION test_hold();
        """
    )
    await admin.execute("SELECT pg_advisory_lock(4242)")
    stream = new_stream()
    async with PostgresEventStore(migrated_url, application_name="doomed-appender") as doomed:
        append = asyncio.create_task(
            doomed.append(stream, 0, [*one_event("7H"), *one_event("8H")], request_id="r")
        )
        pid = await wait_for_backend(admin, "doomed-appender", "Lock")
        held = await admin.fetch(
            "SELECT relation::regclass::text AS name FROM pg_locks "
            "WHERE pid = $1 AND mode = 'RowExclusiveLock' AND relation IS NOT NULL",
            pid,
        )
        assert {"events", "outbox", "streams", "stream_requests"} <= {r["name"] for r in held}

        await admin.execute("SELECT pg_terminate_backend($1)", pid)
        with pytest.raises(StoreUnavailable):
            await append

        for table in ("streams", "events", "outbox", "stream_requests"):
            assert await count_rows(admin, table, stream) == 0, table
        await admin.execute("DROP TRIGGER test_hold ON outbox")
        await admin.execute("SELECT pg_advisory_unlock(4242)")
        retried = await doomed.append(stream, 0, one_event("7H"), request_id="r")
    assert not retried.duplicate
    assert retried.version == 1


async def test_the_outbox_gets_every_event_then_the_messages(
    store: PostgresEventStore, admin: asyncpg.Connection
) -> None:
    stream = new_stream()

    result = await store.append(
        stream,
        0,
        [NewEvent("SeatTaken", {"seat": 0}), NewEvent("TableFull", {})],
        request_id="r",
        messages=[NewMessage("public", "TableOpened", b"\x00\x01")],
    )

    rows = await admin.fetch(
        "SELECT stream, global_position, channel, type, payload FROM outbox ORDER BY id"
    )
    assert [tuple(r) for r in rows] == [
        *((stream, e.global_position, None, None, None) for e in result.events),
        (stream, None, "public", "TableOpened", b"\x00\x01"),
    ]


async def test_the_stores_open_readers_hear_of_each_append_and_appends_send_no_notify(
    store: PostgresEventStore, admin: asyncpg.Connection
) -> None:
    """A NOTIFY inside an append would serialise every commit on the database's notify
    lock (migration 0004): the store wakes its own readers, and a reader that does not
    lead wakes the leader with a NOTIFY of its own."""
    notified: asyncio.Queue[str] = asyncio.Queue()
    await admin.add_listener(OUTBOX_CHANNEL, lambda *args: notified.put_nowait(args[2]))
    heard: list[str] = []
    stream = new_stream()
    async with (
        store.outbox_reader(lock_key=7, on_queued=lambda: heard.append("leader")) as leader,
        store.outbox_reader(lock_key=7, on_queued=lambda: heard.append("standby")) as standby,
    ):
        assert await leader.lead()
        assert not await standby.lead()
        await store.append(stream, 0, one_event("7H"), request_id="r1")
        assert sorted(heard) == ["leader", "standby"]
        await store.append(stream, 0, one_event("7H"), request_id="r1")  # a repeat
        assert len(heard) == 2
        await asyncio.sleep(0.5)  # a NOTIFY sent by the append would have arrived
        assert notified.empty()
        await standby.wake_leader()
        assert await asyncio.wait_for(notified.get(), timeout=10) == OUTBOX_CHANNEL
    heard_while_open = len(heard)
    await store.append(stream, 1, one_event("8H"), request_id="r2")
    assert len(heard) == heard_while_open  # closed readers hear nothing


async def test_events_are_readable_with_plain_sql(
    store: PostgresEventStore, admin: asyncpg.Connection
) -> None:
    stream = new_stream()
    await store.append(
        stream,
        0,
        [NewEvent("ContractChosen", {"contract": "hearts", "seat": 2})],
        request_id="r",
        metadata={"actor": "p2"},
    )
    row = await admin.fetchrow(
        "SELECT type, data->>'contract' AS contract, metadata->>'actor' AS actor, "
        "metadata->>'request_id' AS request_id FROM events WHERE stream = $1",
        stream,
    )
    assert dict(row) == {
        "type": "ContractChosen",
        "contract": "hearts",
        "actor": "p2",
        "request_id": "r",
    }


# -- append-only and tamper evidence ---------------------------------------------------


@pytest.mark.parametrize(
    "statement",
    [
        "UPDATE events SET data = '{}'::jsonb",
        "DELETE FROM events",
        "TRUNCATE events CASCADE",
    ],
)
async def test_the_events_table_refuses_changes(
    store: PostgresEventStore, admin: asyncpg.Connection, statement: str
) -> None:
    stream = new_stream()
    await store.append(stream, 0, one_event("7H"), request_id="r")
    with pytest.raises(asyncpg.InsufficientPrivilegeError):
        await admin.execute(statement)
    assert await count_rows(admin, "events", stream) == 1


async def test_the_migrating_role_holds_no_update_or_delete_privilege(
    admin: asyncpg.Connection,
) -> None:
    privileges = await admin.fetchrow(
        "SELECT has_table_privilege('events', 'UPDATE') AS can_update, "
        "has_table_privilege('events', 'DELETE') AS can_delete, "
        "(SELECT rolsuper FROM pg_roles WHERE rolname = current_user) AS superuser"
    )
    if not privileges["superuser"]:  # a superuser bypasses privileges (not the trigger)
        assert (privileges["can_update"], privileges["can_delete"]) == (False, False)
    acl = await admin.fetchval("SELECT relacl::text FROM pg_class WHERE relname = 'events'")
    owner_rights = acl.split(",")[0].split("=")[1].split("/")[0]
    assert "w" not in owner_rights
    assert "d" not in owner_rights


async def test_an_event_altered_with_plain_sql_is_found_by_verify(
    store: PostgresEventStore, admin: asyncpg.Connection
) -> None:
    stream = new_stream()
    await store.append(stream, 0, [*one_event("7H"), *one_event("8H")], request_id="a")
    await store.append(stream, 2, [*one_event("9H"), *one_event("TH")], request_id="b")
    async with admin.transaction():  # what a superuser can do: switch the trigger off
        await admin.execute("ALTER TABLE events DISABLE TRIGGER events_append_only")
        await admin.execute(
            "UPDATE events SET data = jsonb_set(data, '{card}', '\"AS\"') "
            "WHERE stream = $1 AND position = 3",
            stream,
        )
        await admin.execute("ALTER TABLE events ENABLE TRIGGER events_append_only")

    report = await store.verify(stream)

    assert (report.ok, report.first_bad_position, report.failure) == (
        False,
        3,
        VerifyFailure.HASH_MISMATCH,
    )


async def test_a_deleted_event_is_found_by_verify(
    store: PostgresEventStore, admin: asyncpg.Connection
) -> None:
    stream = new_stream()
    await store.append(
        stream, 0, [*one_event("7H"), *one_event("8H"), *one_event("9H")], request_id="a"
    )
    await admin.execute("SET session_replication_role = replica")
    await admin.execute("DELETE FROM events WHERE stream = $1 AND position = 2", stream)
    await admin.execute("RESET session_replication_role")

    report = await store.verify(stream)
    assert (report.first_bad_position, report.failure) == (2, VerifyFailure.POSITION_GAP)


async def test_a_rewritten_head_is_found_by_verify(
    store: PostgresEventStore, admin: asyncpg.Connection
) -> None:
    stream = new_stream()
    await store.append(stream, 0, [*one_event("7H"), *one_event("8H")], request_id="a")
    await admin.execute("UPDATE streams SET version = 3 WHERE id = $1", stream)

    report = await store.verify(stream)
    assert (report.first_bad_position, report.failure) == (3, VerifyFailure.HEAD_MISMATCH)


async def test_a_float_planted_in_the_data_breaks_the_chain(
    store: PostgresEventStore, admin: asyncpg.Connection
) -> None:
    stream = new_stream()
    await store.append(stream, 0, [NewEvent("ScoreSet", {"points": 1})], request_id="a")
    await admin.execute("SET session_replication_role = replica")
    await admin.execute(
        "UPDATE events SET data = $1::jsonb WHERE stream = $2", json.dumps({"points": 1.0}), stream
    )
    report = await store.verify(stream)
    assert (report.first_bad_position, report.failure) == (1, VerifyFailure.HASH_MISMATCH)


# -- outages and missing schema --------------------------------------------------------


async def test_an_unreachable_database_is_store_unavailable() -> None:
    async with asyncio.timeout(30):
        store = PostgresEventStore(
            "postgresql+asyncpg://postgres@127.0.0.1:9/nowhere", connect_timeout=2
        )
        with pytest.raises(StoreUnavailable):
            await store.append(new_stream(), 0, one_event("7H"), request_id="r")
        with pytest.raises(StoreUnavailable):
            await store.read(new_stream())
        await store.close()


async def test_a_database_without_the_schema_says_so(database_url: str) -> None:
    async with PostgresEventStore(database_url) as store:
        with pytest.raises(SchemaNotMigrated):
            await store.read(new_stream())
        with pytest.raises(SchemaNotMigrated):
            await store.append(new_stream(), 0, one_event("7H"), request_id="r")


async def test_the_store_recovers_after_its_connections_are_killed(
    store: PostgresEventStore, admin: asyncpg.Connection
) -> None:
    stream = new_stream()
    await store.append(stream, 0, one_event("7H"), request_id="a")
    await admin.execute(
        "SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
        "WHERE application_name = 'kozyr-eventstore' AND pid <> pg_backend_pid()"
    )
    outcomes: list[object] = []
    for _ in range(10):  # each killed pooled connection may fail once, then is replaced
        try:
            outcomes.append(await store.append(stream, 1, one_event("8H"), request_id="b"))
            break
        except StoreUnavailable as error:
            outcomes.append(error)
    assert isinstance(outcomes[-1], AppendResult)
    assert [e.position for e in await store.read(stream)] == [1, 2]
