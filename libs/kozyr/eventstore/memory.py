"""`InMemoryEventStore`: the same contract as `PostgresEventStore`, in a process's memory.

For unit tests of services and deciders: same validation, same hashes, same errors,
same idempotency (it shares `plan_append` and `verify_events` with the real store).
Its outbox is a list, with the same reader contract (one leader per lock key, order,
removal), so the relay can run over it too. One lock makes every append atomic.
"""

from __future__ import annotations

import asyncio
import dataclasses
import json
from collections.abc import AsyncIterator, Callable, Mapping, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any
from uuid import UUID, uuid4

from kozyr.eventstore.appending import AppendPlan, plan_append
from kozyr.eventstore.errors import ConcurrencyConflict, IdempotencyConflict
from kozyr.eventstore.hashing import GENESIS_HASH, fingerprint_command
from kozyr.eventstore.model import (
    AppendResult,
    NewEvent,
    NewMessage,
    OutboxBacklog,
    OutboxEntry,
    OutboxReader,
    QueuedMessage,
    RecordedEvent,
    Snapshot,
    StreamHead,
    VerifyReport,
)
from kozyr.eventstore.verification import verify_events


@dataclass(slots=True)
class _Stream:
    events: list[RecordedEvent] = field(default_factory=list)
    head_hash: bytes = GENESIS_HASH
    requests: dict[str, tuple[bytes, int, int]] = field(default_factory=dict)
    snapshots: dict[str, Snapshot] = field(default_factory=dict)
    """At most one per key, like the `snapshots` table."""

    @property
    def version(self) -> int:
        return len(self.events)


