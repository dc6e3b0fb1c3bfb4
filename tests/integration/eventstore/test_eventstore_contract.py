"""The event store contract, run against every backend (InMemoryEventStore, PostgreSQL;
and PostgreSQL in the postgres:16-alpine container where a Docker engine answers).

One suite, parametrised over the backends, in the spirit of eventsourcing's
tests/persistence.py: whatever a service can observe through `EventStore` must be the
same on both. PostgreSQL-only behaviour (real concurrency, killed connections, the
append-only trigger) is in test_eventstore_postgres.py.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass
from typing import Any

import asyncpg
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kozyr.eventstore import (
    Append,
    Appended,
    ConcurrencyConflict,
    EventStore,
    IdempotencyConflict,
    InMemoryEventStore,
    InvalidEvent,
    NewEvent,
    NewMessage,
    OutboxEntry,
    PostgresEventStore,
    QueuedMessage,
    RecordedEvent,
    Repeated,
    Settled,
    StreamCorrupted,
    VerifyFailure,
    decide_and_append,
    migrate,
)
from kozyr.eventstore.urls import asyncpg_dsn
from kozyr.infra import Infrastructure
from tests.support.containers import CONTAINERS
from tests.support.databases import fresh_database

Tamper = Callable[[str, int, dict[str, Any]], Awaitable[None]]
Rehash = Callable[[str, int, str], Awaitable[None]]


@dataclass
class Backend:
    name: str
    store: EventStore
    tamper: Tamper
    """Overwrite the data of one stored event behind the store's back."""
    rehash: Rehash
    """Overwrite the hash (hex) of one stored event behind the store's back."""


@pytest.fixture(
    params=[
        "memory",
        pytest.param("postgres", marks=pytest.mark.integration),
        pytest.param("postgres-container", marks=[pytest.mark.integration, CONTAINERS]),
    ]
)
def backend_kind(request: pytest.FixtureRequest) -> str:
    """In memory; on the session's PostgreSQL; on postgres:16-alpine, the image
    docker-compose.yml deploys, through testcontainers where a Docker engine answers."""
    return str(request.param)


@pytest.fixture
def postgres_url(backend_kind: str, request: pytest.FixtureRequest) -> str | None:
    """A fresh, empty database on the backend's server (None in memory)."""
    if backend_kind == "memory":
        return None
    fixture = "database_url" if backend_kind == "postgres" else "container_database_url"
    return str(request.getfixturevalue(fixture))


@pytest.fixture
async def container_database_url(postgres_container_infra: Infrastructure) -> AsyncIterator[str]:
    """A fresh, empty database on the postgres:16-alpine container; dropped after."""
    async with fresh_database(postgres_container_infra) as url:
        yield url


@pytest.fixture
async def backend(postgres_url: str | None) -> AsyncIterator[Backend]:
    if postgres_url is None:
        memory = InMemoryEventStore()

        async def tamper_memory(stream: str, position: int, data: dict[str, Any]) -> None:
            memory.tamper(stream, position, data=data)

        async def rehash_memory(stream: str, position: int, event_hash: str) -> None:
            memory.tamper(stream, position, hash=event_hash)

        yield Backend("memory", memory, tamper_memory, rehash_memory)
        return
    await migrate(postgres_url)
    store = PostgresEventStore(postgres_url)

    async def tamper_postgres(stream: str, position: int, data: dict[str, Any]) -> None:
        # What a superuser can do and the append-only trigger exists to stop: with
        # session_replication_role = replica, ordinary triggers do not fire.
        connection = await asyncpg.connect(asyncpg_dsn(postgres_url))
        try:
            await connection.execute("SET session_replication_role = replica")
            await connection.execute(
                "UPDATE events SET data = $1::jsonb WHERE stream = $2 AND position = $3",
                json.dumps(data),
                stream,
                position,
            )
        finally:
            await connection.close()

    async def rehash_postgres(stream: str, position: int, event_hash: str) -> None:
        connection = await asyncpg.connect(asyncpg_dsn(postgres_url))
        try:
            await connection.execute("SET session_replication_role = replica")
            await connection.execute(
                "UPDATE events SET hash = $1 WHERE stream = $2 AND position = $3",
                bytes.fromhex(event_hash),
                stream,
                position,
            )
        finally:
            await connection.close()

    yield Backend("postgres", store, tamper_postgres, rehash_postgres)
    await store.close()


def new_stream() -> str:
    return f"table-{uuid.uuid4().hex[:12]}"


