"""The web edge's process: an aiohttp HTTP/1.1 server over `Proxy`, started and stopped
like the services (`start`, `stop`, `run_until_signal`).

Its settings are `WebEdgeSettings` (kozyr.webedge.settings): the backends' targets
(KOZYR_TABLE_TARGET, KOZYR_MATCHMAKING_TARGET, KOZYR_BOTS_TARGET, KOZYR_CLOCK_TARGET;
a backend without one is UNIMPLEMENTED here), KOZYR_GRPC_TLS_CA_FILE for TLS to them,
KOZYR_WEBEDGE_HOST/PORT, KOZYR_WEBEDGE_ALLOWED_ORIGINS, and the services' admission
limits KOZYR_GRPC_MAX_CONCURRENT_CALLS and _STREAMS, which bound the calls and watches
this edge forwards at once.
"""

from __future__ import annotations

import asyncio
from typing import Any

from aiohttp import web

from kozyr.client.channel import channel_options
from kozyr.runtime.logging import get_logger
from kozyr.runtime.metrics import MetricsServer, start_metrics_server
from kozyr.runtime.process import wait_for_signal
from kozyr.webedge import framing
from kozyr.webedge.cors import OriginPolicy
from kozyr.webedge.proxy import MAX_MESSAGE_BYTES, Proxy
from kozyr.webedge.routes import targets_of
from kozyr.webedge.settings import WebEdgeSettings

REQUIRED_SETTINGS = frozenset({"table_target"})
_log = get_logger("kozyr.webedge")


class WebEdge:
    """The gRPC-Web edge: one HTTP server, one gRPC channel per backend."""

    def __init__(self, settings: WebEdgeSettings) -> None:
        self.settings = settings
        self.proxy = Proxy(
            targets_of(settings),
            OriginPolicy.parse(settings.webedge_allowed_origins),
            max_calls=settings.grpc_max_concurrent_calls,
            max_streams=settings.grpc_max_concurrent_streams,
            credentials=settings.channel_credentials(),
            channel_options=_backend_options(),
        )
        # A request is one frame: its prefix and at most MAX_MESSAGE_BYTES, base64'd
        # for grpc-web-text (4 bytes for 3).
        app = web.Application(
            client_max_size=(MAX_MESSAGE_BYTES + framing.HEADER.size) * 4 // 3 + 4
        )
        app.add_routes(self.proxy.routes())
        # A page that goes away cancels its handler, hence its backend call (proxy.py).
        self._runner = web.AppRunner(
            app,
            handler_cancellation=True,
            access_log=None,
            shutdown_timeout=settings.shutdown_grace_seconds,
        )
        self.port: int | None = None
        self._metrics: MetricsServer | None = None

    async def start(self) -> int:
        """Bind and serve; the port (KOZYR_WEBEDGE_PORT, or the one picked for 0)."""
        await self._runner.setup()
        site = web.TCPSite(
            self._runner,
            self.settings.webedge_host,
            self.settings.webedge_port,
        )
        await site.start()
        server = site._server
        assert isinstance(server, asyncio.Server)
        self.port = int(server.sockets[0].getsockname()[1])
        if self.settings.metrics_port is not None:
            self._metrics = start_metrics_server(
                self.settings.metrics_host, self.settings.metrics_port
            )
        _log.info(
            "web edge started",
            address=f"{self.settings.webedge_host}:{self.port}",
            backends=self.proxy.targets,
            metrics_port=self.metrics_port,
        )
        return self.port

    @property
    def metrics_port(self) -> int | None:
        """The bound /metrics port; None without KOZYR_METRICS_PORT."""
        return None if self._metrics is None else self._metrics.port

    async def stop(self) -> None:
        """End the open calls (UNAVAILABLE: the pages' clients call again elsewhere),
        then close the server and the channels; once (a second call does nothing)."""
        if self.proxy.closing.is_set():
            return
        _log.info("web edge stopping", open_calls=self.proxy.in_progress)
        await self.proxy.close(self.settings.shutdown_grace_seconds)
        await self._runner.cleanup()
        if self._metrics is not None:
            await asyncio.to_thread(self._metrics.close)
        _log.info("web edge stopped")

    async def run_until_signal(self) -> None:
        """Serve until SIGTERM or SIGINT, then stop."""
        try:
            await wait_for_signal()
        finally:
            await self.stop()


def _backend_options() -> list[tuple[str, Any]]:
    """The backends' channels: prompt reconnection, no retries (the page's client
    retries what may be retried; retrying here too would multiply the attempts)."""
    return channel_options(retry=False, services=())
