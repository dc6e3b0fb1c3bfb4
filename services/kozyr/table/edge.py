"""Store failures at the gRPC edge: a database that cannot be reached is UNAVAILABLE.

The event store raises its own typed `StoreUnavailable`; clients should see a status
that says "retry later", never INTERNAL. Installed inside the runtime's error mapper.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

from kozyr.eventstore import StoreUnavailable
from kozyr.runtime.errors import Unavailable
from kozyr.runtime.interceptors import CallInterceptor


class StoreErrorInterceptor(CallInterceptor):
    """Turns `StoreUnavailable` into the runtime's `Unavailable` (UNAVAILABLE)."""

    @asynccontextmanager
    async def around(self, method: str, context: Any) -> AsyncIterator[None]:
        try:
            yield
        except StoreUnavailable:
            raise Unavailable(
                "STORE_UNAVAILABLE",
                {
                    "en": "The table's records cannot be reached right now: try again soon.",
                    "ro": "Înregistrările mesei nu pot fi accesate acum: încearcă din nou curând.",
                    "it": "I registri del tavolo non sono raggiungibili ora: riprova tra poco.",
                },
            ) from None