def played(*cards: str) -> list[NewEvent]:
    return [
        NewEvent("CardPlayed", {"seat": index % 3, "card": card})
        for index, card in enumerate(cards)
    ]


# -- appending and reading -------------------------------------------------------------


async def test_append_to_a_new_stream_numbers_positions_from_one(backend: Backend) -> None:
    stream = new_stream()
    result = await backend.store.append(
        stream, 0, played("7H", "8H", "9H"), request_id="r1", metadata={"actor": "p1"}
    )

    assert not result.duplicate
    assert [event.position for event in result.events] == [1, 2, 3]
    assert result.version == 3
    assert result.first_position == 1
    assert len(set(result.event_ids)) == 3
    globals_ = [event.global_position for event in result.events]
    assert globals_ == sorted(globals_)
    assert len(set(globals_)) == 3
    assert [event.data["card"] for event in result.events] == ["7H", "8H", "9H"]
    assert await backend.store.read(stream) == list(result.events)


async def test_metadata_keeps_what_was_given_and_the_request_id(backend: Backend) -> None:
    stream = new_stream()
    metadata = {"actor": "player-1", "correlation_id": "c-9", "seat": 2}
    result = await backend.store.append(
        stream, 0, played("AS"), request_id="req-7", metadata=metadata
    )

    stored = (await backend.store.read(stream))[0]
    assert stored.metadata == {**metadata, "request_id": "req-7"}
    assert result.events[0].metadata == stored.metadata
    assert stored.type == "CardPlayed"
    assert stored.schema_version == 1
    assert stored.recorded_at.tzinfo is not None


async def test_schema_version_is_stored(backend: Backend) -> None:
    stream = new_stream()
    await backend.store.append(
        stream, 0, [NewEvent("SeatTaken", {"seat": 1}, schema_version=3)], request_id="r"
    )
    assert (await backend.store.read(stream))[0].schema_version == 3


async def test_read_from_a_version_and_with_a_limit(backend: Backend) -> None:
    stream = new_stream()
    await backend.store.append(stream, 0, played("7H", "8H"), request_id="a")
    await backend.store.append(stream, 2, played("9H", "TH", "JH"), request_id="b")

    assert [e.position for e in await backend.store.read(stream, 2)] == [3, 4, 5]
    assert [e.position for e in await backend.store.read(stream, 1, limit=2)] == [2, 3]
    assert await backend.store.read(stream, 5) == []
    assert await backend.store.read(new_stream()) == []


async def test_head_names_the_version_and_the_last_hash(backend: Backend) -> None:
    stream = new_stream()
    assert await backend.store.head(stream) is None
    result = await backend.store.append(stream, 0, played("7H", "8H"), request_id="a")

    head = await backend.store.head(stream)
    assert head is not None
    assert (head.stream, head.version, head.head_hash) == (stream, 2, result.events[-1].hash)


async def test_versions_names_each_existing_stream_in_one_read(backend: Backend) -> None:
    first, second, missing = new_stream(), new_stream(), new_stream()
    await backend.store.append(first, 0, played("7H", "8H"), request_id="a")
    await backend.store.append(second, 0, played("9H"), request_id="b")
    await backend.store.append(second, 1, played("TH", "JH", "QH"), request_id="c")

    assert await backend.store.versions([first, second, missing]) == {first: 2, second: 4}
    assert await backend.store.versions([]) == {}


async def test_read_all_orders_every_stream_by_global_position(backend: Backend) -> None:
    first, second = new_stream(), new_stream()
    await backend.store.append(first, 0, played("7H"), request_id="a")
    await backend.store.append(second, 0, played("8H", "9H"), request_id="a")
    await backend.store.append(first, 1, played("TH"), request_id="b")

    everything = await backend.store.read_all(0, limit=100)
    mine = [(e.stream, e.position) for e in everything if e.stream in (first, second)]
    assert mine == [(first, 1), (second, 1), (second, 2), (first, 2)]
    after_first = await backend.store.read_all(everything[0].global_position, limit=2)
    assert after_first == everything[1:3]


async def test_unicode_round_trips_and_verifies(backend: Backend) -> None:
    stream = new_stream()
    data = {
        "name": "Khözör",
        "ro": "ș ț ă î â",
        "emoji": "🂡",
        "nested": {"ключ": ["€", None, True]},
    }
    await backend.store.append(stream, 0, [NewEvent("TableNamed", data)], request_id="u")
    assert (await backend.store.read(stream))[0].data == data
    assert (await backend.store.verify(stream)).ok


