"""Store failures at the gRPC edge: a database that cannot be reached, or that is not
migrated yet, is UNAVAILABLE.

The event store raises its own typed `StoreUnavailable` and `SchemaNotMigrated`;
clients should see a status that says "retry later" (a deployment whose migration has
not run yet is healed by running it), never INTERNAL. Installed inside the runtime's
error mapper.
"""

from __future__ import annotations

from typing import Any

from kozyr.eventstore import SchemaNotMigrated, StoreUnavailable
from kozyr.runtime.errors import Unavailable
from kozyr.runtime.interceptors import CallInterceptor, Inner


class StoreErrorInterceptor(CallInterceptor):
    """Turns `StoreUnavailable` and `SchemaNotMigrated` into the runtime's `Unavailable`
    (UNAVAILABLE, reasons STORE_UNAVAILABLE and SCHEMA_NOT_MIGRATED)."""

    async def stage(self, inner: Inner, method: str, request: Any, context: Any) -> Any:
        try:
            return await inner(request, context)
        except StoreUnavailable:
            raise Unavailable(
                "STORE_UNAVAILABLE",
                {
                    "en": "The table's records cannot be reached right now: try again soon.",
                    "ro": "Înregistrările mesei nu pot fi accesate acum: încearcă din nou curând.",
                    "it": "I registri del tavolo non sono raggiungibili ora: riprova tra poco.",
                },
            ) from None
        except SchemaNotMigrated:
            raise schema_not_migrated() from None


def schema_not_migrated() -> Unavailable:
    """The database has no event store tables yet: the operators must run the migration."""
    return Unavailable(
        "SCHEMA_NOT_MIGRATED",
        {
            "en": "The table service is not ready (schema not migrated): try again soon.",
            "ro": "Serviciul de mese nu este pregătit (schema nu este migrată): "
            "încearcă din nou curând.",
            "it": "Il servizio dei tavoli non è pronto (schema non migrato): riprova tra poco.",
        },
    )
