"""What every kozyr client channel shares: the bearer token, the language, gRPC's own
retries of the answers that mean "not now", and closing.

`TableClient` and `ClockClient` are `ServiceClient`s; each adds its stub and calls.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from types import TracebackType
from typing import Any, ClassVar, Self, TypedDict

import grpc

from kozyr.runtime.interceptors import call_metadata
from kozyr.runtime.tracing import TraceContextClientInterceptor

RETRYABLE_CODES = ("UNAVAILABLE", "RESOURCE_EXHAUSTED")
"""What the service answers when it cannot take a call *now* (overloaded, shutting down,
database unreachable): the same request may be sent again — a write that did reach the
log before the failure is answered by its request id, never applied twice."""


def retry_service_config(*services: str) -> dict[str, Any]:
    """gRPC's own retries (a service config) for every method of `services`.

    gRPC waits a random time up to the backoff (0.2 s, 0.5 s, 1.25 s, 3 s) before each
    new attempt, so a burst refused at once comes back spread out; five attempts at
    most, all within the call's own deadline; a stream is retried only until its first
    response.
    """
    return {
        "methodConfig": [
            {
                "name": [{"service": service} for service in services],
                "retryPolicy": {
                    "maxAttempts": 5,
                    "initialBackoff": "0.2s",
                    "maxBackoff": "3s",
                    "backoffMultiplier": 2.5,
                    "retryableStatusCodes": list(RETRYABLE_CODES),
                },
            }
        ]
    }


RECONNECT_OPTIONS: list[tuple[str, Any]] = [
    ("grpc.initial_reconnect_backoff_ms", 500),
    ("grpc.max_reconnect_backoff_ms", 5_000),
]
"""How soon a channel tries again to reach a service that went away: from 0.5 s up to
5 s between attempts (gRPC adds ±20 % jitter). gRPC's default grows to 120 s, so a
caller that kept trying through a 40 s restart of the table service (measured) still
failed for 29 s after the service was back: a bots or clock replica would sit out a
rolling deploy. 5 s keeps a thousand clients of a restarted service spread out without
leaving any of them out for long."""


def channel_options(*, retry: bool = True, services: Sequence[str]) -> list[tuple[str, Any]]:
    """Options of a client channel: prompt reconnection, and the retry policy for
    `services` (unless `retry=False`)."""
    if not retry:
        return [*RECONNECT_OPTIONS, ("grpc.enable_retries", 0)]
    config = json.dumps(retry_service_config(*services))
    return [*RECONNECT_OPTIONS, ("grpc.enable_retries", 1), ("grpc.service_config", config)]


class ChannelOptions(TypedDict, total=False):
    """The keyword options of every client (`**options: Unpack[ChannelOptions]`)."""

    language: str | None
    retry: bool
    interceptors: Sequence[grpc.aio.ClientInterceptor]
    credentials: grpc.ChannelCredentials | None


class ServiceClient:
    """One channel to a kozyr service (`SERVICE`, its proto full name), acting with one
    token; calls refused with UNAVAILABLE or RESOURCE_EXHAUSTED are retried by gRPC
    unless `retry=False`. Every call carries the current trace context. `interceptors`:
    more grpc.aio client interceptors of the channel (the bots service records its inputs
    with one in tests). `credentials`: TLS (`Settings.channel_credentials()`); None: a
    plain channel."""

    SERVICE: ClassVar[str]

    def __init__(
        self,
        target: str,
        token: str | None,
        *,
        language: str | None = None,
        retry: bool = True,
        interceptors: Sequence[grpc.aio.ClientInterceptor] = (),
        credentials: grpc.ChannelCredentials | None = None,
    ) -> None:
        self.target = target
        options = channel_options(retry=retry, services=(self.SERVICE,))
        chained = [TraceContextClientInterceptor(), *interceptors]
        self._channel = (
            grpc.aio.insecure_channel(target, options=options, interceptors=chained)
            if credentials is None
            else grpc.aio.secure_channel(target, credentials, options, interceptors=chained)
        )
        self.metadata = call_metadata(token=token, language=language)

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        await self.close()

    async def close(self) -> None:
        await self._channel.close()