# -- optimistic concurrency ------------------------------------------------------------


async def test_a_stale_expected_version_is_a_conflict_and_appends_nothing(backend: Backend) -> None:
    stream = new_stream()
    await backend.store.append(stream, 0, played("7H", "8H"), request_id="a")

    with pytest.raises(ConcurrencyConflict) as raised:
        await backend.store.append(stream, 1, played("9H"), request_id="b")

    assert (raised.value.stream, raised.value.expected, raised.value.actual) == (stream, 1, 2)
    assert len(await backend.store.read(stream)) == 2


async def test_an_expected_version_ahead_of_the_stream_is_a_conflict(backend: Backend) -> None:
    stream = new_stream()
    with pytest.raises(ConcurrencyConflict) as raised:
        await backend.store.append(stream, 3, played("7H"), request_id="a")
    assert raised.value.actual == 0
    assert await backend.store.head(stream) is None


async def test_appending_zero_to_an_existing_stream_is_a_conflict(backend: Backend) -> None:
    stream = new_stream()
    await backend.store.append(stream, 0, played("7H"), request_id="a")
    with pytest.raises(ConcurrencyConflict) as raised:
        await backend.store.append(stream, 0, played("8H"), request_id="b")
    assert raised.value.actual == 1


# -- idempotency -----------------------------------------------------------------------


async def test_a_repeated_request_returns_the_first_result_and_appends_nothing(
    backend: Backend,
) -> None:
    stream = new_stream()
    first = await backend.store.append(stream, 0, played("7H", "8H"), request_id="same")
    again = await backend.store.append(stream, 0, played("7H", "8H"), request_id="same")

    assert again.duplicate
    assert again.events == first.events
    assert again.version == 2
    assert len(await backend.store.read(stream)) == 2


async def test_a_repeat_after_the_stream_moved_on_still_returns_the_first_result(
    backend: Backend,
) -> None:
    stream = new_stream()
    first = await backend.store.append(stream, 0, played("7H"), request_id="one")
    await backend.store.append(stream, 1, played("8H"), request_id="two")

    for expected in (0, 1, 2):  # stale, stale, current: always the first result
        again = await backend.store.append(stream, expected, played("7H"), request_id="one")
        assert again.duplicate
        assert again.events == first.events
    assert len(await backend.store.read(stream)) == 2


async def test_a_request_id_reused_for_other_events_is_refused(backend: Backend) -> None:
    stream = new_stream()
    await backend.store.append(stream, 0, played("7H"), request_id="r")

    with pytest.raises(IdempotencyConflict) as raised:
        await backend.store.append(stream, 1, played("8H"), request_id="r")

    assert (raised.value.stream, raised.value.request_id) == (stream, "r")
    assert len(await backend.store.read(stream)) == 1


async def test_a_command_fingerprint_defines_sameness_when_given(backend: Backend) -> None:
    stream = new_stream()
    first = await backend.store.append(
        stream,
        0,
        [NewEvent("Dealt", {"seed": "aa"})],
        request_id="deal",
        command_fingerprint="Deal#1",
    )
    # The same command re-decided with fresh randomness is still the same command...
    again = await backend.store.append(
        stream,
        0,
        [NewEvent("Dealt", {"seed": "bb"})],
        request_id="deal",
        command_fingerprint="Deal#1",
    )
    assert again.duplicate
    assert again.events == first.events
    # ...and another command under the same request id is not.
    with pytest.raises(IdempotencyConflict):
        await backend.store.append(
            stream,
            1,
            [NewEvent("Dealt", {"seed": "aa"})],
            request_id="deal",
            command_fingerprint="Deal#2",
        )


async def test_request_ids_are_scoped_per_stream(backend: Backend) -> None:
    first, second = new_stream(), new_stream()
    await backend.store.append(first, 0, played("7H"), request_id="shared")
    other = await backend.store.append(second, 0, played("7H"), request_id="shared")
    assert not other.duplicate
    assert other.events[0].stream == second


async def test_result_of_finds_the_first_result(backend: Backend) -> None:
    stream = new_stream()
    assert await backend.store.result_of(stream, "r") is None
    first = await backend.store.append(stream, 0, played("7H", "8H"), request_id="r")

    found = await backend.store.result_of(stream, "r")
    assert found is not None
    assert found.duplicate
    assert found.events == first.events
    assert await backend.store.result_of(stream, "other") is None


