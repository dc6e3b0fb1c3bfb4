"""Canonical JSON and the per-stream hash chain (tamper evidence, DESIGN.md §4).

The chain is meant to be recomputed by an auditor without our code, so the canonical
form is deliberately boring: RFC 8785 (JSON Canonicalization Scheme) restricted to a
value domain where JCS and Python's `json.dumps(sort_keys=True, separators=(",", ":"),
ensure_ascii=False)` produce the same bytes:

- values are null, booleans, strings, integers within ±(2**53 - 1), arrays and objects;
- no floats (their text is not stable through jsonb and differs between JSON libraries:
  encode decimals as strings), no NUL characters (jsonb refuses them), no lone surrogates;
- object keys are strings within the Basic Multilingual Plane (so sorting by code point,
  Python's order, equals JCS's sorting by UTF-16 code units).

    hash(1) = SHA-256(32 zero bytes ‖ canonical(event 1))
    hash(n) = SHA-256(hash(n-1) ‖ canonical(event n))

where canonical(event) is the UTF-8 canonical JSON of the object with exactly the keys
data, event_id, metadata, position, recorded_at, schema_version, stream, type
(`recorded_at` as "YYYY-MM-DDTHH:MM:SS.ffffffZ" in UTC; `event_id` lowercase, hyphenated).
The global position is not covered: it is assigned by the database at insert time.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Mapping, Sequence
from datetime import UTC, datetime
from typing import Any
from uuid import UUID

import orjson

from kozyr.eventstore.errors import InvalidEvent

GENESIS_HASH = bytes(32)
"""The "previous hash" of a stream's first event."""

MAX_SAFE_INTEGER = 2**53 - 1
"""Largest integer every JSON implementation reads exactly (IEEE-754 doubles)."""

_BMP_MAX = "\uffff"

_CANONICAL_ENCODER = json.JSONEncoder(
    sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False
)


def check_json(value: object, path: str = "$") -> None:
    """Refuse anything outside the canonical value domain (raises `InvalidEvent`).

    Checked before writing, because a value that does not survive the jsonb round trip
    unchanged would make a correct event fail verification later.
    """
    if value is None or isinstance(value, bool):
        return
    if isinstance(value, int):
        if not -MAX_SAFE_INTEGER <= value <= MAX_SAFE_INTEGER:
            raise InvalidEvent(f"{path}: integer {value} outside ±(2**53 - 1)")
        return
    if isinstance(value, str):
        _check_text(value, path)
        return
    if isinstance(value, dict):
        for key, item in value.items():
            if not isinstance(key, str):
                raise InvalidEvent(f"{path}: object key {key!r} is not a string")
            _check_text(key, path)
            if not key.isascii() and max(key) > _BMP_MAX:
                raise InvalidEvent(f"{path}: object key {key!r} outside the BMP")
            check_json(item, f"{path}.{key}")
        return
    if isinstance(value, list | tuple):
        for index, item in enumerate(value):
            check_json(item, f"{path}[{index}]")
        return
    if isinstance(value, float):
        raise InvalidEvent(f"{path}: floats are not allowed (encode decimals as strings)")
    raise InvalidEvent(f"{path}: {type(value).__name__} is not JSON")


def _check_text(text: str, path: str) -> None:
    if "\x00" in text:
        raise InvalidEvent(f"{path}: NUL characters cannot be stored")


def canonical_json(value: Any) -> bytes:
    """UTF-8 canonical JSON of an already checked value (see the module docstring)."""
    try:
        return _CANONICAL_ENCODER.encode(value).encode("utf-8")
    except UnicodeEncodeError as error:
        raise InvalidEvent(f"text is not valid Unicode: {error.reason}") from error
    except (TypeError, ValueError) as error:
        raise InvalidEvent(f"not canonical JSON: {error}") from error


decode_json: Callable[[str | bytes], Any] = orjson.loads
"""One JSON value of this domain (stored jsonb read as text, an event on the bus) into the
same Python values as `json.loads`, in about half the time of its C scanner: a third of
a replay's row decoding was this parse."""


def format_timestamp(moment: datetime) -> str:
    """The canonical text of `recorded_at`: UTC, microseconds, a literal Z."""
    if moment.tzinfo is None:
        raise InvalidEvent("recorded_at must be timezone-aware")
    # The text of strftime("%Y-%m-%dT%H:%M:%S.%fZ") for four-digit years, in a third of
    # its time (this runs for every append and every event the relay publishes).
    return moment.astimezone(UTC).isoformat(timespec="microseconds")[:-6] + "Z"


def canonical_event(
    *,
    event_id: UUID,
    stream: str,
    position: int,
    event_type: str,
    schema_version: int,
    data: Mapping[str, Any],
    metadata: Mapping[str, Any],
    recorded_at: datetime,
) -> bytes:
    """The bytes an event's hash covers (everything but the global position)."""
    return canonical_json(
        {
            "data": data,
            "event_id": str(event_id),
            "metadata": metadata,
            "position": position,
            "recorded_at": format_timestamp(recorded_at),
            "schema_version": schema_version,
            "stream": stream,
            "type": event_type,
        }
    )


def canonical_event_of_parts(
    *,
    event_id: UUID,
    stream_json: bytes,
    position: int,
    type_json: bytes,
    schema_version: int,
    data_json: bytes,
    metadata_json: bytes,
    timestamp: str,
) -> bytes:
    """`canonical_event`'s bytes, joined from parts already in canonical JSON.

    An append encodes its metadata, stream, timestamp once and each event's data once,
    instead of the whole object per event; the keys are joined in their sorted order
    (data, event_id, metadata, position, recorded_at, schema_version, stream, type), so
    the bytes are exactly `canonical_event`'s (tests/unit/eventstore prove it).
    """
    return b"".join(
        (
            b'{"data":',
            data_json,
            b',"event_id":"',
            str(event_id).encode(),
            b'","metadata":',
            metadata_json,
            b',"position":',
            str(position).encode(),
            b',"recorded_at":"',
            timestamp.encode(),
            b'","schema_version":',
            str(schema_version).encode(),
            b',"stream":',
            stream_json,
            b',"type":',
            type_json,
            b"}",
        )
    )


def chain_hash(previous: bytes, canonical: bytes) -> bytes:
    """One link: SHA-256(previous hash ‖ canonical event bytes), 32 raw bytes."""
    return hashlib.sha256(previous + canonical).digest()


def fingerprint_events(events: Sequence[tuple[str, int, Mapping[str, Any]]]) -> bytes:
    """What makes two appends "the same command" by default: types, versions and data."""
    body = canonical_json([[event_type, version, data] for event_type, version, data in events])
    return hashlib.sha256(b"events\x00" + body).digest()


def fingerprint_command(command_fingerprint: str) -> bytes:
    """A caller-chosen fingerprint (e.g. of the command), kept apart from event fingerprints."""
    return hashlib.sha256(b"command\x00" + command_fingerprint.encode("utf-8")).digest()
