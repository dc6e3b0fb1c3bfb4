"""Dependency outages at the gRPC edge: one mapping, the same in every service.

A service whose database is down (stopped, failing over, refusing connections, hung
past its timeouts) must answer UNAVAILABLE — "retry later", which the client SDK
retries — never INTERNAL, and never a text of its own per service. The error stage
(`kozyr.runtime.interceptors.ErrorInterceptor`) asks `dependency_outage(error)` about
every exception no handler typed, before it would call it a bug:

- the event store's `StoreUnavailable` (connection refused or lost, pool or statement
  timeout, a server shutting down) → UNAVAILABLE, reason STORE_UNAVAILABLE;
- its `SchemaNotMigrated` → UNAVAILABLE, reason SCHEMA_NOT_MIGRATED;
- a raw driver error that escaped the store's own translation (asyncpg connection
  errors, SQLAlchemy's OperationalError/InterfaceError, a SQLSTATE of class 08, 53,
  57P...) → what `kozyr.eventstore.dberrors.translate` makes of it, mapped as above.
"""

from __future__ import annotations

import sys
from collections.abc import Mapping
from types import MappingProxyType

from kozyr.runtime.errors import Unavailable

STORE_UNAVAILABLE = "STORE_UNAVAILABLE"
SCHEMA_NOT_MIGRATED = "SCHEMA_NOT_MIGRATED"

STORE_UNAVAILABLE_MESSAGES: Mapping[str, str] = MappingProxyType(
    {
        "en": "The records cannot be reached right now: try again soon.",
        "ro": "Înregistrările nu pot fi accesate acum: încearcă din nou curând.",
        "it": "I registri non sono raggiungibili ora: riprova tra poco.",
    }
)
SCHEMA_NOT_MIGRATED_MESSAGES: Mapping[str, str] = MappingProxyType(
    {
        "en": "The service is not ready (schema not migrated): try again soon.",
        "ro": "Serviciul nu este pregătit (schema nu este migrată): încearcă din nou curând.",
        "it": "Il servizio non è pronto (schema non migrato): riprova tra poco.",
    }
)

_DATABASE_MODULES = ("kozyr.eventstore", "asyncpg", "sqlalchemy")


def store_unavailable() -> Unavailable:
    """What a caller hears while the service's database cannot be reached."""
    return Unavailable(STORE_UNAVAILABLE, STORE_UNAVAILABLE_MESSAGES)


def schema_not_migrated() -> Unavailable:
    """The database has no event store tables yet: the operators must run the migration."""
    return Unavailable(SCHEMA_NOT_MIGRATED, SCHEMA_NOT_MIGRATED_MESSAGES)


def dependency_outage(error: BaseException) -> Unavailable | None:
    """The UNAVAILABLE a dependency's outage is answered with; None: not an outage."""
    return store_outage(error)


def store_outage(error: BaseException) -> Unavailable | None:
    """`error` as a database outage, or None.

    The event store (and with it SQLAlchemy and asyncpg) is imported only by processes
    that loaded one of them already: an error of a database cannot come from a process
    without one (the clock, the bots, `kozyr token`), which so never pays the import.
    """
    if not any(name in sys.modules for name in _DATABASE_MODULES):
        return None
    from kozyr.eventstore.dberrors import translate
    from kozyr.eventstore.errors import SchemaNotMigrated, StoreUnavailable

    typed = error if isinstance(error, StoreUnavailable | SchemaNotMigrated) else translate(error)
    if isinstance(typed, StoreUnavailable):
        return store_unavailable()
    if isinstance(typed, SchemaNotMigrated):
        return schema_not_migrated()
    return None