async def test_result_of_refuses_a_request_id_used_for_another_command(
    backend: Backend,
) -> None:
    stream = new_stream()
    await backend.store.append(
        stream, 0, played("7H"), request_id="r", command_fingerprint="play 7H"
    )
    same = await backend.store.result_of(stream, "r", command_fingerprint="play 7H")
    assert same is not None
    assert same.duplicate
    with pytest.raises(IdempotencyConflict):
        await backend.store.result_of(stream, "r", command_fingerprint="play 8H")


# -- hash chain and tamper evidence ----------------------------------------------------


def auditor_hash(previous_hex: str | None, event: RecordedEvent) -> str:
    """The chain link, recomputed from the documented canonical form (docs/eventstore.md)."""
    canonical = json.dumps(
        {
            "data": event.data,
            "event_id": str(event.event_id),
            "metadata": event.metadata,
            "position": event.position,
            "recorded_at": event.recorded_at.strftime("%Y-%m-%dT%H:%M:%S.%fZ"),
            "schema_version": event.schema_version,
            "stream": event.stream,
            "type": event.type,
        },
        sort_keys=True,
        separators=(",", ":"),
        ensure_ascii=False,
    ).encode()
    previous = bytes.fromhex(previous_hex) if previous_hex else bytes(32)
    return hashlib.sha256(previous + canonical).hexdigest()


async def test_the_hash_chain_can_be_recomputed_by_an_auditor(backend: Backend) -> None:
    stream = new_stream()
    await backend.store.append(
        stream, 0, played("7H", "8H"), request_id="a", metadata={"actor": "ö"}
    )
    await backend.store.append(stream, 2, played("9H"), request_id="b")

    previous: str | None = None
    for event in await backend.store.read(stream):
        assert event.hash == auditor_hash(previous, event)
        previous = event.hash
    head = await backend.store.head(stream)
    assert head is not None
    assert head.head_hash == previous


async def test_verify_accepts_an_untouched_stream(backend: Backend) -> None:
    stream = new_stream()
    await backend.store.append(stream, 0, played("7H", "8H"), request_id="a")
    await backend.store.append(stream, 2, played("9H"), request_id="b")

    report = await backend.store.verify(stream)
    assert report.ok
    assert (report.checked, report.version, report.first_bad_position) == (3, 3, None)
    report.raise_if_corrupted()


async def test_verify_of_an_unknown_stream_is_ok_and_empty(backend: Backend) -> None:
    report = await backend.store.verify(new_stream())
    assert report.ok
    assert (report.checked, report.version) == (0, 0)


async def test_verify_names_the_first_altered_event(backend: Backend) -> None:
    stream = new_stream()
    await backend.store.append(stream, 0, played("7H", "8H", "9H", "TH"), request_id="a")
    await backend.tamper(stream, 3, {"seat": 2, "card": "AS"})

    report = await backend.store.verify(stream)

    assert not report.ok
    assert report.first_bad_position == 3
    assert report.failure is VerifyFailure.HASH_MISMATCH
    with pytest.raises(StreamCorrupted) as raised:
        report.raise_if_corrupted()
    assert (raised.value.stream, raised.value.position) == (stream, 3)


# -- snapshots: an optimisation beside the log, never trusted ---------------------------

SNAPSHOT = {"hands": [["7H", "8H"], []], "nested": {"turn": 3, "over": False, "seed": None}}


async def test_a_snapshot_reads_back_tied_to_the_event_it_was_saved_at(backend: Backend) -> None:
    stream = new_stream()
    result = await backend.store.append(stream, 0, played("7H", "8H", "9H"), request_id="a")

    assert await backend.store.save_snapshot(stream, 2, "fold-1", SNAPSHOT)
    snapshot = await backend.store.read_snapshot(stream, "fold-1")

    assert snapshot is not None
    assert (snapshot.stream, snapshot.version, snapshot.key) == (stream, 2, "fold-1")
    assert snapshot.data == SNAPSHOT
    assert snapshot.event_hash == result.events[1].hash
    snapshot.data["nested"]["turn"] = 99  # the caller's copy: the stored one is unchanged
    again = await backend.store.read_snapshot(stream, "fold-1")
    assert again is not None
    assert again.data == SNAPSHOT


async def test_no_snapshot_is_read_for_an_unknown_stream_or_key(backend: Backend) -> None:
    stream = new_stream()
    await backend.store.append(stream, 0, played("7H"), request_id="a")
    await backend.store.save_snapshot(stream, 1, "fold-1", SNAPSHOT)

    assert await backend.store.read_snapshot(stream, "fold-2") is None
    assert await backend.store.read_snapshot(new_stream(), "fold-1") is None