class InMemoryEventStore:
    """An `EventStore` held in dicts; state is lost with the object."""

    def __init__(
        self,
        *,
        clock: Callable[[], datetime] = lambda: datetime.now(UTC),
        new_event_id: Callable[[], UUID] = uuid4,
    ) -> None:
        self._clock = clock
        self._new_event_id = new_event_id
        self._streams: dict[str, _Stream] = {}
        self._log: list[RecordedEvent] = []
        self._lock = asyncio.Lock()
        self._outbox: list[tuple[OutboxEntry, datetime]] = []
        self._outbox_ids = 0
        self._leaders: set[int] = set()
        self._listeners: list[Callable[[], None]] = []

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
        async with self._lock:
            result = self._append(plan)
        if not result.duplicate:
            for listener in list(self._listeners):
                listener()
        return result

    def _append(self, plan: AppendPlan) -> AppendResult:
        state = self._streams.get(plan.stream) or _Stream()
        first = state.requests.get(plan.request_id)
        if first is not None:
            fingerprint, first_position, last_position = first
            if fingerprint != plan.fingerprint:
                raise IdempotencyConflict(plan.stream, plan.request_id)
            return _duplicate(plan.stream, state.events[first_position - 1 : last_position])
        if state.version != plan.expected_version:
            raise ConcurrencyConflict(plan.stream, plan.expected_version, state.version)
        hashes = plan.chain(state.head_hash)
        global_positions = range(len(self._log) + 1, len(self._log) + 1 + len(plan.events))
        result = plan.recorded(hashes, list(global_positions))
        state.events.extend(result.events)
        state.head_hash = hashes[-1]
        state.requests[plan.request_id] = (
            plan.fingerprint,
            plan.expected_version + 1,
            plan.new_version,
        )
        self._streams[plan.stream] = state
        self._log.extend(result.events)
        items: list[RecordedEvent | QueuedMessage] = [*result.events, *plan.messages]
        for item in items:
            self._outbox_ids += 1
            self._outbox.append((OutboxEntry(self._outbox_ids, item), plan.recorded_at))
        return result

    async def read(
        self, stream: str, from_version: int = 0, limit: int | None = None
    ) -> list[RecordedEvent]:
        state = self._streams.get(stream)
        if state is None:
            return []
        selected = state.events[max(from_version, 0) :]
        return selected if limit is None else selected[: max(limit, 0)]

    async def read_all(self, after_global: int = 0, limit: int = 1000) -> list[RecordedEvent]:
        return self._log[max(after_global, 0) :][: max(limit, 0)]

    async def head(self, stream: str) -> StreamHead | None:
        state = self._streams.get(stream)
        if state is None:
            return None
        return StreamHead(stream=stream, version=state.version, head_hash=state.head_hash.hex())

    async def versions(self, streams: Sequence[str]) -> dict[str, int]:
        return {s: self._streams[s].version for s in streams if s in self._streams}

    async def result_of(
        self, stream: str, request_id: str, *, command_fingerprint: str | None = None
    ) -> AppendResult | None:
        state = self._streams.get(stream)
        first = state.requests.get(request_id) if state else None
        if state is None or first is None:
            return None
        if command_fingerprint is not None and first[0] != fingerprint_command(command_fingerprint):
            raise IdempotencyConflict(stream, request_id)
        return _duplicate(stream, state.events[first[1] - 1 : first[2]])

    async def verify(self, stream: str) -> VerifyReport:
        return verify_events(stream, await self.head(stream), await self.read(stream))

    async def save_snapshot(
        self, stream: str, version: int, key: str, data: Mapping[str, Any]
    ) -> bool:
        """Keep `data` as the stream's snapshot at `version` for `key`, like PostgreSQL:
        only at an existing event, only newer than the key's snapshot, other keys dropped."""
        state = self._streams.get(stream)
        if state is None or not 1 <= version <= state.version:
            return False
        current = state.snapshots.get(key)
        if current is not None and current.version >= version:
            return False
        copied = json.loads(json.dumps(data))  # stored as JSON, like jsonb: no shared dicts
        event_hash = state.events[version - 1].hash
        state.snapshots = {key: Snapshot(stream, version, key, copied, event_hash)}
        return True

    async def read_snapshot(self, stream: str, key: str) -> Snapshot | None:
        """The key's snapshot of the stream if its event is still the one it was saved at."""
        state = self._streams.get(stream)
        snapshot = state.snapshots.get(key) if state is not None else None
        if snapshot is None or state is None:
            return None
        if state.events[snapshot.version - 1].hash != snapshot.event_hash:
            return None
        return dataclasses.replace(snapshot, data=json.loads(json.dumps(snapshot.data)))

    # -- the outbox ------------------------------------------------------------------

    @asynccontextmanager
    async def outbox_reader(
        self, *, lock_key: int, on_queued: Callable[[], None], name: str = "kozyr-outbox"
    ) -> AsyncIterator[OutboxReader]:
        """A reader of this store's outbox; it leads until it is closed."""
        reader = _MemoryOutboxReader(self, lock_key, on_queued)
        try:
            yield reader
        finally:
            reader.close()

    async def outbox_backlog(self) -> OutboxBacklog:
        if not self._outbox:
            return OutboxBacklog(0, None)
        oldest = min(queued for _, queued in self._outbox)
        return OutboxBacklog(len(self._outbox), (self._clock() - oldest).total_seconds())

    def tamper(self, stream: str, position: int, **changes: Any) -> None:
        """Test hook: overwrite fields of a stored event, as a rogue DBA would a row.

        Exists so that the shared contract tests can check tamper detection on this
        backend too; production code has no reason to call it.
        """
        state = self._streams[stream]
        original = state.events[position - 1]
        state.events[position - 1] = dataclasses.replace(original, **changes)


def _duplicate(stream: str, events: Sequence[RecordedEvent]) -> AppendResult:
    return AppendResult(stream=stream, events=tuple(events), duplicate=True)


class _MemoryOutboxReader:
    """`OutboxReader` over `InMemoryEventStore`: the lock key is held in the store."""

    def __init__(
        self, store: InMemoryEventStore, lock_key: int, on_queued: Callable[[], None]
    ) -> None:
        self._store = store
        self._key = lock_key
        self._on_queued = on_queued
        self._leading = False
        store._listeners.append(on_queued)

    async def lead(self) -> bool:
        if not self._leading and self._key not in self._store._leaders:
            self._store._leaders.add(self._key)
            self._leading = True
        return self._leading

    async def pending(self, limit: int) -> list[OutboxEntry]:
        self._check_leading()
        return [entry for entry, _ in self._store._outbox[: max(limit, 0)]]

    async def remove(self, ids: Sequence[int]) -> None:
        self._check_leading()
        gone = set(ids)
        self._store._outbox = [row for row in self._store._outbox if row[0].id not in gone]

    async def wake_leader(self) -> None:
        """Nothing to do: every reader of this store hears its appends directly."""

    def close(self) -> None:
        self._store._listeners.remove(self._on_queued)
        if self._leading:
            self._store._leaders.discard(self._key)
            self._leading = False

    def _check_leading(self) -> None:
        if not self._leading:
            raise RuntimeError("only the leading outbox reader may read or remove entries")
