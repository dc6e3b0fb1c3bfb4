"""The outbox carries messages beside events, and no subjects (the bus computes them).

Revision ID: 0003
Revises: 0002
Create Date: 2026-11-30

Until 0002 an outbox row was an event's global position and the NATS subject the
store had computed for it, which made the event store depend on the bus's subject
names. From 0003 a row is either an event (its global position) or a message queued
with an append (`NewMessage`: id, channel, type, payload), ordered by its own `id`;
the relay asks the store for entries and the bus names their subjects. Rows waiting
at upgrade keep their order. A downgrade drops waiting messages and writes subjects
with the default root `kozyr` (the 0002 relay published what the row said).
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0003"
down_revision: str | Sequence[str] | None = "0002"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

_TIMESTAMP = sa.DateTime(timezone=True)
_NOTIFY_TRIGGER = (
    "CREATE TRIGGER outbox_notify AFTER INSERT ON outbox "
    "FOR EACH STATEMENT EXECUTE FUNCTION outbox_notify()"
)


def upgrade() -> None:
    op.rename_table("outbox", "outbox_0002")
    op.execute("ALTER INDEX outbox_pkey RENAME TO outbox_0002_pkey")
    op.create_table(
        "outbox",
        sa.Column("id", sa.BigInteger(), sa.Identity(always=True), primary_key=True),
        sa.Column("stream", sa.Text(), nullable=False),
        sa.Column("global_position", sa.BigInteger(), nullable=True),
        sa.Column("message_id", sa.Uuid(), nullable=True),
        sa.Column("channel", sa.Text(), nullable=True),
        sa.Column("type", sa.Text(), nullable=True),
        sa.Column("payload", sa.LargeBinary(), nullable=True),
        sa.Column("enqueued_at", _TIMESTAMP, nullable=False, server_default=sa.func.now()),
        sa.CheckConstraint(
            "(global_position IS NULL) = (message_id IS NOT NULL AND channel IS NOT NULL "
            "AND type IS NOT NULL AND payload IS NOT NULL)",
            name="outbox_event_or_message",
        ),
        sa.UniqueConstraint("global_position", name="outbox_global_position_key"),
    )
    op.execute(
        "INSERT INTO outbox (stream, global_position, enqueued_at) "
        "SELECT e.stream, o.global_position, o.enqueued_at "
        "FROM outbox_0002 o JOIN events e USING (global_position) ORDER BY o.global_position"
    )
    op.drop_table("outbox_0002")  # its notify trigger goes with it
    op.execute(_NOTIFY_TRIGGER)


def downgrade() -> None:
    op.rename_table("outbox", "outbox_0003")
    op.create_table(
        "outbox",
        sa.Column("global_position", sa.BigInteger(), primary_key=True, autoincrement=False),
        sa.Column("subject", sa.Text(), nullable=False),
        sa.Column("enqueued_at", _TIMESTAMP, nullable=False, server_default=sa.func.now()),
    )
    op.execute(
        "INSERT INTO outbox (global_position, subject, enqueued_at) "
        "SELECT o.global_position, 'kozyr.' || split_part(o.stream, '-', 1) || '.' "
        "|| substr(o.stream, length(split_part(o.stream, '-', 1)) + 2) || '.' || e.type, "
        "o.enqueued_at FROM outbox_0003 o JOIN events e USING (global_position)"
    )
    op.drop_table("outbox_0003")
    op.execute(_NOTIFY_TRIGGER)
