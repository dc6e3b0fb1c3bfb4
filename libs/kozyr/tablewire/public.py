"""The public table events as the consumers (bots, clock, matchmaking) read them.

`decode` reads a published body back into a `kozyr.table.v1.PublicTableEvent`;
`published_event` is how a consumer reads one: a body that is not such a message is
logged and skipped, never retried (a redelivery would not make it readable). The
writing side (the events of an append → outbox messages) is the table service's
(`kozyr.table.adapters.public_wire`).
"""

from __future__ import annotations

import structlog
from google.protobuf.message import DecodeError

from kozyr.api.table.v1 import events_pb2

log = structlog.get_logger("kozyr.tablewire.public")


def decode(payload: bytes) -> events_pb2.PublicTableEvent:
    """A published body → the message (raises `google.protobuf.message.DecodeError`)."""
    return events_pb2.PublicTableEvent.FromString(payload)


def published_event(
    data: bytes, subject: str, kind: str | None = None
) -> events_pb2.PublicTableEvent | None:
    """The public table event a NATS message holds, if it is of `kind` (its `event` oneof
    field, e.g. "turn_started"; any kind when None); None for another kind, and None
    logged for a body that is not a `PublicTableEvent` at all."""
    try:
        event = decode(data)
    except DecodeError:
        log.error("not a public table event: skipped", subject=subject)
        return None
    return event if kind is None or event.WhichOneof("event") == kind else None
