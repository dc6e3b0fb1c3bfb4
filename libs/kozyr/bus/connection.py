"""Connections that come and go: log each state change once, retry without a traceback.

During an outage a NATS client retries every few seconds; logging every attempt (or
letting nats-py print a traceback each time) buries the one line an operator needs:
"NATS unreachable since …" and later "NATS reachable again".
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import Any

import nats
from nats.aio.client import Client as NatsClient


def server_list(servers: str | Sequence[str]) -> list[str]:
    """nats-py's `servers=`: every URL of "nats://a:4222,nats://b:4222" (a cluster, as
    KOZYR_NATS_URL names it) or of a list; nats-py would take the string as one URL."""
    given = servers.split(",") if isinstance(servers, str) else servers
    return [server.strip() for server in given if server.strip()]


CALL_TIMEOUT_SECONDS = 1.0
"""How long a gRPC call (the clock's Heartbeat, GetPresence) waits on one NATS request:
far above a healthy answer (milliseconds, a quorum write on a cluster included), far
below nats-py's 5 s, so an outage answers UNAVAILABLE promptly (the runtime's edge maps
the timeout) instead of holding the caller."""


def require_connected(nc: NatsClient) -> None:
    """Fail at once, with the error the runtime's edge maps to UNAVAILABLE, while the
    client is not connected: nats-py would buffer a request made while it reconnects
    and let it wait out its whole timeout."""
    if nc.is_closed:
        raise nats.errors.ConnectionClosedError
    if not nc.is_connected:
        raise nats.errors.ConnectionReconnectingError


class ConnectionState:
    """Tracks one dependency's state and logs a warning / info only when it changes."""

    def __init__(self, logger: Any, what: str) -> None:
        self._log = logger
        self._what = what
        self.up = False
        self._down_logged = False

    def failed(self, error: BaseException | str) -> None:
        """A connection attempt or the connection failed: warn if it was not known down."""
        self.up = False
        if not self._down_logged:
            reason = error if isinstance(error, str) else f"{type(error).__name__}: {error}"
            self._log.warning(f"{self._what} unreachable", error=reason)
            self._down_logged = True

    def succeeded(self) -> None:
        """Connected: say so once if it had been reported down."""
        if self._down_logged:
            self._log.info(f"{self._what} reachable again")
        self.up = True
        self._down_logged = False

    def nats_callbacks(self) -> dict[str, Any]:
        """nats.connect keyword callbacks that report through this state (no tracebacks).

        No disconnected callback: a deliberate close disconnects too, and a real
        outage shows as the reconnect attempts' errors.
        """

        async def error_cb(error: Exception) -> None:
            self.failed(error)

        async def reconnected_cb() -> None:
            self.succeeded()

        return {
            "error_cb": error_cb,
            "reconnected_cb": reconnected_cb,
        }


async def connect_when_reachable(
    servers: str | Sequence[str],
    *,
    name: str,
    state: ConnectionState,
    attempt_timeout: float = 5.0,
    retry_seconds: float = 1.0,
) -> NatsClient:
    """Connect to NATS, retrying until a server answers (for a background task).

    Once connected the client reconnects by itself, forever. A service that can work
    without NATS starts at once and calls this from a task instead of blocking on it.
    """
    while True:
        try:
            client = await asyncio.wait_for(
                nats.connect(
                    servers=server_list(servers),
                    name=name,
                    allow_reconnect=True,
                    max_reconnect_attempts=-1,
                    reconnect_time_wait=1,
                    connect_timeout=2,
                    **state.nats_callbacks(),
                ),
                timeout=attempt_timeout,
            )
        except (OSError, TimeoutError, nats.errors.Error) as error:
            state.failed(error)
            await asyncio.sleep(retry_seconds)
            continue
        state.succeeded()
        return client
