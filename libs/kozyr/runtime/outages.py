"""Dependency outages at the gRPC edge: one mapping, the same in every service.

A service whose database is down (stopped, failing over, refusing connections, hung
past its timeouts) must answer UNAVAILABLE — "retry later", which the client SDK
retries — never INTERNAL, and never a text of its own per service. The error stage
(`kozyr.runtime.interceptors.ErrorInterceptor`) asks `dependency_outage(error)` about
every exception no handler typed, before it would call it a bug:

- the event store's `StoreUnavailable` (connection refused or lost, pool or statement
  timeout, a server shutting down) → UNAVAILABLE, reason STORE_UNAVAILABLE;
- its `SchemaNotMigrated` → UNAVAILABLE, reason SCHEMA_NOT_MIGRATED;
- a NATS outage (no answer in time, no server, the connection closed or being
  re-established, JetStream's 503) → UNAVAILABLE, reason BUS_UNAVAILABLE;
- a raw driver error that escaped the store's own translation (asyncpg connection
  errors, SQLAlchemy's OperationalError/InterfaceError, a SQLSTATE of class 08, 53,
  57P...) → what `kozyr.eventstore.dberrors.translate` makes of it, mapped as above.

A server given a probe of its store (`GrpcServer(store_probe=store.check_writable)`)
also reports NOT_SERVING from the first outage a call meets until the probe passes
again (`OutageWatch`): load balancers and Kubernetes send the calls elsewhere while
this replica cannot append, and back once it reconnected, without a restart.
"""

from __future__ import annotations

import asyncio
import contextlib
import sys
from collections.abc import Awaitable, Callable

from kozyr.runtime.errors import Unavailable
from kozyr.runtime.logging import get_logger
from kozyr.texts import Texts

STORE_UNAVAILABLE = "STORE_UNAVAILABLE"
SCHEMA_NOT_MIGRATED = "SCHEMA_NOT_MIGRATED"
BUS_UNAVAILABLE = "BUS_UNAVAILABLE"

STORE_UNAVAILABLE_MESSAGES = Texts(
    en="The records cannot be reached right now: try again soon.",
    ro="Înregistrările nu pot fi accesate acum: încearcă din nou curând.",
    it="I registri non sono raggiungibili ora: riprova tra poco.",
)
SCHEMA_NOT_MIGRATED_MESSAGES = Texts(
    en="The service is not ready (schema not migrated): try again soon.",
    ro="Serviciul nu este pregătit (schema nu este migrată): încearcă din nou curând.",
    it="Il servizio non è pronto (schema non migrato): riprova tra poco.",
)

_DATABASE_MODULES = ("kozyr.eventstore", "asyncpg", "sqlalchemy")
FIRST_PROBE_SECONDS = 0.1
LAST_PROBE_SECONDS = 2.0
"""The probe's backoff: doubling from the first delay up to the last, then every last."""

_log = get_logger("kozyr.outages")


def store_unavailable() -> Unavailable:
    """What a caller hears while the service's database cannot be reached."""
    return Unavailable(STORE_UNAVAILABLE, STORE_UNAVAILABLE_MESSAGES)


def schema_not_migrated() -> Unavailable:
    """The database has no event store tables yet: the operators must run the migration."""
    return Unavailable(SCHEMA_NOT_MIGRATED, SCHEMA_NOT_MIGRATED_MESSAGES)


def dependency_outage(error: BaseException) -> Unavailable | None:
    """The UNAVAILABLE a dependency's outage is answered with; None: not an outage."""
    if is_bus_outage(error):
        return bus_unavailable()
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


_BUS_OUTAGES = {
    "nats.errors": (
        "TimeoutError", "NoServersError", "NoRespondersError", "ConnectionClosedError",
        "ConnectionReconnectingError", "StaleConnectionError", "OutboundBufferLimitError",
    ),
    "nats.js.errors": ("ServiceUnavailableError",),
}  # fmt: skip
"""The NATS client's errors that mean "the bus cannot be reached now", not a bug: no
answer in time, no server, the connection closed or being re-established, and
JetStream's own 503 (a stream without a leader, the meta group electing one)."""


def is_bus_outage(error: BaseException) -> bool:
    """True for a NATS error of `_BUS_OUTAGES`. The classes are looked up among the
    modules already loaded: a process that never imported nats cannot raise them, and
    the runtime does not load nats for the processes that do not use it."""
    for module_name, names in _BUS_OUTAGES.items():
        module = sys.modules.get(module_name)
        if module is not None and isinstance(error, tuple(getattr(module, n) for n in names)):
            return True
    return False


BUS_UNAVAILABLE_MESSAGES = Texts(
    en="The game's messaging cannot be reached right now: try again soon.",
    ro="Sistemul de mesaje al jocului nu poate fi accesat acum: încearcă din nou curând.",
    it="Il sistema di messaggi del gioco non è raggiungibile ora: riprova tra poco.",
)


def bus_unavailable() -> Unavailable:
    """What a caller gets when a call needed NATS during its outage: UNAVAILABLE, which
    clients retry, rather than INTERNAL (a bug) after waiting out nats-py's timeout."""
    return Unavailable(BUS_UNAVAILABLE, BUS_UNAVAILABLE_MESSAGES)


Probe = Callable[[], Awaitable[None]]
"""Returns when the dependency serves again, raises while it does not."""


class OutageWatch:
    """NOT_SERVING from a store outage met by a call until `probe` passes, then SERVING.

    One recovery at a time: the outages met meanwhile (every call fails alike) only
    confirm it. The probe is retried with a doubling delay (FIRST_PROBE_SECONDS up to
    LAST_PROBE_SECONDS), so a database that is down for long is not hammered, and one
    that is back is noticed within a couple of seconds. `report(serving)` sets health.
    """

    def __init__(
        self,
        probe: Probe,
        report: Callable[[bool], Awaitable[None]],
        *,
        first_delay: float = FIRST_PROBE_SECONDS,
        last_delay: float = LAST_PROBE_SECONDS,
    ) -> None:
        self._probe = probe
        self._report = report
        self._first = first_delay
        self._last = last_delay
        self._task: asyncio.Task[None] | None = None

    @property
    def recovering(self) -> bool:
        """Whether an outage was met and the probe has not passed yet."""
        return self._task is not None and not self._task.done()

    def outage(self, error: Unavailable) -> None:
        """A call met `error`: start the recovery unless one runs already."""
        if error.reason != STORE_UNAVAILABLE or self.recovering:
            return
        self._task = asyncio.create_task(self._recover(), name="outage-watch")

    async def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task

    async def _recover(self) -> None:
        _log.warning("store unavailable: NOT_SERVING until it answers again")
        await self._report(False)
        delay = self._first
        while True:
            await asyncio.sleep(delay)
            try:
                await self._probe()
            except Exception as error:
                _log.info("store still unavailable", error=str(error), next_probe_seconds=delay)
                delay = min(delay * 2, self._last)
                continue
            _log.info("store available again: SERVING")
            await self._report(True)
            return
