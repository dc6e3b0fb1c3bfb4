"""Walking a stream's hash chain: the tamper check every backend and auditor runs.

Pure: given the stream's head and its events as read, recompute every link and report
the first position where the stored facts and the recomputed chain disagree.
"""

from __future__ import annotations

from collections.abc import Sequence

from kozyr.eventstore.errors import EventStoreError, VerifyFailure
from kozyr.eventstore.hashing import GENESIS_HASH, canonical_event, chain_hash
from kozyr.eventstore.model import RecordedEvent, StreamHead, VerifyReport


def verify_events(
    stream: str, head: StreamHead | None, events: Sequence[RecordedEvent]
) -> VerifyReport:
    """Check positions 1..n, every hash link, and that the head names the last event."""
    version = head.version if head is not None else 0
    previous = GENESIS_HASH
    for expected_position, event in enumerate(events, start=1):
        if event.position != expected_position:
            return _failed(
                stream,
                len(events),
                version,
                expected_position,
                VerifyFailure.POSITION_GAP,
                f"found position {event.position} where {expected_position} belongs",
            )
        computed = _recompute(previous, event)
        if computed is None or computed.hex() != event.hash:
            return _failed(
                stream,
                len(events),
                version,
                event.position,
                VerifyFailure.HASH_MISMATCH,
                f"stored hash {event.hash[:16]}…, recomputed "
                f"{computed.hex()[:16] if computed else 'nothing (not canonical JSON)'}…",
            )
        previous = computed
    return _check_head(stream, head, len(events), previous)


def _recompute(previous: bytes, event: RecordedEvent) -> bytes | None:
    try:
        canonical = canonical_event(
            event_id=event.event_id,
            stream=event.stream,
            position=event.position,
            event_type=event.type,
            schema_version=event.schema_version,
            data=event.data,
            metadata=event.metadata,
            recorded_at=event.recorded_at,
        )
    except EventStoreError:
        return None
    return chain_hash(previous, canonical)


def _check_head(stream: str, head: StreamHead | None, count: int, last_hash: bytes) -> VerifyReport:
    version = head.version if head is not None else 0
    head_hash = head.head_hash if head is not None else GENESIS_HASH.hex()
    if version != count:
        return _failed(
            stream,
            count,
            version,
            min(version, count) + 1,
            VerifyFailure.HEAD_MISMATCH,
            f"head says version {version}, the stream holds {count} events",
        )
    if count and head_hash != last_hash.hex():
        return _failed(
            stream,
            count,
            version,
            count,
            VerifyFailure.HEAD_MISMATCH,
            "the head hash is not the last event's hash",
        )
    return VerifyReport(stream=stream, checked=count, version=version)


def _failed(
    stream: str,
    checked: int,
    version: int,
    position: int,
    failure: VerifyFailure,
    detail: str,
) -> VerifyReport:
    return VerifyReport(
        stream=stream,
        checked=checked,
        version=version,
        first_bad_position=position,
        failure=failure,
        detail=detail,
    )