@pytest.mark.parametrize("version", [0, 3])
async def test_a_snapshot_at_no_event_is_not_stored(backend: Backend, version: int) -> None:
    stream = new_stream()
    await backend.store.append(stream, 0, played("7H", "8H"), request_id="a")

    assert not await backend.store.save_snapshot(stream, version, "fold-1", SNAPSHOT)
    assert not await backend.store.save_snapshot(new_stream(), 1, "fold-1", SNAPSHOT)
    assert await backend.store.read_snapshot(stream, "fold-1") is None


async def test_an_older_snapshot_never_replaces_a_newer_one(backend: Backend) -> None:
    stream = new_stream()
    await backend.store.append(stream, 0, played("7H", "8H", "9H"), request_id="a")

    assert await backend.store.save_snapshot(stream, 2, "fold-1", {"at": 2})
    assert not await backend.store.save_snapshot(stream, 1, "fold-1", {"at": 1})
    assert not await backend.store.save_snapshot(stream, 2, "fold-1", {"at": "2 again"})
    assert await backend.store.save_snapshot(stream, 3, "fold-1", {"at": 3})

    snapshot = await backend.store.read_snapshot(stream, "fold-1")
    assert snapshot is not None
    assert (snapshot.version, snapshot.data) == (3, {"at": 3})


async def test_a_snapshot_of_another_key_replaces_the_old_code_s_one(backend: Backend) -> None:
    stream, other = new_stream(), new_stream()
    await backend.store.append(stream, 0, played("7H", "8H"), request_id="a")
    await backend.store.append(other, 0, played("7H"), request_id="a")
    await backend.store.save_snapshot(stream, 2, "old-code", {"by": "old"})
    await backend.store.save_snapshot(other, 1, "old-code", {"by": "old"})

    assert await backend.store.save_snapshot(stream, 1, "new-code", {"by": "new"})

    assert await backend.store.read_snapshot(stream, "old-code") is None
    assert await backend.store.read_snapshot(other, "old-code") is not None  # other streams kept
    snapshot = await backend.store.read_snapshot(stream, "new-code")
    assert snapshot is not None
    assert snapshot.data == {"by": "new"}


async def test_a_snapshot_whose_event_changed_is_never_handed_out(backend: Backend) -> None:
    stream = new_stream()
    await backend.store.append(stream, 0, played("7H", "8H"), request_id="a")
    await backend.store.save_snapshot(stream, 2, "fold-1", SNAPSHOT)

    await backend.rehash(stream, 2, "ab" * 32)

    assert await backend.store.read_snapshot(stream, "fold-1") is None


# -- the outbox: what the relay publishes, read through the contract -------------------

LOCK = 0x6B7A_7465_7374  # a lock key of these tests' own


def nothing() -> None:
    """An `on_queued` callback for readers that do not wait for wake-ups."""


async def pending_of(store: EventStore, stream: str) -> list[OutboxEntry]:
    async with store.outbox_reader(lock_key=LOCK, on_queued=nothing) as reader:
        assert await reader.lead()
        return [entry for entry in await reader.pending(10_000) if entry.stream == stream]


async def test_the_outbox_holds_an_append_s_events_then_its_messages(backend: Backend) -> None:
    stream = new_stream()
    first = await backend.store.append(
        stream,
        0,
        played("7H", "8H"),
        request_id="r1",
        messages=[NewMessage("public", "TurnStarted", b"a"), NewMessage("public", "Ended", b"")],
    )
    second = await backend.store.append(stream, 2, played("9H"), request_id="r2")

    entries = await pending_of(backend.store, stream)

    assert [entry.item for entry in entries[:2]] == list(first.events)
    messages = [entry.item for entry in entries[2:4]]
    assert all(isinstance(m, QueuedMessage) for m in messages)
    assert [(m.stream, m.channel, m.type, m.payload) for m in messages] == [  # type: ignore[union-attr]
        (stream, "public", "TurnStarted", b"a"),
        (stream, "public", "Ended", b""),
    ]
    assert len({m.message_id for m in messages}) == 2  # type: ignore[union-attr]
    assert [entry.item for entry in entries[4:]] == list(second.events)
    assert [entry.id for entry in entries] == sorted(entry.id for entry in entries)


