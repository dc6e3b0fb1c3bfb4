"""Commit durability: a service refuses to start on a database that acknowledges a
commit before its WAL is flushed, unless told to accept that.

With `synchronous_commit=off` PostgreSQL answers COMMIT before the commit's WAL is on
disk (or on the synchronous standby): a crash within the next ~200 ms (three times
`wal_writer_delay`) loses transactions the client was told are committed. For kozyr
that is an acknowledged move gone from the log — while the outbox relay may already
have published it (seen: a move acked 14 ms before the kill, missing from the log,
present on JetStream). The log is the truth, so the setting must stay on (or
`remote_write`/`remote_apply`/`local`). docs/operations.md, "Commit durability".
"""

from __future__ import annotations

from typing import Final, Protocol

import structlog

ASYNC_COMMIT: Final = "off"
ALLOW_ASYNC_COMMIT_ENV: Final = "KOZYR_ALLOW_ASYNC_COMMIT"

_log = structlog.get_logger("kozyr.eventstore.durability")


class CommitNotDurable(RuntimeError):
    """The database acknowledges commits it may still lose: the service will not start."""


class _Store(Protocol):
    async def synchronous_commit(self) -> str: ...


async def check_commit_durability(store: _Store, *, allow_async_commit: bool) -> None:
    """Raise `CommitNotDurable` when the store's sessions commit with
    `synchronous_commit=off`; with `allow_async_commit` (KOZYR_ALLOW_ASYNC_COMMIT=1,
    for throw-away databases only) say so loudly in the log and carry on."""
    setting = await store.synchronous_commit()
    if setting != ASYNC_COMMIT:
        return
    if allow_async_commit:
        _log.warning(
            "synchronous_commit=off: a database crash loses acknowledged moves "
            f"(allowed by {ALLOW_ASYNC_COMMIT_ENV}; never in production)",
            synchronous_commit=setting,
        )
        return
    raise CommitNotDurable(
        "the database runs with synchronous_commit=off: a crash would lose moves already "
        "acknowledged (and maybe published). Set synchronous_commit=on (the default) for "
        f"the service's database or role, or start with {ALLOW_ASYNC_COMMIT_ENV}=1 to accept "
        "the loss (throw-away databases only). See docs/operations.md, 'Commit durability'."
    )
