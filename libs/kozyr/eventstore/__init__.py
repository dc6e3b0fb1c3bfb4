"""The PostgreSQL event log (DESIGN.md §4): append with optimistic concurrency and
idempotency, per-stream hash chain, transactional outbox. See docs/eventstore.md.
"""

from kozyr.eventstore.deciding import Append, Appended, Repeated, Settled, decide_and_append
from kozyr.eventstore.errors import (
    ConcurrencyConflict,
    EventStoreError,
    IdempotencyConflict,
    InvalidEvent,
    SchemaNotMigrated,
    StoreUnavailable,
    StreamCorrupted,
    VerifyFailure,
)
from kozyr.eventstore.memory import InMemoryEventStore
from kozyr.eventstore.migrations import downgrade, migrate
from kozyr.eventstore.model import (
    AppendResult,
    EventStore,
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
from kozyr.eventstore.store import PostgresEventStore

__all__ = [
    "Append",
    "AppendResult",
    "Appended",
    "ConcurrencyConflict",
    "EventStore",
    "EventStoreError",
    "IdempotencyConflict",
    "InMemoryEventStore",
    "InvalidEvent",
    "NewEvent",
    "NewMessage",
    "OutboxBacklog",
    "OutboxEntry",
    "OutboxReader",
    "PostgresEventStore",
    "QueuedMessage",
    "RecordedEvent",
    "Repeated",
    "SchemaNotMigrated",
    "Settled",
    "Snapshot",
    "StoreUnavailable",
    "StreamCorrupted",
    "StreamHead",
    "VerifyFailure",
    "VerifyReport",
    "decide_and_append",
    "downgrade",
    "migrate",
]