async def test_messages_are_not_events_of_the_stream(backend: Backend) -> None:
    stream = new_stream()
    message = NewMessage("public", "TableOpened", b"x")
    await backend.store.append(stream, 0, played("7H"), request_id="r", messages=[message])
    assert [e.type for e in await backend.store.read(stream)] == ["CardPlayed"]
    report = await backend.store.verify(stream)
    assert report.ok
    assert report.checked == 1


async def test_a_repeated_or_refused_append_queues_nothing(backend: Backend) -> None:
    stream = new_stream()
    message = [NewMessage("public", "TableOpened", b"x")]
    await backend.store.append(stream, 0, played("7H"), request_id="r", messages=message)
    await backend.store.append(stream, 0, played("7H"), request_id="r", messages=message)
    with pytest.raises(ConcurrencyConflict):
        await backend.store.append(stream, 0, played("8H"), request_id="other", messages=message)
    assert len(await pending_of(backend.store, stream)) == 2


async def test_removed_entries_are_gone_and_the_backlog_counts_the_rest(
    backend: Backend,
) -> None:
    stream = new_stream()
    await backend.store.append(
        stream, 0, played("7H", "8H"), request_id="r", messages=[NewMessage("public", "T", b"")]
    )
    async with backend.store.outbox_reader(lock_key=LOCK, on_queued=nothing) as reader:
        assert await reader.lead()
        entries = await reader.pending(10_000)
        waiting = (await backend.store.outbox_backlog()).entries
        await reader.remove([entries[0].id, entries[2].id])
        left = await reader.pending(10_000)
    assert [entry.id for entry in left] == [
        e.id for e in entries if e not in (entries[0], entries[2])
    ]
    backlog = await backend.store.outbox_backlog()
    assert backlog.entries == waiting - 2
    assert backlog.oldest_age is not None
    assert backlog.oldest_age >= 0


async def test_one_reader_leads_per_lock_key_until_it_closes(backend: Backend) -> None:
    store = backend.store
    async with store.outbox_reader(lock_key=LOCK, on_queued=nothing) as first:
        assert await first.lead()
        async with store.outbox_reader(lock_key=LOCK, on_queued=nothing) as second:
            assert not await second.lead()
            with pytest.raises(RuntimeError):
                await second.pending(1)
            async with store.outbox_reader(lock_key=LOCK + 1, on_queued=nothing) as other:
                assert await other.lead()
    async with store.outbox_reader(lock_key=LOCK, on_queued=nothing) as third:
        assert await third.lead()


async def test_the_leader_is_told_when_an_append_queues_something(backend: Backend) -> None:
    queued = asyncio.Event()
    async with backend.store.outbox_reader(lock_key=LOCK, on_queued=queued.set) as reader:
        assert await reader.lead()
        await backend.store.append(new_stream(), 0, played("7H"), request_id="r")
        await asyncio.wait_for(queued.wait(), timeout=30)


@pytest.mark.parametrize(
    "make",
    [
        lambda: NewMessage("Public", "T", b""),
        lambda: NewMessage("public.table", "T", b""),
        lambda: NewMessage("public", "Turn.Started", b""),
        lambda: NewMessage("public", "T", "text"),  # type: ignore[arg-type]
    ],
    ids=["uppercase-channel", "dot-in-channel", "dot-in-type", "text-payload"],
)
def test_malformed_messages_are_refused(make: Callable[[], NewMessage]) -> None:
    with pytest.raises(InvalidEvent):
        make()


# -- refusing what cannot be stored faithfully -----------------------------------------


@pytest.mark.parametrize(
    "data",
    [
        {"price": 1.5},
        {"big": 2**53},
        {"text": "nul\x00byte"},
        {"nested": {1: "int key"}},
        {"surrogate": "\ud800"},
        {"set": {1, 2}},
    ],
    ids=["float", "big-int", "nul", "int-key", "lone-surrogate", "set"],
)
async def test_unstorable_data_is_refused_before_writing(
    backend: Backend, data: dict[str, Any]
) -> None:
    stream = new_stream()
    with pytest.raises(InvalidEvent):
        await backend.store.append(stream, 0, [NewEvent("Odd", data)], request_id="r")
    assert await backend.store.head(stream) is None


@pytest.mark.parametrize(
    ("stream", "events", "expected_version", "request_id"),
    [
        ("table_without_id", played("7H"), 0, "r"),
        ("Table-1", played("7H"), 0, "r"),
        ("table-a.b", played("7H"), 0, "r"),
        ("table-1", [], 0, "r"),
        ("table-1", played("7H"), -1, "r"),
        ("table-1", played("7H"), 0, ""),
    ],
    ids=[
        "no-id",
        "uppercase-category",
        "dot-in-id",
        "no-events",
        "negative-version",
        "no-request-id",
    ],
)
async def test_malformed_appends_are_refused(
    backend: Backend, stream: str, events: list[NewEvent], expected_version: int, request_id: str
) -> None:
    with pytest.raises(InvalidEvent):
        await backend.store.append(stream, expected_version, events, request_id=request_id)


