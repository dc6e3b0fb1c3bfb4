"""The event store's tables as SQLAlchemy Core metadata.

This is the *description* the code and tests compare against; the database is only ever
created by the Alembic migrations in `kozyr.eventstore.migrations` (never `create_all`).
A test checks that a migrated database and this metadata agree.

- `streams`: one row per stream: its version (= number of events) and head hash. The
  optimistic-concurrency check is `UPDATE streams … WHERE version = :expected`.
- `events`: the append-only log (a trigger refuses UPDATE, DELETE and TRUNCATE).
- `stream_requests`: one row per (stream, request id): makes appends idempotent.
- `outbox`: events, and messages queued with appends, not yet acknowledged by JetStream;
  the relay deletes rows after the ack (through `EventStore.outbox_reader`).
- `snapshots`: readers' folded states, one per (stream, key): disposable, never the truth.
"""

from __future__ import annotations

from sqlalchemy import (
    BigInteger,
    CheckConstraint,
    Column,
    DateTime,
    Identity,
    Integer,
    LargeBinary,
    MetaData,
    PrimaryKeyConstraint,
    Table,
    Text,
    UniqueConstraint,
    Uuid,
    func,
)
from sqlalchemy.dialects.postgresql import JSONB

metadata = MetaData()

OUTBOX_CHANNEL = "kozyr_outbox"
"""LISTEN/NOTIFY channel on which the leading outbox reader hears that another process
queued outbox rows (`OutboxReader.wake_leader`; appends themselves never notify)."""

ALEMBIC_VERSION_TABLE = "eventstore_alembic_version"
"""Our own Alembic version table, so other components can run their own migrations."""

streams = Table(
    "streams",
    metadata,
    Column("id", Text, primary_key=True),
    Column("version", BigInteger, nullable=False),
    Column("head_hash", LargeBinary, nullable=False),
    Column("created_at", DateTime(timezone=True), nullable=False, server_default=func.now()),
    Column("updated_at", DateTime(timezone=True), nullable=False, server_default=func.now()),
    CheckConstraint("version >= 1", name="streams_version_positive"),
    CheckConstraint("octet_length(head_hash) = 32", name="streams_head_hash_sha256"),
)

events = Table(
    "events",
    metadata,
    Column("global_position", BigInteger, Identity(always=True), primary_key=True),
    Column("event_id", Uuid, nullable=False, unique=True),
    Column("stream", Text, nullable=False),  # no FK: see the migration
    Column("position", BigInteger, nullable=False),
    Column("type", Text, nullable=False),
    Column("schema_version", Integer, nullable=False),
    Column("data", JSONB, nullable=False),
    Column("metadata", JSONB, nullable=False),
    Column("recorded_at", DateTime(timezone=True), nullable=False),
    Column("hash", LargeBinary, nullable=False),
    UniqueConstraint("stream", "position", name="events_stream_position_key"),
    CheckConstraint("position >= 1", name="events_position_positive"),
    CheckConstraint("schema_version >= 1", name="events_schema_version_positive"),
    CheckConstraint("octet_length(hash) = 32", name="events_hash_sha256"),
)

stream_requests = Table(
    "stream_requests",
    metadata,
    Column("stream", Text, nullable=False),
    Column("request_id", Text, nullable=False),
    Column("fingerprint", LargeBinary, nullable=False),
    Column("first_position", BigInteger, nullable=False),
    Column("last_position", BigInteger, nullable=False),
    Column("recorded_at", DateTime(timezone=True), nullable=False),
    PrimaryKeyConstraint("stream", "request_id", name="stream_requests_pkey"),
)

outbox = Table(
    "outbox",
    metadata,
    # The publication order: per stream, an append's events by position, then its messages.
    Column("id", BigInteger, Identity(always=True), primary_key=True),
    Column("stream", Text, nullable=False),
    # An event: = events.global_position; no foreign key, so that queuing an event does
    # not row-lock (and dirty) the append-only events table.
    Column("global_position", BigInteger, nullable=True),
    # A message (NewMessage): its id, channel, type and payload.
    Column("message_id", Uuid, nullable=True),
    Column("channel", Text, nullable=True),
    Column("type", Text, nullable=True),
    Column("payload", LargeBinary, nullable=True),
    Column("enqueued_at", DateTime(timezone=True), nullable=False, server_default=func.now()),
    CheckConstraint(
        "(global_position IS NULL) = (message_id IS NOT NULL AND channel IS NOT NULL "
        "AND type IS NOT NULL AND payload IS NOT NULL)",
        name="outbox_event_or_message",
    ),
    UniqueConstraint("global_position", name="outbox_global_position_key"),
)

snapshots = Table(
    "snapshots",
    metadata,
    # No foreign keys: a snapshot is checked against the events row at its version
    # (same hash) whenever it is read, and may be deleted at any time.
    Column("stream", Text, nullable=False),
    Column("key", Text, nullable=False),
    Column("version", BigInteger, nullable=False),
    Column("event_hash", LargeBinary, nullable=False),
    Column("data", JSONB, nullable=False),
    Column("saved_at", DateTime(timezone=True), nullable=False),
    PrimaryKeyConstraint("stream", "key", name="snapshots_pkey"),
    CheckConstraint("version >= 1", name="snapshots_version_positive"),
    CheckConstraint("octet_length(event_hash) = 32", name="snapshots_event_hash_sha256"),
)
