"""The gRPC server every kozyr service runs: health, reflection, interceptors, clean shutdown.

    server = GrpcServer(settings, [ServiceSpec(TABLE_SERVICE, register_table)], auth=policy)
    await server.run_until_signal()        # or: await serve(settings, [...], auth=policy)

Start-up binds `settings.grpc_host:grpc_port` (port 0 picks a free port, reported by
`server.port`), marks every service SERVING and enables reflection. On SIGTERM/SIGINT:

1. `shutting_down` is set and health turns NOT_SERVING for every service, so load
   balancers and Kubernetes stop routing new calls here; from now on every new call
   (health checks aside) is refused with UNAVAILABLE, which clients retry;
2. "before stop" hooks run (e.g. stop pulling NATS messages that would start new work);
3. the calls in flight get what is left of `grace` seconds to finish, while the server
   still answers (and refuses) new calls, until no call has arrived for a moment
   (`SHUTDOWN_QUIET_SECONDS`: a client that has just read its last view may be
   sending a move);
4. `server.stop(...)` with whatever grace is left, which cancels what is still running;
5. "after stop" hooks run, newest first (e.g. drain NATS, close the database pool).

Long-lived streams (WatchTable) should end when `shutting_down` is set, otherwise they
hold shutdown for the whole grace period.

Load is bounded by settings (README, "Configuration"): `grpc_max_concurrent_calls` unary
calls and `grpc_max_concurrent_streams` streams at once, more are refused with
RESOURCE_EXHAUSTED; a burst waits in grpc's queue (`grpc_max_queued_calls`) for Python to
admit or refuse it, instead of being cancelled by grpc. Unary handlers are bounded by the
caller's deadline (DEADLINE_EXCEEDED). See `kozyr.runtime.limits`.
"""

from __future__ import annotations

import asyncio
import contextlib
import signal
from collections.abc import Awaitable, Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any

import grpc
from grpc_health.v1 import health, health_pb2, health_pb2_grpc

from kozyr.runtime.auth import TokenVerifier
from kozyr.runtime.interceptors import (
    HEALTH_SERVICE,
    QUIET_METHODS,
    AuthInterceptor,
    AuthPolicy,
    CallInterceptor,
    Edge,
    ErrorInterceptor,
    LoggingInterceptor,
)
from kozyr.runtime.limits import AdmissionInterceptor, DeadlineInterceptor
from kozyr.runtime.logging import get_logger
from kozyr.runtime.metrics import MetricsServer, start_metrics_server
from kozyr.runtime.outages import OutageWatch, Probe
from kozyr.runtime.reflection import enable_reflection
from kozyr.runtime.settings import Settings
from kozyr.runtime.tracing import TracingInterceptor, configure_tracing

ShutdownHook = Callable[[], Awaitable[None]]
SHUTDOWN_QUIET_SECONDS = 0.2
"""At shutdown, grpc's stop waits until no call has arrived for this long (within the
grace period): calls that arrive after it begins are cancelled, not refused."""
_log = get_logger("kozyr.server")


@dataclass(frozen=True)
class ServiceSpec:
    """One gRPC service to host: its full name and how to add its servicer to a server.

    `register` is typically `lambda server: table_pb2_grpc.add_TableServiceServicer_to_server(
    servicer, server)`; `name` is the proto full name ("kozyr.table.v1.TableService"),
    used for health and reflection.
    """

    name: str
    register: Callable[[grpc.aio.Server], None]


def service_full_name(pb2_module: Any, service: str) -> str:
    """The proto full name of a service of a generated module (for ServiceSpec.name)."""
    return str(pb2_module.DESCRIPTOR.services_by_name[service].full_name)


