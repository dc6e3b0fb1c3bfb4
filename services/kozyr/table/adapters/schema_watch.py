"""Health follows the event store's schema: NOT_SERVING until the database is migrated.

A replica started before the migration Job has run would otherwise report SERVING while
every call fails; load balancers and Kubernetes would route players to it. Instead the
table service checks the schema before it starts serving, reports NOT_SERVING (for its
service and for the whole server) while tables are missing, re-checks every
`interval` seconds, and turns SERVING once the migration has run. Calls that arrive
meanwhile answer UNAVAILABLE with reason SCHEMA_NOT_MIGRATED (kozyr.runtime.outages).
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Sequence

from kozyr.eventstore import StoreUnavailable
from kozyr.eventstore.readiness import missing_tables
from kozyr.runtime import GrpcServer
from kozyr.runtime.logging import get_logger

SCHEMA_RECHECK_SECONDS = 2.0
"""How often a replica waiting for its migration looks again (one tiny query)."""

_log = get_logger("kozyr.table.schema")


class SchemaWatch:
    """Reports the server NOT_SERVING while the event store schema is missing."""

    def __init__(
        self,
        database_url: str,
        server: GrpcServer,
        services: Sequence[str],
        *,
        interval: float = SCHEMA_RECHECK_SECONDS,
    ) -> None:
        self._url = database_url
        self._server = server
        self._services = ("", *services)
        self.interval = interval
        self._task: asyncio.Task[None] | None = None

    async def missing(self) -> tuple[str, ...] | None:
        """The event store tables the database lacks (empty: migrated); None when the
        database cannot be asked (that is for the store's own errors to report)."""
        try:
            return await missing_tables(self._url)
        except StoreUnavailable:
            return None

    async def migrated(self) -> bool:
        """Whether the schema is there; says what is missing in the log when it is not."""
        missing = await self.missing()
        if missing:
            _log.warning(
                "event store schema not migrated: NOT_SERVING until `kozyr migrate` runs",
                missing_tables=list(missing),
            )
        return missing == ()

    async def hold_until_migrated(self, migrated: bool) -> None:
        """After the server started (which reports SERVING): if the schema was missing,
        report NOT_SERVING now and keep checking in the background."""
        if migrated:
            return
        await self._report(serving=False)
        self._task = asyncio.create_task(self._wait_for_migration(), name="schema-watch")

    async def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task

    async def _wait_for_migration(self) -> None:
        while True:
            await asyncio.sleep(self.interval)
            if await self.missing() == ():
                _log.info("event store schema migrated: SERVING")
                await self._report(serving=True)
                return

    async def _report(self, *, serving: bool) -> None:
        if self._server.shutting_down.is_set():
            return  # shutdown owns health from here on (NOT_SERVING for good)
        for service in self._services:
            await self._server.set_serving(service, serving)
