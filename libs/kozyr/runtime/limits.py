"""What a server takes on: admission (load and shutdown) and the caller's deadline.

Both are `CallInterceptor`s that `GrpcServer` installs inside the error mapper, so their
refusals carry the usual ErrorInfo and texts and are logged like any other answer:

    AdmissionInterceptor  UNAVAILABLE (SHUTTING_DOWN) once shutdown has begun;
                          RESOURCE_EXHAUSTED (SERVER_BUSY) beyond the concurrency limits
    DeadlineInterceptor   a unary handler still running when the caller's deadline is
                          about to pass is cancelled and answers DEADLINE_EXCEEDED

Why not grpc's own knobs: grpc core refuses a burst that outgrows its queue of calls
not yet taken by the application with CANCELLED, a code clients do not retry, and
`maximum_concurrent_rpcs` counts watch streams and unary calls alike, so one number
cannot both allow thousands of idle watchers and bound the work in progress. Here the
core queue is made large (`grpc_max_queued_calls`) so that a burst reaches Python, and
Python answers what it cannot take with codes that clients retry.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterable
from typing import Any, ClassVar

from kozyr.runtime.errors import DeadlineExceeded, ResourceExhausted, Unavailable
from kozyr.runtime.interceptors import HEALTH_SERVICE, CallInterceptor, Inner, Stage, service_of
from kozyr.texts import Texts

DEADLINE_MARGIN_SECONDS = 0.05
"""A handler is stopped this long before the caller's deadline, so that the caller gets
the server's answer (and the log says DEADLINE_EXCEEDED) rather than its own timeout."""


class ServerBusy(ResourceExhausted):
    """Too much work in progress right now: unlike a quota, retrying soon is right."""

    retry_pushback_ms: ClassVar[int | None] = None


def server_busy() -> ServerBusy:
    return ServerBusy(
        "SERVER_BUSY",
        Texts(
            en="The service is busy: try again in a moment.",
            ro="Serviciul este ocupat: încearcă din nou într-o clipă.",
            it="Il servizio è occupato: riprova tra un momento.",
        ),
    )


def shutting_down() -> Unavailable:
    return Unavailable(
        "SHUTTING_DOWN",
        Texts(
            en="This server is shutting down: try again (another one will answer).",
            ro="Acest server se oprește: încearcă din nou (va răspunde altul).",
            it="Questo server si sta spegnendo: riprova (risponderà un altro).",
        ),
    )


def deadline_exceeded() -> DeadlineExceeded:
    return DeadlineExceeded(
        "DEADLINE_EXCEEDED",
        Texts(
            en="The call did not finish before its deadline.",
            ro="Apelul nu s-a încheiat înainte de termenul său.",
            it="La chiamata non è terminata entro la scadenza.",
        ),
    )


class _Gate:
    """Counts the calls of one kind in progress and refuses those over its limit."""

    def __init__(self, limit: int, closing: asyncio.Event, on_change: Callable[[], None]) -> None:
        self.limit = limit
        self.open = 0
        self.last_arrival = 0.0
        """When (event loop time) the latest call arrived, admitted or not."""
        self._closing = closing
        self._on_change = on_change

    async def stage(self, inner: Inner, method: str, request: Any, context: Any) -> Any:
        self.last_arrival = asyncio.get_running_loop().time()
        if self._closing.is_set():
            raise shutting_down()
        if self.open >= self.limit:
            raise server_busy()
        self.open += 1
        self._on_change()
        try:
            return await inner(request, context)
        finally:
            self.open -= 1
            self._on_change()


class AdmissionInterceptor(CallInterceptor):
    """Admits a call only while the server can take it.

    Once `closing` is set (shutdown began), every new call is refused with UNAVAILABLE,
    which clients retry — on another replica, behind a balancer — rather than being
    cancelled by the stopping server. Unary calls beyond `max_calls` and streams beyond
    `max_streams` in progress are refused with RESOURCE_EXHAUSTED. Health checks are
    never refused or counted: probes must see NOT_SERVING during shutdown.
    """

    def __init__(
        self,
        *,
        max_calls: int,
        max_streams: int,
        closing: asyncio.Event,
        exempt_services: Iterable[str] = (HEALTH_SERVICE,),
    ) -> None:
        self._exempt = frozenset(exempt_services)
        self._idle = asyncio.Event()
        self._idle.set()
        self._calls = _Gate(max_calls, closing, self._check_idle)
        self._streams = _Gate(max_streams, closing, self._check_idle)

    @property
    def in_progress(self) -> int:
        """Calls and streams admitted and not finished yet."""
        return self._calls.open + self._streams.open

    async def wait_idle(self) -> None:
        """Return once no admitted call is in progress."""
        self._check_idle()
        await self._idle.wait()

    async def wait_quiet(self, quiet_seconds: float) -> None:
        """Return once no call is in progress and none has arrived for `quiet_seconds`.

        At shutdown, the end of the last call is not yet the time to stop: a client
        that has just read the last view of its watch stream may be sending a move.
        Refused here, it gets UNAVAILABLE; arriving once grpc's stop has begun, it
        would be cancelled. The server stops once callers have gone quiet.
        """
        loop = asyncio.get_running_loop()
        while True:
            await self.wait_idle()
            last = max(self._calls.last_arrival, self._streams.last_arrival)
            silent_for = loop.time() - last
            if silent_for >= quiet_seconds and self.in_progress == 0:
                return
            await asyncio.sleep(max(quiet_seconds - silent_for, 0.001))

    def _check_idle(self) -> None:
        if self.in_progress == 0:
            self._idle.set()
        else:
            self._idle.clear()

    def stage_for(self, method: str, handler: Any) -> Stage | None:
        if service_of(method) in self._exempt:
            return None
        streaming = handler.request_streaming or handler.response_streaming
        return (self._streams if streaming else self._calls).stage


class DeadlineInterceptor(CallInterceptor):
    """Bounds every unary handler by the caller's deadline (`context.time_remaining()`).

    Without it a handler waiting on a hung dependency runs on after the caller gave up,
    holding a database connection; stopped here just before the deadline, it is
    cancelled (the event store closes a connection cancelled mid-statement) and the
    caller gets DEADLINE_EXCEEDED from the server. Streams are left alone: a watch runs
    until the caller ends it. Calls without a deadline are not bounded here.
    """

    def __init__(self, margin_seconds: float = DEADLINE_MARGIN_SECONDS) -> None:
        self._margin = margin_seconds

    def stage_for(self, method: str, handler: Any) -> Stage | None:
        return None if handler.response_streaming else self.stage

    async def stage(self, inner: Inner, method: str, request: Any, context: Any) -> Any:
        remaining = context.time_remaining()
        if remaining is None:
            return await inner(request, context)
        scope = asyncio.timeout(max(0.0, remaining - self._margin))
        try:
            async with scope:
                return await inner(request, context)
        except TimeoutError:
            if scope.expired():
                raise deadline_exceeded() from None
            raise
