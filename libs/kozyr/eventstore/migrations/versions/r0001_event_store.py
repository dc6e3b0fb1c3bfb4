"""Event store: streams, append-only events, request ids, outbox.

Revision ID: 0001
Revises:
Create Date: 2025-01-01
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision: str = "0001"
down_revision: str | Sequence[str] | None = None
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

_TIMESTAMP = sa.DateTime(timezone=True)

_REFUSE_CHANGE = """
CREATE FUNCTION events_refuse_change() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    RAISE EXCEPTION 'the events table is append-only: % refused', TG_OP
        USING ERRCODE = 'insufficient_privilege',
              HINT = 'events are facts; append a correcting event instead';
END
$$
"""

_NOTIFY_OUTBOX = """
CREATE FUNCTION outbox_notify() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    PERFORM pg_notify('kozyr_outbox', '');
    RETURN NULL;
END
$$
"""


def upgrade() -> None:
    _create_streams()
    _create_events()
    _create_stream_requests()
    _create_outbox()
    _protect_events()
    op.execute(_NOTIFY_OUTBOX)
    op.execute(
        "CREATE TRIGGER outbox_notify AFTER INSERT ON outbox "
        "FOR EACH STATEMENT EXECUTE FUNCTION outbox_notify()"
    )


def _create_streams() -> None:
    op.create_table(
        "streams",
        sa.Column("id", sa.Text(), primary_key=True),
        sa.Column("version", sa.BigInteger(), nullable=False),
        sa.Column("head_hash", sa.LargeBinary(), nullable=False),
        sa.Column("created_at", _TIMESTAMP, nullable=False, server_default=sa.func.now()),
        sa.Column("updated_at", _TIMESTAMP, nullable=False, server_default=sa.func.now()),
        sa.CheckConstraint("version >= 1", name="streams_version_positive"),
        sa.CheckConstraint("octet_length(head_hash) = 32", name="streams_head_hash_sha256"),
    )


def _create_events() -> None:
    op.create_table(
        "events",
        sa.Column("global_position", sa.BigInteger(), sa.Identity(always=True), primary_key=True),
        sa.Column("event_id", sa.Uuid(), nullable=False, unique=True),
        # No foreign key to streams: the append statement only inserts events for the
        # streams row it just bumped, and the key check cost ~10% of append throughput.
        sa.Column("stream", sa.Text(), nullable=False),
        sa.Column("position", sa.BigInteger(), nullable=False),
        sa.Column("type", sa.Text(), nullable=False),
        sa.Column("schema_version", sa.Integer(), nullable=False),
        sa.Column("data", postgresql.JSONB(), nullable=False),
        sa.Column("metadata", postgresql.JSONB(), nullable=False),
        sa.Column("recorded_at", _TIMESTAMP, nullable=False),
        sa.Column("hash", sa.LargeBinary(), nullable=False),
        sa.UniqueConstraint("stream", "position", name="events_stream_position_key"),
        sa.CheckConstraint("position >= 1", name="events_position_positive"),
        sa.CheckConstraint("schema_version >= 1", name="events_schema_version_positive"),
        sa.CheckConstraint("octet_length(hash) = 32", name="events_hash_sha256"),
    )


def _create_stream_requests() -> None:
    op.create_table(
        "stream_requests",
        sa.Column("stream", sa.Text(), nullable=False),
        sa.Column("request_id", sa.Text(), nullable=False),
        sa.Column("fingerprint", sa.LargeBinary(), nullable=False),
        sa.Column("first_position", sa.BigInteger(), nullable=False),
        sa.Column("last_position", sa.BigInteger(), nullable=False),
        sa.Column("recorded_at", _TIMESTAMP, nullable=False),
        sa.PrimaryKeyConstraint("stream", "request_id", name="stream_requests_pkey"),
    )


def _create_outbox() -> None:
    op.create_table(
        "outbox",
        sa.Column("global_position", sa.BigInteger(), primary_key=True, autoincrement=False),
        sa.Column("subject", sa.Text(), nullable=False),
        sa.Column("enqueued_at", _TIMESTAMP, nullable=False, server_default=sa.func.now()),
    )


def _protect_events() -> None:
    """Append-only: a trigger for everybody, and no UPDATE/DELETE/TRUNCATE privilege.

    The owner (the migrating role) revokes the privileges from itself too, so that even
    the service's own role cannot change history by accident; a superuser bypasses both
    only deliberately (see docs/eventstore.md, "Tamper evidence").
    """
    op.execute(_REFUSE_CHANGE)
    op.execute(
        "CREATE TRIGGER events_append_only BEFORE UPDATE OR DELETE ON events "
        "FOR EACH ROW EXECUTE FUNCTION events_refuse_change()"
    )
    op.execute(
        "CREATE TRIGGER events_no_truncate BEFORE TRUNCATE ON events "
        "FOR EACH STATEMENT EXECUTE FUNCTION events_refuse_change()"
    )
    op.execute("REVOKE UPDATE, DELETE, TRUNCATE ON events FROM PUBLIC")
    op.execute("REVOKE UPDATE, DELETE, TRUNCATE ON events FROM CURRENT_USER")


def downgrade() -> None:
    op.drop_table("outbox")
    op.execute("DROP FUNCTION outbox_notify()")
    op.drop_table("stream_requests")
    op.drop_table("events")
    op.execute("DROP FUNCTION events_refuse_change()")
    op.drop_table("streams")
