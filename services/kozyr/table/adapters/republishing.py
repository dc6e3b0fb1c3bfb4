"""Rebuilding the bus from the log: PostgreSQL is the source of truth, JetStream a copy.

When a JetStream stream is lost (a disk, a deleted stream, a new cluster), `republish`
publishes the log again: every event after a global position on its subject with
`Nats-Msg-Id` = its event id, and every table's public messages computed again from
its log exactly as the table service computed them at each append (the same fold and
the same `public_events`). A public message's id is then derived from the append's
first event id and its index, so republishing twice stores each once (within the
streams' duplicate window). Consumers cope with what they saw before: they act through
idempotent calls (the clock's `ExpireTurn` per turn, the bots' request ids, ratings per
table). docs/operations.md, "Rebuilding the bus".
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from nats.js import JetStreamContext

from kozyr.bus.codec import MSG_ID_HEADER, STREAM_HEADER, TYPE_HEADER, encode_event, event_headers
from kozyr.bus.streams import EVERY_CATEGORY, ensure_event_streams
from kozyr.bus.subjects import PUBLIC_CHANNEL, message_subject, subject_for
from kozyr.eventstore.model import EventStore, RecordedEvent
from kozyr.table.adapters.public_wire import encode
from kozyr.table.adapters.repository import STREAM_PREFIX, deadline_of
from kozyr.table.domain import model
from kozyr.table.domain.model import Table
from kozyr.table.domain.public import public_events

BATCH = 1_000


@dataclass(frozen=True, slots=True)
class PublicMessage:
    """A public table event as the relay publishes it."""

    message_id: str
    stream: str
    type: str
    body: bytes
    after_global: int
    """The global position of its append's last event."""


@dataclass(slots=True)
class Republished:
    events: int = 0
    messages: int = 0


def appends(events: Sequence[RecordedEvent]) -> Iterator[list[RecordedEvent]]:
    """A stream's events grouped by the append that wrote them (one request, one
    transaction: the same request id and the same recording time)."""
    block: list[RecordedEvent] = []
    for event in events:
        if block and _append_key(block[0]) != _append_key(event):
            yield block
            block = []
        block.append(event)
    if block:
        yield block


def _append_key(event: RecordedEvent) -> tuple[Any, Any]:
    return event.metadata.get("request_id"), event.recorded_at


def public_messages(events: Sequence[RecordedEvent]) -> list[PublicMessage]:
    """A table stream's public messages, append by append, from its whole log."""
    table: Table | None = None
    found: list[PublicMessage] = []
    for block in appends(events):
        before, decoded = table, []
        for event in block:
            event_data: Any = model.decode(table, event.type, event.data)
            table = model.apply(table, event_data, deadline_of(event), event.recorded_at)
            decoded.append(event_data)
        assert table is not None
        expired = (
            before is not None
            and block[0].metadata.get("request_id") == f"expire-turn-{before.turn.number}"
        )
        public = public_events(before, table, decoded, deadline_of(block[-1]), expired=expired)
        for index, published in enumerate(public):
            found.append(
                PublicMessage(
                    f"{block[0].event_id}-{index}",
                    block[0].stream,
                    type(published).__name__,
                    encode(table.table_id, published).SerializeToString(),
                    block[-1].global_position,
                )
            )
    return found


async def republish(
    store: EventStore,
    js: JetStreamContext,
    root: str,
    *,
    after_global: int = 0,
    replicas: int = 1,
) -> Republished:
    """Publish the log after `after_global` again (the streams are made if missing, with
    `replicas` replicas).

    The log of one database: the table service's, or matchmaking's (run once for each)."""
    await ensure_event_streams(js, root, EVERY_CATEGORY, replicas=replicas)
    done = Republished()
    tables: dict[str, None] = {}
    position = after_global
    while batch := await store.read_all(position, BATCH):
        for event in batch:
            await js.publish(
                subject_for(event.stream, event.type, root),
                encode_event(event),
                headers=event_headers(event),
            )
            done.events += 1
            if event.stream.startswith(STREAM_PREFIX):
                tables[event.stream] = None
        position = batch[-1].global_position
    for stream in tables:
        for message in public_messages(await store.read(stream)):
            if message.after_global > after_global:
                await _publish_message(js, root, message)
                done.messages += 1
    return done


async def _publish_message(js: JetStreamContext, root: str, message: PublicMessage) -> None:
    headers = {
        MSG_ID_HEADER: message.message_id,
        STREAM_HEADER: message.stream,
        TYPE_HEADER: message.type,
    }
    subject = message_subject(message.stream, PUBLIC_CHANNEL, message.type, root)
    await js.publish(subject, message.body, headers=headers)
