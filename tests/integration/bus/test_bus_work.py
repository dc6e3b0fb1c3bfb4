"""The message worker (kozyr.bus.work) on a real JetStream: how it stops."""

from __future__ import annotations

import asyncio

import nats
import pytest
from nats.aio.msg import Msg
from nats.errors import DrainTimeoutError

from kozyr.bus.streams import TABLE_CATEGORIES, ensure_event_streams
from kozyr.bus.work import MessageWorker
from tests.integration.bus.test_bus_consumers import publish_events, spec_for

pytestmark = pytest.mark.integration

DRAIN_TIMEOUT = 5
"""Seconds nats-py's drain waits for the subscriptions before giving up: a service's
whole shutdown grace is of this order."""


async def test_a_stopped_worker_leaves_the_connection_nothing_to_drain(
    nats_url: str, subject_root: str
) -> None:
    """A service stops its workers, then drains its connection. Messages that reached a
    worker's pull subscription after its last fetch sit in a queue nobody reads: unless
    the worker leaves the subscription, the drain waits on them until it times out, and
    every SIGTERM of bots, clock or matchmaking took its whole grace period. An idle
    worker's fetches leave such messages: the server's end of an expired pull request
    (status 408) arrives after the client stopped waiting for it."""
    errors: list[Exception] = []

    async def record(error: Exception) -> None:
        errors.append(error)

    nc = await nats.connect(nats_url, drain_timeout=DRAIN_TIMEOUT, error_cb=record)
    js = nc.jetstream()
    await ensure_event_streams(js, subject_root, TABLE_CATEGORIES)
    handled: list[str] = []
    some_handled = asyncio.Event()

    async def handle(message: Msg) -> None:
        handled.append(message.subject)
        if len(handled) >= 200:
            some_handled.set()

    worker = MessageWorker(js, spec_for(subject_root), handle, concurrency=4, max_wait=0.1)
    await worker.start()
    await publish_events(js, subject_root, ["Moved"] * 200)
    async with asyncio.timeout(30):
        await some_handled.wait()
    async with asyncio.timeout(30):  # idle fetches expire; their ends arrive late
        while not worker._subscription or not worker._subscription.pending_msgs:  # noqa: ASYNC110 — a queue's length has no event
            await asyncio.sleep(0.02)
    await worker.stop()
    async with asyncio.timeout(DRAIN_TIMEOUT + 10):
        await nc.drain()
    assert not [e for e in errors if isinstance(e, DrainTimeoutError)], errors
    assert nc.is_closed