def test_event_types_must_be_identifiers() -> None:
    for bad in ("", "Card Played", "card.played", "1Card", "Card>"):
        with pytest.raises(InvalidEvent):
            NewEvent(bad, {})
    with pytest.raises(InvalidEvent):
        NewEvent("CardPlayed", {}, schema_version=0)


# -- any storable JSON survives the trip -----------------------------------------------

_keys = st.text(
    st.characters(max_codepoint=0xFFFF, exclude_categories=["Cs"], exclude_characters="\x00"),
    max_size=8,
)
_scalars = (
    st.none()
    | st.booleans()
    | st.integers(-(2**53) + 1, 2**53 - 1)
    | st.text(st.characters(exclude_categories=["Cs"], exclude_characters="\x00"), max_size=12)
)
_json = st.recursive(
    _scalars,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(_keys, inner, max_size=4),
    max_leaves=12,
)


@settings(
    max_examples=15, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(data=st.dictionaries(_keys, _json, max_size=5))
async def test_any_storable_json_reads_back_equal_and_verifies(
    backend: Backend, data: dict[str, Any]
) -> None:
    stream = new_stream()
    result = await backend.store.append(stream, 0, [NewEvent("Anything", data)], request_id="h")
    (stored,) = await backend.store.read(stream)
    assert stored.data == data
    assert stored == result.events[0]
    assert (await backend.store.verify(stream)).ok


# -- deciding: load → decide → append → retry a lost race (kozyr.eventstore.deciding) ---


class Refused(Exception):
    """A decision's refusal in these tests (an illegal command)."""


@dataclass
class Decider:
    """A decision over a stream's version: appends `cards` at the version it loaded,
    counts its loads and decisions, and lets a test act between a load and its append
    (`rival`: another writer's append on the first load only)."""

    store: EventStore
    stream: str
    cards: tuple[str, ...] = ("7H",)
    rival: bool = False
    refuse_from: int | None = None
    """Refuse once the stream has this many events (the command is illegal then)."""
    loads: int = 0
    decisions: int = 0
    conflicts: int = 0

    async def load(self) -> int:
        self.loads += 1
        head = await self.store.head(self.stream)
        version = 0 if head is None else head.version
        if self.rival and self.loads == 1:
            await self.store.append(self.stream, version, played("AS"), request_id="rival")
        return version

    def decide(self, version: int) -> Append[int] | Settled[int]:
        self.decisions += 1
        if self.refuse_from is not None and version >= self.refuse_from:
            raise Refused(version)
        return Append(version, played(*self.cards), version, messages=[NEWS])

    def conflicted(self, _: ConcurrencyConflict) -> None:
        self.conflicts += 1

    async def run(self, request_id: str = "r", **options: Any) -> Any:
        settings: dict[str, Any] = {"attempts": 4, "refusals": (Refused,)} | options
        return await decide_and_append(
            self.store,
            self.stream,
            self.decide,
            load=self.load,
            request_id=request_id,
            on_conflict=self.conflicted,
            **settings,
        )


NEWS = NewMessage("public", "TurnStarted", b"news")


async def test_a_lost_race_is_decided_again_on_the_latest_state_and_appended(
    backend: Backend,
) -> None:
    stream = new_stream()
    decider = Decider(backend.store, stream, rival=True)

    appended = await decider.run()

    assert isinstance(appended, Appended)
    assert (decider.loads, decider.decisions, decider.conflicts) == (2, 2, 1)
    assert appended.decision.value == 1, "decided again on the version the rival made"
    assert [(e.type, e.data["card"]) for e in await backend.store.read(stream)] == [
        ("CardPlayed", "AS"),
        ("CardPlayed", "7H"),
    ]
    assert (await backend.store.verify(stream)).ok, "the hash chain runs through both"
    entries = [e.item for e in await pending_of(backend.store, stream)]
    assert [getattr(i, "type", None) for i in entries] == [
        "CardPlayed",
        "CardPlayed",
        "TurnStarted",
    ]
    assert isinstance(entries[-1], QueuedMessage), "the messages in the winning append"


async def test_a_stale_known_state_loses_the_race_then_the_latest_is_loaded(
    backend: Backend,
) -> None:
    stream = new_stream()
    await backend.store.append(stream, 0, played("AS"), request_id="earlier")
    decider = Decider(backend.store, stream)

    appended = await decider.run(known=0)

    assert isinstance(appended, Appended)
    assert (decider.loads, decider.decisions, decider.conflicts) == (1, 2, 1)
    assert [e.position for e in appended.result.events] == [2]


async def test_a_refusal_or_nothing_to_do_on_a_known_state_is_asked_of_the_log(
    backend: Backend,
) -> None:
    stream = new_stream()
    await backend.store.append(stream, 0, played("AS"), request_id="earlier")
    decider = Decider(backend.store, stream, refuse_from=0)

    with pytest.raises(Refused):  # refused on the known state, then on the log's
        await decider.run(known=0)
    assert (decider.loads, decider.decisions) == (1, 2)

    def nothing_on_zero(version: int) -> Append[int] | Settled[int]:
        return Settled(version) if version == 0 else Append(version, played("7H"), version)

    settled = await decide_and_append(
        backend.store, stream, nothing_on_zero, load=decider.load, known=0,
        request_id="s", attempts=2,
    )  # fmt: skip
    assert isinstance(settled, Appended), "'nothing to do' was only the stale state's word"
    assert settled.decision.value == 1


async def test_only_a_conflict_is_retried(backend: Backend) -> None:
    stream = new_stream()
    refused = Decider(backend.store, stream, refuse_from=0)
    with pytest.raises(Refused):
        await refused.run()
    assert (refused.loads, refused.decisions) == (1, 1)

    def broken(version: int) -> Append[int]:
        raise ZeroDivisionError(version)  # a bug, not a refusal

    with pytest.raises(ZeroDivisionError):
        await decide_and_append(
            backend.store, stream, broken, load=refused.load, request_id="b", attempts=4,
            refusals=(Refused,),
        )  # fmt: skip
    assert refused.loads == 2

    await backend.store.append(stream, 0, played("AS"), request_id="taken")
    reused = Decider(backend.store, stream, cards=("8H",))
    with pytest.raises(IdempotencyConflict):  # the request id of other events
        await reused.run("taken")
    assert (reused.loads, reused.decisions, reused.conflicts) == (1, 1, 0)
    assert len(await backend.store.read(stream)) == 1, "nothing appended by a refusal"


async def test_a_race_lost_every_time_ends_after_the_attempts(backend: Backend) -> None:
    stream = new_stream()
    await backend.store.append(stream, 0, played("AS"), request_id="earlier")

    def always_stale(version: int) -> Append[int]:
        return Append(0, played("7H"), version)

    async def head() -> int:
        return 1

    lost: list[ConcurrencyConflict] = []
    with pytest.raises(ConcurrencyConflict) as last:  # no `exhausted`: the conflict itself
        await decide_and_append(
            backend.store, stream, always_stale, load=head, request_id="x", attempts=3,
            on_conflict=lost.append,
        )  # fmt: skip
    assert len(lost) == 3
    assert (last.value.expected, last.value.actual) == (0, 1)
    with pytest.raises(TimeoutError):
        await decide_and_append(
            backend.store, stream, always_stale, load=head, request_id="x", attempts=2,
            exhausted=TimeoutError,
        )  # fmt: skip
    assert len(await backend.store.read(stream)) == 1


async def test_a_repeated_request_id_returns_the_first_result(backend: Backend) -> None:
    stream = new_stream()
    decider = Decider(backend.store, stream)
    first = await decider.run("once")
    await backend.store.append(stream, 1, played("AS"), request_id="later")

    again = await decider.run("once")  # decided again on version 2: the same events
    assert isinstance(first, Appended)
    assert isinstance(again, Appended)
    assert not first.result.duplicate
    assert again.result.duplicate
    assert again.result.events == first.result.events

    decider.refuse_from = 2  # now the command is illegal: still the first result
    repeated = await decider.run("once", answer_refused_repeats=True)
    assert isinstance(repeated, Repeated)
    assert repeated.result.events == first.result.events
    with pytest.raises(Refused):  # unless the caller's request ids may not answer
        await decider.run("once")
    with pytest.raises(Refused):  # a request never applied: the refusal itself
        await decider.run("never", answer_refused_repeats=True)
    assert len(await backend.store.read(stream)) == 2
    assert len(await pending_of(backend.store, stream)) == 3, "one message, once"
