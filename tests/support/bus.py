"""Waiting for a service that reads the bus: "it has handled everything published"."""

from __future__ import annotations

import asyncio

import nats

from kozyr.bus.relay import outbox_backlog
from kozyr.eventstore import EventStore


async def until_handled(
    store: EventStore, nats_url: str, stream: str, durable: str, limit: float = 30
) -> None:
    """Wait (at most `limit` seconds) until every event appended to `store` so far is
    published and the durable consumer `durable` of `stream` has acknowledged every
    message it was to get: the service reading it has handled them all."""
    nc = await nats.connect(nats_url)
    try:
        js = nc.jetstream()
        async with asyncio.timeout(limit):
            while True:
                if not (await outbox_backlog(store))[0]:  # published, then read:
                    info = await js.consumer_info(stream, durable)
                    if not info.num_pending and not info.num_ack_pending:
                        return
                await asyncio.sleep(0.05)
    finally:
        await nc.close()
