"""The wire form of an event on NATS: the full `RecordedEvent` as JSON, plus headers.

NATS carries full events (DESIGN.md §5), hash included, so a consumer can check an
event against the chain and never needs to read the database. Headers repeat the
routing facts so that a consumer can skip an event without parsing its body.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any, TypeVar
from uuid import UUID

import orjson

from kozyr.eventstore.hashing import decode_json, format_timestamp
from kozyr.eventstore.model import OutboxEntry, RecordedEvent

_T = TypeVar("_T")

MSG_ID_HEADER = "Nats-Msg-Id"
"""JetStream's de-duplication key: the event id."""
STREAM_HEADER = "Kozyr-Stream"
POSITION_HEADER = "Kozyr-Position"
TYPE_HEADER = "Kozyr-Type"
SCHEMA_VERSION_HEADER = "Kozyr-Schema-Version"


class MalformedEventMessage(ValueError):
    """A message body that is not an encoded event (a consumer should `term()` it)."""


def encode_event(event: RecordedEvent) -> bytes:
    """The JSON body: every field of the event; `recorded_at` in the canonical text form.

    Compact UTF-8 JSON (orjson: the same bytes as `json.dumps(ensure_ascii=False,
    separators=(",", ":"))` for the store's value domain, in a fraction of the time).
    """
    body = {
        "event_id": str(event.event_id),
        "stream": event.stream,
        "position": event.position,
        "global_position": event.global_position,
        "type": event.type,
        "schema_version": event.schema_version,
        "data": event.data,
        "metadata": event.metadata,
        "recorded_at": format_timestamp(event.recorded_at),
        "hash": event.hash,
    }
    return orjson.dumps(body)


def event_headers(event: RecordedEvent) -> dict[str, str]:
    """Headers of the published message; `Nats-Msg-Id` makes republishing harmless."""
    return {
        MSG_ID_HEADER: str(event.event_id),
        STREAM_HEADER: event.stream,
        POSITION_HEADER: str(event.position),
        TYPE_HEADER: event.type,
        SCHEMA_VERSION_HEADER: str(event.schema_version),
    }


def encode_entry(entry: OutboxEntry) -> bytes:
    """The body of an outbox entry: an event as JSON, a queued message as it was given."""
    item = entry.item
    return encode_event(item) if isinstance(item, RecordedEvent) else item.payload


def entry_headers(entry: OutboxEntry) -> dict[str, str]:
    """An event's headers, or a message's: its id (dedupe), stream and type."""
    item = entry.item
    if isinstance(item, RecordedEvent):
        return event_headers(item)
    return {
        MSG_ID_HEADER: str(item.message_id),
        STREAM_HEADER: item.stream,
        TYPE_HEADER: item.type,
    }


def decode_event(payload: bytes) -> RecordedEvent:
    """The inverse of `encode_event` (raises `MalformedEventMessage`)."""
    try:
        body: dict[str, Any] = decode_json(payload)
        return RecordedEvent(
            event_id=UUID(body["event_id"]),
            stream=_typed(body, "stream", str),
            position=_typed(body, "position", int),
            global_position=_typed(body, "global_position", int),
            type=_typed(body, "type", str),
            schema_version=_typed(body, "schema_version", int),
            data=_typed(body, "data", dict),
            metadata=_typed(body, "metadata", dict),
            recorded_at=datetime.fromisoformat(_typed(body, "recorded_at", str)),
            hash=_typed(body, "hash", str),
        )
    except (ValueError, KeyError, TypeError) as error:
        raise MalformedEventMessage(f"not an encoded event: {error}") from error


def _typed(body: dict[str, Any], key: str, kind: type[_T]) -> _T:
    value = body[key]
    if not isinstance(value, kind) or (isinstance(value, bool) and kind is not bool):
        raise TypeError(f"{key} is not {kind.__name__}")
    return value