class GrpcServer:
    """A grpc.aio server with the kozyr edge: logging, error mapping, auth, health, reflection.

    Authentication is on by default (every method needs a valid token, any role): pass an
    `AuthPolicy` to open methods or restrict roles. The token verifier comes from the
    settings (KOZYR_JWT_ALGORITHM / KOZYR_JWT_KEY) unless one is given; a missing key is a
    `SettingsError` here, at construction, not at the first call.
    """

    def __init__(
        self,
        settings: Settings,
        services: Sequence[ServiceSpec],
        *,
        auth: AuthPolicy | None = None,
        verifier: TokenVerifier | None = None,
        interceptors: Sequence[CallInterceptor] = (),
        options: Sequence[tuple[str, Any]] = (),
        quiet_methods: Iterable[str] = QUIET_METHODS,
        store_probe: Probe | None = None,
    ) -> None:
        self.settings = settings
        self.services = tuple(services)
        policy = auth or AuthPolicy()
        if verifier is None and not policy.everything_public:
            verifier = settings.token_verifier()
        self.shutting_down = asyncio.Event()
        """Set when shutdown begins: streaming handlers should finish, new calls are refused."""
        self.admission = AdmissionInterceptor(
            max_calls=settings.grpc_max_concurrent_calls,
            max_streams=settings.grpc_max_concurrent_streams,
            closing=self.shutting_down,
        )
        configure_tracing(settings.service_name, settings.otlp_endpoint)
        self.outages = OutageWatch(store_probe, self._report_health) if store_probe else None
        """NOT_SERVING while the store is out (`kozyr.runtime.outages`), with a probe."""
        self._interceptors: list[CallInterceptor] = [
            TracingInterceptor(),
            LoggingInterceptor(quiet_methods=quiet_methods),
            ErrorInterceptor(self.outages.outage if self.outages else None),
            self.admission,
            DeadlineInterceptor(settings.grpc_deadline_margin_seconds),
            AuthInterceptor(policy, verifier),
            *interceptors,
        ]
        self._options = _server_options(settings, options)
        self.health = health.aio.HealthServicer()
        self._stopped = asyncio.Event()
        self._server: grpc.aio.Server | None = None
        self._metrics: MetricsServer | None = None
        self._before_stop: list[ShutdownHook] = []
        self._after_stop: list[ShutdownHook] = []
        self.port: int | None = None
        """The bound gRPC port, known after `start()`."""

    # ----------------------------------------------------------------- lifecycle

    @property
    def service_names(self) -> list[str]:
        return [spec.name for spec in self.services]

    @property
    def metrics_port(self) -> int | None:
        return self._metrics.port if self._metrics else None

    def add_shutdown_hook(self, hook: ShutdownHook, *, before_stop: bool = False) -> None:
        """Run `hook` at shutdown: before `server.stop` or (default) after it, newest first."""
        (self._before_stop if before_stop else self._after_stop).append(hook)

    async def start(self) -> int:
        """Bind, start serving and mark every service SERVING; returns the bound port."""
        if self._server is not None:
            raise RuntimeError("server already started")
        server = grpc.aio.server(interceptors=[Edge(self._interceptors)], options=self._options)
        for spec in self.services:
            spec.register(server)
        health_pb2_grpc.add_HealthServicer_to_server(self.health, server)
        enable_reflection([*self.service_names, HEALTH_SERVICE], server)
        self.port = _bind(
            server,
            self.settings.grpc_host,
            self.settings.grpc_port,
            self.settings.server_credentials(),
        )
        self._server = server
        await server.start()
        for name in ["", *self.service_names]:
            await self.health.set(name, health_pb2.HealthCheckResponse.SERVING)
        if self.settings.metrics_port is not None:
            self._metrics = start_metrics_server(
                self.settings.metrics_host, self.settings.metrics_port
            )
        _log.info(
            "grpc server started",
            address=f"{self.settings.grpc_host}:{self.port}",
            services=self.service_names,
            metrics_port=self.metrics_port,
        )
        return self.port

    async def set_serving(self, service: str, serving: bool) -> None:
        """Report a service (or "" for the whole server) SERVING or NOT_SERVING."""
        status = (
            health_pb2.HealthCheckResponse.SERVING
            if serving
            else health_pb2.HealthCheckResponse.NOT_SERVING
        )
        await self.health.set(service, status)

    async def _report_health(self, serving: bool) -> None:
        """Every service (and the whole server) SERVING or NOT_SERVING, unless shutting
        down: shutdown owns health from then on (NOT_SERVING for good)."""
        if self.shutting_down.is_set():
            return
        for name in ["", *self.service_names]:
            await self.set_serving(name, serving)

    async def stop(self, grace: float | None = None) -> None:
        """Shut down as described in the module docstring; safe to call more than once."""
        if self.shutting_down.is_set():
            await self._stopped.wait()
            return
        self.shutting_down.set()
        grace = self.settings.shutdown_grace_seconds if grace is None else grace
        _log.info("grpc server shutting down", grace_seconds=grace)
        try:
            if self.outages is not None:
                await self.outages.stop()
            await self.health.enter_graceful_shutdown()
            await _run_hooks(self._before_stop, grace)
            if self._server is not None:
                await self._server.stop(await self._drain(grace))
            await _run_hooks(list(reversed(self._after_stop)), grace)
            if self._metrics is not None:
                await asyncio.to_thread(self._metrics.close)
        finally:
            self._stopped.set()
            _log.info("grpc server stopped")

    async def _drain(self, grace: float) -> float:
        """Let the calls in flight finish (new ones are refused); returns the grace left."""
        loop = asyncio.get_running_loop()
        started = loop.time()
        if grace > 0:
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(grace):
                    await self.admission.wait_quiet(SHUTDOWN_QUIET_SECONDS)
        return max(0.0, grace - (loop.time() - started))

    async def wait_for_termination(self) -> None:
        """Return once `stop()` has completed."""
        await self._stopped.wait()

    async def run_until_signal(
        self, signals: Iterable[signal.Signals] = (signal.SIGTERM, signal.SIGINT)
    ) -> None:
        """Start (if needed), serve until one of `signals` arrives, then stop gracefully."""
        loop = asyncio.get_running_loop()
        received = asyncio.Event()
        installed = list(signals)
        for sig in installed:
            loop.add_signal_handler(sig, _on_signal, sig, received)
        try:
            if self._server is None:
                await self.start()
            stop_requested = asyncio.ensure_future(received.wait())
            stopped = asyncio.ensure_future(self._stopped.wait())
            await asyncio.wait({stop_requested, stopped}, return_when=asyncio.FIRST_COMPLETED)
            stop_requested.cancel()
            stopped.cancel()
            await self.stop()
        finally:
            for sig in installed:
                loop.remove_signal_handler(sig)


