"""The event store's records and the contract every backend fulfils (`EventStore`).

Records are small frozen values. `RecordedEvent.data`/`metadata` are plain JSON objects
(dicts) exactly as a reader of the database sees them.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Protocol
from uuid import UUID

from kozyr.eventstore.errors import InvalidEvent, StreamCorrupted, VerifyFailure

EVENT_TYPE_PATTERN = re.compile(r"[A-Za-z][A-Za-z0-9_]{0,127}")
"""Event types are identifiers: they end up as a NATS subject token and in SQL queries."""


@dataclass(frozen=True, slots=True)
class NewEvent:
    """An event a command decided, not yet stored."""

    type: str
    data: dict[str, Any]
    schema_version: int = 1

    def __post_init__(self) -> None:
        if not isinstance(self.data, dict):
            raise InvalidEvent(f"event data must be a JSON object (dict), got {type(self.data)}")
        if not EVENT_TYPE_PATTERN.fullmatch(self.type):
            raise InvalidEvent(f"event type {self.type!r} is not an identifier")
        if isinstance(self.schema_version, bool) or self.schema_version < 1:
            raise InvalidEvent(f"schema_version must be ≥ 1, got {self.schema_version!r}")


@dataclass(frozen=True, slots=True)
class RecordedEvent:
    """An event as stored: its place in its stream and in the whole log, and its hash.

    `position` starts at 1 in every stream; a stream's version is its number of events.
    `global_position` orders all events of the store (gaps allowed: rolled-back appends
    burn numbers). `hash` is the lowercase hex SHA-256 chain link (docs/eventstore.md).
    """

    event_id: UUID
    stream: str
    position: int
    global_position: int
    type: str
    schema_version: int
    data: dict[str, Any]
    metadata: dict[str, Any]
    recorded_at: datetime
    hash: str


@dataclass(frozen=True, slots=True)
class AppendResult:
    """What an append stored; for a repeated request id, what the FIRST append stored."""

    stream: str
    events: tuple[RecordedEvent, ...]
    duplicate: bool = False

    @property
    def version(self) -> int:
        """The stream version right after this append (its last event's position)."""
        return self.events[-1].position

    @property
    def first_position(self) -> int:
        return self.events[0].position

    @property
    def event_ids(self) -> tuple[UUID, ...]:
        return tuple(event.event_id for event in self.events)


@dataclass(frozen=True, slots=True)
class StreamHead:
    """A stream's current version and the hash of its last event (hex)."""

    stream: str
    version: int
    head_hash: str


@dataclass(frozen=True, slots=True)
class VerifyReport:
    """The outcome of walking a stream's hash chain from position 1."""

    stream: str
    checked: int
    """How many events were read."""
    version: int
    """The version the stream's head claims (0 for a stream that does not exist)."""
    first_bad_position: int | None = None
    failure: VerifyFailure | None = None
    detail: str = field(default="")

    @property
    def ok(self) -> bool:
        return self.failure is None

    def raise_if_corrupted(self) -> None:
        """Turn a failed report into `StreamCorrupted` (for callers that must not go on)."""
        if self.failure is not None:
            position = self.first_bad_position if self.first_bad_position is not None else 0
            raise StreamCorrupted(self.stream, position, self.failure, self.detail)


@dataclass(frozen=True, slots=True)
class Snapshot:
    """A stream's state as some reader folded it up to `version`: only an optimisation.

    The event store keeps snapshots beside the log but never trusts them for anything:
    `data` is whatever JSON object the reader saved, `key` names the code that folded it
    (a reader ignores snapshots of another key), and `event_hash` is the hash of the
    stream's event at `version`, so that a snapshot no longer matching the log is never
    handed out. Deleting every snapshot is always safe (docs/eventstore.md).
    """

    stream: str
    version: int
    key: str
    data: dict[str, Any]
    event_hash: str
    """Lowercase hex hash of the stream's event at `version`, copied when it was saved."""


class EventStore(Protocol):
    """The contract shared by `PostgresEventStore` and `InMemoryEventStore`."""

    async def append(
        self,
        stream: str,
        expected_version: int,
        events: Sequence[NewEvent],
        *,
        request_id: str,
        metadata: Mapping[str, Any] | None = None,
        command_fingerprint: str | None = None,
    ) -> AppendResult: ...

    async def read(
        self, stream: str, from_version: int = 0, limit: int | None = None
    ) -> list[RecordedEvent]: ...

    async def read_all(self, after_global: int = 0, limit: int = 1000) -> list[RecordedEvent]: ...

    async def head(self, stream: str) -> StreamHead | None: ...

    async def versions(self, streams: Sequence[str]) -> dict[str, int]: ...

    async def result_of(
        self, stream: str, request_id: str, *, command_fingerprint: str | None = None
    ) -> AppendResult | None: ...

    async def verify(self, stream: str) -> VerifyReport: ...

    async def save_snapshot(
        self, stream: str, version: int, key: str, data: Mapping[str, Any]
    ) -> bool: ...

    async def read_snapshot(self, stream: str, key: str) -> Snapshot | None: ...
