"""The event store's typed errors: callers match classes and attributes, never messages.

Every failure a caller can act on has its own class carrying the facts needed to act
(the stream, the versions, the position). The service edge maps them to gRPC statuses:
`ConcurrencyConflict` → ABORTED, `IdempotencyConflict` → ALREADY_EXISTS or
INVALID_ARGUMENT, `StoreUnavailable` → UNAVAILABLE, `StreamCorrupted` → DATA_LOSS.
"""

from __future__ import annotations

from enum import StrEnum


class EventStoreError(Exception):
    """Base of everything the event store raises on purpose."""


class ConcurrencyConflict(EventStoreError):
    """The stream moved on: `expected` was stale, the stream is now at `actual`.

    Nothing was appended. The caller reloads the stream, decides again, and retries
    with `actual` as the expected version (or reports ABORTED to its client).
    """

    def __init__(self, stream: str, expected: int, actual: int) -> None:
        super().__init__(f"stream {stream!r}: expected version {expected}, actual {actual}")
        self.stream = stream
        self.expected = expected
        self.actual = actual


class IdempotencyConflict(EventStoreError):
    """The request id was already used on this stream for a different command.

    A repeat of the *same* command returns the first result; a request id reused with
    different content is a client bug, refused rather than silently answered with the
    result of another command. What "same" means is the request fingerprint: see
    docs/eventstore.md, "Idempotency".
    """

    def __init__(self, stream: str, request_id: str) -> None:
        super().__init__(
            f"stream {stream!r}: request id {request_id!r} was used for another command"
        )
        self.stream = stream
        self.request_id = request_id


class VerifyFailure(StrEnum):
    """Why a stream failed verification (the first failure found, walking from position 1)."""

    HASH_MISMATCH = "HASH_MISMATCH"
    """The stored hash is not SHA-256(previous hash ‖ canonical event): the row was altered
    (including values that are not canonical JSON any more, e.g. a float planted by hand)."""
    POSITION_GAP = "POSITION_GAP"
    """Positions are not 1, 2, 3, …: an event was removed or renumbered."""
    HEAD_MISMATCH = "HEAD_MISMATCH"
    """The stream's head (version, head hash) does not match its last event."""


class StreamCorrupted(EventStoreError):
    """A stream's hash chain is broken at `position` (the first bad event)."""

    def __init__(self, stream: str, position: int, failure: VerifyFailure, detail: str) -> None:
        super().__init__(
            f"stream {stream!r} corrupted at position {position}: {failure} ({detail})"
        )
        self.stream = stream
        self.position = position
        self.failure = failure
        self.detail = detail


class StoreUnavailable(EventStoreError):
    """The database could not be reached or dropped the connection mid-operation.

    The operation may or may not have committed (a lost COMMIT reply): retrying with the
    same request id is always safe, because appends are idempotent by request id.
    """


class SchemaNotMigrated(EventStoreError):
    """The event store tables are missing: run `kozyr.eventstore.migrate(url)` first."""


class InvalidEvent(EventStoreError, ValueError):
    """An event or its metadata cannot be stored faithfully (see the canonical JSON rules).

    Refused before anything is written: floats, integers beyond ±(2**53 - 1), non-string
    keys, NUL characters, lone surrogates, bad type names or stream names; also appends
    that cannot be made at all (no events, a negative expected version, an empty request id).
    """
