"""JetStream API calls that are made again while JetStream does not answer yet.

A loaded server, or a cluster still electing the leader of a stream or consumer that
was just made (after a node's restart too), leaves an API call unanswered: nats-py
raises a timeout, or a 503 (no responder yet). A service's start making its streams and
consumers — idempotent calls — waits that out instead of failing on one slow answer
(seen in CI: a bots service's start failed on one `stream_info` timeout of a loaded
3-node cluster); a service that gave up would only be restarted to meet the same
cluster. Calls that are not idempotent must not go through here.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import TypeVar

import structlog
from nats.errors import TimeoutError as NatsTimeoutError
from nats.js.errors import ServiceUnavailableError

log = structlog.get_logger(__name__)

T = TypeVar("T")

SETTLE_SECONDS = 60.0
"""How long a call is made again while JetStream does not answer."""
RETRY_SECONDS = 0.5
"""The pause between two attempts."""
UNANSWERED = (NatsTimeoutError, ServiceUnavailableError)
"""What nats-py raises for a call JetStream did not answer (yet)."""


async def settled(
    call: Callable[[], Awaitable[T]], what: str, settle_seconds: float = SETTLE_SECONDS
) -> T:
    """`call()`'s result, the call made again while it goes unanswered, for
    `settle_seconds` at most (then its last error is raised)."""
    deadline = asyncio.get_running_loop().time() + settle_seconds
    while True:
        try:
            return await call()
        except UNANSWERED as error:
            if asyncio.get_running_loop().time() >= deadline:
                raise
            log.warning("JetStream did not answer: trying again", what=what, error=repr(error))
            await asyncio.sleep(RETRY_SECONDS)
