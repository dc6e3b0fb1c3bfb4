"""Turning an append request into exactly what gets stored (pure, shared by every backend).

Everything that does not depend on the database is decided here, once: validation, event
ids, the timestamp, canonical bytes, the messages to queue, the request fingerprint. A backend then
only has to find the previous hash, chain, and write atomically. Sharing this code is
what makes `InMemoryEventStore` behave like `PostgresEventStore`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any
from uuid import UUID

from kozyr.eventstore.errors import InvalidEvent
from kozyr.eventstore.hashing import (
    canonical_event_of_parts,
    canonical_json,
    chain_hash,
    check_json,
    decode_json,
    fingerprint_command,
    fingerprint_events,
    format_timestamp,
)
from kozyr.eventstore.model import (
    AppendResult,
    NewEvent,
    NewMessage,
    QueuedMessage,
    RecordedEvent,
    check_stream,
)

MAX_REQUEST_ID_LENGTH = 200
MAX_EVENTS_PER_APPEND = 10_000
MAX_MESSAGES_PER_APPEND = 10_000


@dataclass(frozen=True, slots=True)
class PlannedEvent:
    """One event ready to be chained: everything but its hash and global position."""

    event_id: UUID
    position: int
    type: str
    schema_version: int
    data: dict[str, Any]
    canonical: bytes
    data_json: bytes
    """`data` in canonical JSON (what the hash covers), for the row as it is written."""


@dataclass(frozen=True, slots=True)
class AppendPlan:
    """A validated append: the rows to write once the previous hash is known."""

    stream: str
    expected_version: int
    request_id: str
    fingerprint: bytes
    metadata: dict[str, Any]
    recorded_at: datetime
    events: tuple[PlannedEvent, ...]
    messages: tuple[QueuedMessage, ...] = ()
    """Queued in the outbox after the events, in this order."""
    metadata_json: bytes = b"{}"
    """`metadata` in canonical JSON: encoded once for every event of the append."""

    @property
    def new_version(self) -> int:
        return self.expected_version + len(self.events)

    def chain(self, previous_hash: bytes) -> list[bytes]:
        """The hashes of the planned events, continuing the chain from `previous_hash`."""
        hashes: list[bytes] = []
        for event in self.events:
            previous_hash = chain_hash(previous_hash, event.canonical)
            hashes.append(previous_hash)
        return hashes

    def recorded(self, hashes: Sequence[bytes], global_positions: Sequence[int]) -> AppendResult:
        """The result of this plan once stored with these hashes and global positions."""
        recorded = tuple(
            RecordedEvent(
                event_id=event.event_id,
                stream=self.stream,
                position=event.position,
                global_position=global_position,
                type=event.type,
                schema_version=event.schema_version,
                data=event.data,
                metadata=dict(self.metadata),
                recorded_at=self.recorded_at,
                hash=event_hash.hex(),
            )
            for event, event_hash, global_position in zip(
                self.events, hashes, global_positions, strict=True
            )
        )
        return AppendResult(stream=self.stream, events=recorded, duplicate=False)


def plan_append(
    stream: str,
    expected_version: int,
    events: Sequence[NewEvent],
    *,
    request_id: str,
    metadata: Mapping[str, Any] | None,
    command_fingerprint: str | None,
    recorded_at: datetime,
    new_event_id: Callable[[], UUID],
    messages: Sequence[NewMessage] = (),
) -> AppendPlan:
    """Validate an append and compute everything it will store (raises `InvalidEvent`)."""
    check_stream(stream)
    _check_arguments(expected_version, events, request_id)
    _check_messages(messages)
    stored_metadata = {**(metadata or {}), "request_id": request_id}
    check_json(stored_metadata, "metadata")
    metadata_json = canonical_json(stored_metadata)
    shared = _Shared(
        stream_json=canonical_json(stream),
        metadata_json=metadata_json,
        timestamp=format_timestamp(recorded_at),
    )
    planned = tuple(
        _plan_event(shared, expected_version + index + 1, event, new_event_id())
        for index, event in enumerate(events)
    )
    if command_fingerprint is not None:
        fingerprint = fingerprint_command(command_fingerprint)
    else:
        fingerprint = fingerprint_events([(e.type, e.schema_version, e.data) for e in events])
    return AppendPlan(
        stream=stream,
        expected_version=expected_version,
        request_id=request_id,
        fingerprint=fingerprint,
        metadata=decode_json(metadata_json),
        recorded_at=recorded_at,
        events=planned,
        messages=tuple(
            QueuedMessage(new_event_id(), stream, m.channel, m.type, m.payload) for m in messages
        ),
        metadata_json=metadata_json,
    )


def _check_arguments(expected_version: int, events: Sequence[NewEvent], request_id: str) -> None:
    if isinstance(expected_version, bool) or expected_version < 0:
        raise InvalidEvent(f"expected_version must be ≥ 0, got {expected_version!r}")
    if not events:
        raise InvalidEvent("an append needs at least one event")
    if len(events) > MAX_EVENTS_PER_APPEND:
        raise InvalidEvent(f"at most {MAX_EVENTS_PER_APPEND} events per append")
    if not request_id or len(request_id) > MAX_REQUEST_ID_LENGTH or "\x00" in request_id:
        raise InvalidEvent(f"request_id must be 1..{MAX_REQUEST_ID_LENGTH} characters")


def _check_messages(messages: Sequence[NewMessage]) -> None:
    if len(messages) > MAX_MESSAGES_PER_APPEND:
        raise InvalidEvent(f"at most {MAX_MESSAGES_PER_APPEND} messages per append")
    for message in messages:
        if not isinstance(message, NewMessage):
            raise InvalidEvent(f"messages must be NewMessage, got {type(message)}")


@dataclass(frozen=True, slots=True)
class _Shared:
    """What every event of one append has in common, in canonical JSON (encoded once)."""

    stream_json: bytes
    metadata_json: bytes
    timestamp: str


def _plan_event(shared: _Shared, position: int, event: NewEvent, event_id: UUID) -> PlannedEvent:
    check_json(event.data, "data")
    data_json = canonical_json(event.data)
    canonical = canonical_event_of_parts(
        event_id=event_id,
        stream_json=shared.stream_json,
        position=position,
        type_json=canonical_json(event.type),
        schema_version=event.schema_version,
        data_json=data_json,
        metadata_json=shared.metadata_json,
        timestamp=shared.timestamp,
    )
    return PlannedEvent(
        event_id=event_id,
        position=position,
        type=event.type,
        schema_version=event.schema_version,
        data=decode_json(data_json),
        canonical=canonical,
        data_json=data_json,
    )
