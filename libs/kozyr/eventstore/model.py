"""The event store's records and the contract every backend fulfils (`EventStore`).

Records are small frozen values. `RecordedEvent.data`/`metadata` are plain JSON objects
(dicts) exactly as a reader of the database sees them.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Protocol
from uuid import UUID

from kozyr.eventstore.errors import InvalidEvent, StreamCorrupted, VerifyFailure

EVENT_TYPE_PATTERN = re.compile(r"[A-Za-z][A-Za-z0-9_]{0,127}")
"""Event types are identifiers: they end up as a NATS subject token and in SQL queries."""

STREAM_PATTERN = re.compile(r"(?P<category>[a-z][a-z0-9_]*)-(?P<id>[A-Za-z0-9_-]+)")
"""Stream names are "<category>-<id>" ("table-7f3a"): the bus turns both parts into
subject tokens, so neither may hold a dot, a space or a wildcard."""

CHANNEL_PATTERN = re.compile(r"[a-z][a-z0-9_]{0,63}")
"""A message channel ("public") names a family of messages that ride along with appends."""


def check_stream(stream: str) -> str:
    """Return `stream` if it is "<category>-<id>", else raise `InvalidEvent`."""
    if not isinstance(stream, str) or not STREAM_PATTERN.fullmatch(stream):
        raise InvalidEvent(
            f"stream name {stream!r} is not '<category>-<id>' "
            "(category: lowercase identifier; id: letters, digits, '_' or '-')"
        )
    return stream


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
class NewMessage:
    """A message to publish with an append, derived from its events but not one of them.

    It is queued in the outbox in the append's transaction, after the append's events,
    and published once like them; it is not part of the stream (no position, no hash,
    never read back by `read`), so replay and `verify` of the stream do not see it.
    `channel` names the family ("public"); the bus picks the subject from it, the
    stream and `type`. `payload` is published as is.
    """

    channel: str
    type: str
    payload: bytes

    def __post_init__(self) -> None:
        if not isinstance(self.channel, str) or not CHANNEL_PATTERN.fullmatch(self.channel):
            raise InvalidEvent(f"message channel {self.channel!r} is not a lowercase identifier")
        if not isinstance(self.type, str) or not EVENT_TYPE_PATTERN.fullmatch(self.type):
            raise InvalidEvent(f"message type {self.type!r} is not an identifier")
        if not isinstance(self.payload, bytes):
            raise InvalidEvent(f"message payload must be bytes, got {type(self.payload)}")


@dataclass(frozen=True, slots=True)
class QueuedMessage:
    """A `NewMessage` as queued: its stream and a message id (the publisher's dedupe key)."""

    message_id: UUID
    stream: str
    channel: str
    type: str
    payload: bytes


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


@dataclass(frozen=True, slots=True)
class OutboxEntry:
    """One row of the outbox: an event to publish, or a message queued with an append.

    `id` orders the outbox: within a stream, entries come in the order they were
    appended (events by position, then the append's messages).
    """

    id: int
    item: RecordedEvent | QueuedMessage

    @property
    def stream(self) -> str:
        return self.item.stream


@dataclass(frozen=True, slots=True)
class OutboxBacklog:
    """How far the publisher is behind: entries waiting and the oldest one's age."""

    entries: int
    oldest_age: float | None
    """Seconds since the oldest waiting entry was queued; None when none waits."""


class OutboxReader(Protocol):
    """A publisher's hold on the outbox (`EventStore.outbox_reader`).

    At most one reader of a lock key leads at a time, and it stays leader exactly as
    long as the reader is open (on PostgreSQL: an advisory lock on the reader's own
    connection, through which it also reads and removes): two publishers never work
    the outbox together.
    """

    async def lead(self) -> bool:
        """Try to become the leader; True once it is (it then stays leader)."""
        ...

    async def pending(self, limit: int) -> list[OutboxEntry]:
        """The first `limit` waiting entries, in outbox order (only for the leader)."""
        ...

    async def remove(self, ids: Sequence[int]) -> None:
        """Forget published entries (call only after the publication was acknowledged)."""
        ...

    async def wake_leader(self) -> None:
        """Tell the leading reader, wherever it runs, that entries were queued (a reader
        that does not lead calls this when its own process appended)."""
        ...


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
        messages: Sequence[NewMessage] = (),
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

    def outbox_reader(
        self, *, lock_key: int, on_queued: Callable[[], None], name: str = "kozyr-outbox"
    ) -> AbstractAsyncContextManager[OutboxReader]:
        """Open a reader of the outbox; `on_queued` is called (from the store's own task)
        after every append of this store that queued something, and, once the reader
        leads, whenever another process wakes the leader (`OutboxReader.wake_leader`)."""
        ...

    async def outbox_backlog(self) -> OutboxBacklog: ...
