"""Appends no longer NOTIFY: the relay is woken outside the append's transaction.

Revision ID: 0004
Revises: 0003
Create Date: 2026-12-01

Until 0003 a statement-level trigger on `outbox` sent `NOTIFY kozyr_outbox` inside every
append. A transaction that has notified takes one database-wide lock at commit and
keeps it until its commit record is flushed, so every append of every process committed
one after another, each waiting for the previous one's fsync: no group commit, and a
ceiling of about one append per fsync for the whole database, whatever the hardware.

From 0004 the store wakes the outbox readers of its own process directly after a
committed append, and a reader that does not lead (another process leads) sends the
NOTIFY itself, on its own connection, in a transaction of its own that writes nothing
(so nothing to flush under that lock), once for however many appends it saw meanwhile.
Appends by a process without a relay wait for the leader's idle poll. The trigger's
function stays (0001's downgrade drops it); a downgrade puts the trigger back.
"""

from __future__ import annotations

from collections.abc import Sequence

from alembic import op

revision: str = "0004"
down_revision: str | Sequence[str] | None = "0003"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.execute("DROP TRIGGER outbox_notify ON outbox")


def downgrade() -> None:
    op.execute(
        "CREATE TRIGGER outbox_notify AFTER INSERT ON outbox "
        "FOR EACH STATEMENT EXECUTE FUNCTION outbox_notify()"
    )
