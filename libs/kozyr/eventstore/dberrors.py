"""Database exceptions → the event store's typed errors, by SQLSTATE, never by message.

asyncpg errors reach us wrapped by SQLAlchemy (`DBAPIError.orig`, whose `__cause__` is
the asyncpg exception) or raw (connection set-up); both carry a SQLSTATE code.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from asyncpg import (
    InterfaceError as DriverInterfaceError,
)
from asyncpg.exceptions import (
    InternalClientError as DriverStateError,
)
from sqlalchemy.exc import DBAPIError, InterfaceError

from kozyr.eventstore.errors import EventStoreError, SchemaNotMigrated, StoreUnavailable

_UNAVAILABLE_SQLSTATE_PREFIXES = (
    "08",  # connection exception
    "53",  # insufficient resources (too many connections, out of memory, disk full)
    "57P",  # operator intervention: admin shutdown, crash shutdown, cannot connect now
    "40P01",  # deadlock detected: transient
    "57014",  # query canceled: the statement timeout (a hung or overloaded server)
)
_REFUSED_SQLSTATE_PREFIXES = (
    "28",  # invalid authorization (a rotated password): ops must act, callers retry later
    "3D000",  # the database does not exist (yet): likewise
)
_UNDEFINED_TABLE = "42P01"


def sqlstate(error: BaseException) -> str | None:
    """The SQLSTATE of a (possibly wrapped) PostgreSQL error, if it has one."""
    for candidate in _causes(error):
        code = getattr(candidate, "sqlstate", None)
        if isinstance(code, str):
            return code
    return None


def constraint_name(error: BaseException) -> str | None:
    """The violated constraint of a (possibly wrapped) integrity error."""
    for candidate in _causes(error):
        name = getattr(candidate, "constraint_name", None)
        if isinstance(name, str):
            return name
    return None


def _causes(error: BaseException) -> Iterator[BaseException]:
    seen: set[int] = set()
    pending: list[BaseException | None] = [error]
    while pending:
        candidate = pending.pop(0)
        if candidate is None or id(candidate) in seen:
            continue
        seen.add(id(candidate))
        yield candidate
        orig = getattr(candidate, "orig", None)
        pending.extend([orig if isinstance(orig, BaseException) else None, candidate.__cause__])


def translate(error: BaseException) -> EventStoreError | None:
    """The typed error for a database failure; None when it is not a database failure."""
    if isinstance(error, EventStoreError):
        return None
    code = sqlstate(error)
    if code == _UNDEFINED_TABLE:
        return SchemaNotMigrated("event store tables are missing: run migrate(url) first")
    if code is not None and code.startswith(_REFUSED_SQLSTATE_PREFIXES):
        reason = str(error).splitlines()[0] if str(error) else "no reason given"
        return StoreUnavailable(f"the database refused the connection: {reason} (SQLSTATE {code})")
    if code is not None and code.startswith(_UNAVAILABLE_SQLSTATE_PREFIXES):
        return StoreUnavailable(f"database unavailable (SQLSTATE {code})")
    if isinstance(error, DBAPIError) and (
        error.connection_invalidated or isinstance(error, InterfaceError)
    ):
        return StoreUnavailable("database connection lost")
    if isinstance(error, OSError | TimeoutError):
        return StoreUnavailable(f"database unreachable: {type(error).__name__}")
    if isinstance(error, DriverInterfaceError | DriverStateError):
        return StoreUnavailable("database connection lost or unusable")
    if isinstance(error, DBAPIError):
        return EventStoreError(f"database error (SQLSTATE {code})")
    return None


@contextmanager
def translate_errors() -> Iterator[None]:
    """Re-raise database failures inside the block as typed event store errors."""
    try:
        yield
    except Exception as error:
        typed = translate(error)
        if typed is None:
            raise
        raise typed from error
