"""What NATS JetStream holds for one table, read back like a downstream service would."""

from __future__ import annotations

import asyncio
import uuid
from dataclasses import dataclass

import asyncpg
import nats

from kozyr.bus.codec import MSG_ID_HEADER
from kozyr.bus.connection import server_list
from kozyr.bus.consumers import DurableConsumer, EventSubscription
from kozyr.bus.settling import settled
from kozyr.bus.streams import jetstream_name
from kozyr.eventstore import PostgresEventStore, RecordedEvent
from kozyr.infra import libpq_dsn
from kozyr.table.adapters.repository import stream_of


@dataclass(frozen=True)
class Published:
    """One JetStream message of the table's subjects."""

    stream_sequence: int
    subject: str
    msg_id: str
    delivered: int
    event: RecordedEvent


RELAY_WAIT_SECONDS = 30.0


async def wait_until_relayed(database_url: str) -> None:
    """Wait for an empty outbox: every appended event has then been stored by JetStream."""
    connection = await asyncpg.connect(libpq_dsn(database_url))
    try:
        async with asyncio.timeout(RELAY_WAIT_SECONDS):
            while True:
                if not await connection.fetchval("SELECT count(*) FROM outbox"):
                    return
                await asyncio.sleep(0.1)
    finally:
        await connection.close()


async def published_events(nats_url: str, subject_root: str, table_id: str) -> list[Published]:
    """Every message on `<root>.table.<table_id>.>`, in stream order, via a durable consumer."""
    return await published_tables(nats_url, subject_root, f"{table_id}.>")


async def published_tables(nats_url: str, subject_root: str, tables: str = ">") -> list[Published]:
    """Every message on `<root>.table.<tables>` (default: every table), in stream order."""
    nc = await nats.connect(server_list(nats_url))
    js = nc.jetstream()
    stream = jetstream_name("table", subject_root)
    spec = DurableConsumer(
        stream=stream,
        durable=f"e2e-{uuid.uuid4().hex[:12]}",
        filter_subjects=(f"{subject_root}.table.{tables}",),
        replicas=1,
    )
    found: list[Published] = []
    try:
        # A cluster still settling after a node's fault may leave the reader's calls
        # unanswered for a while (a timeout, or a 503 while a new consumer's leader is
        # elected): that is not "nothing left", so they are made again (bounded).
        subscription = await settled(lambda: EventSubscription.bind(js, spec), "e2e reader")
        batch = lambda: subscription.fetch(batch=256, max_wait=1.0)  # noqa: E731
        while deliveries := await settled(batch, "e2e reader"):
            for delivery in deliveries:
                message = delivery.message
                found.append(
                    Published(
                        stream_sequence=message.metadata.sequence.stream,
                        subject=message.subject,
                        msg_id=(message.headers or {}).get(MSG_ID_HEADER, ""),
                        delivered=delivery.delivery_count,
                        event=delivery.event,
                    )
                )
                await delivery.ack()
        await subscription.unsubscribe()
        await js.delete_consumer(stream, spec.durable)
    finally:
        await nc.close()
    return found


async def stored_events(database_url: str, table_id: str) -> list[RecordedEvent]:
    """The table's stream as the event store holds it."""
    store = PostgresEventStore(database_url, max_pool_size=1)
    try:
        return await store.read(stream_of(table_id))
    finally:
        await store.close()