def _on_signal(sig: signal.Signals, received: asyncio.Event) -> None:
    if received.is_set():
        _log.warning("signal received again: already shutting down", signal=sig.name)
    else:
        _log.info("signal received: shutting down", signal=sig.name)
    received.set()


def _server_options(
    settings: Settings, extra: Sequence[tuple[str, Any]]
) -> tuple[tuple[str, Any], ...]:
    """grpc's channel arguments: the queue of calls not yet taken by Python, then `extra`.

    grpc's default queue (1,000, dropping at random up to 3,000) cancels a burst's
    surplus with CANCELLED before any interceptor sees it; one hard limit, large enough
    for any burst Python can refuse in time, lets the admission limits answer instead.
    """
    options = {
        "grpc.server.max_pending_requests": settings.grpc_max_queued_calls,
        "grpc.server.max_pending_requests_hard_limit": settings.grpc_max_queued_calls,
    }
    options.update(dict(extra))
    return tuple(options.items())


def _bind(server: grpc.aio.Server, host: str, port: int, tls: grpc.ServerCredentials | None) -> int:
    """Bind to host:port — with TLS only, when the settings give the server credentials."""
    address = f"[{host}]:{port}" if ":" in host else f"{host}:{port}"
    try:
        if tls is None:
            bound = int(server.add_insecure_port(address))
        else:
            bound = int(server.add_secure_port(address, tls))
    except RuntimeError as error:
        raise OSError(f"cannot bind the gRPC server to {address}: {error}") from None
    if bound == 0:
        raise OSError(f"cannot bind the gRPC server to {address}")
    return bound


async def _run_hooks(hooks: Sequence[ShutdownHook], limit_seconds: float) -> None:
    """Run hooks one by one, each bounded by the limit; a failing hook does not stop the rest."""
    for hook in hooks:
        try:
            async with asyncio.timeout(limit_seconds or None):
                await hook()
        except Exception:
            _log.exception("shutdown hook failed", hook=getattr(hook, "__qualname__", repr(hook)))


async def serve(
    settings: Settings,
    services: Sequence[ServiceSpec],
    *,
    auth: AuthPolicy | None = None,
    shutdown_hooks: Sequence[ShutdownHook] = (),
    on_started: Callable[[GrpcServer], Awaitable[None]] | None = None,
) -> None:
    """Host `services` until SIGTERM/SIGINT, then shut down gracefully (a service's main).

    `on_started` runs once the port is bound (e.g. to start background workers and
    register their shutdown hooks on the server).
    """
    server = GrpcServer(settings, services, auth=auth)
    for hook in shutdown_hooks:
        server.add_shutdown_hook(hook)
    await server.start()
    if on_started is not None:
        await on_started(server)
    await server.run_until_signal()
