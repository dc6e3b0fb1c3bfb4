"""The public table events of a test's subject root, as they arrive (an ordered consumer).

What the clock did is read from what every service may read: a turn expired by the
clock ends with `TurnEnded(how=EXPIRED)`, so "each turn expired once" is "at most one
TurnEnded per (table, turn number), and EXPIRED when nobody moved".
"""

from __future__ import annotations

import asyncio
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

import nats
from nats.aio.msg import Msg

from kozyr.api.table.v1 import events_pb2
from kozyr.bus.streams import EventStreamSpec, ensure_stream
from kozyr.bus.subjects import PUBLIC_CHANNEL

EXPIRED = events_pb2.TURN_END_EXPIRED


@dataclass(frozen=True)
class Seen:
    subject: str
    at: datetime
    """When JetStream stored it (the relay's publish)."""
    event: events_pb2.PublicTableEvent

    @property
    def case(self) -> str | None:
        return self.event.WhichOneof("event")


@dataclass
class PublicTap:
    nats_url: str
    root: str
    seen: list[Seen] = field(default_factory=list)
    _nc: Any = None
    _changed: asyncio.Event = field(default_factory=asyncio.Event)

    async def start(self) -> None:
        self._nc = await nats.connect(self.nats_url)
        js = self._nc.jetstream()
        # The table service's relay makes the stream in the background: make sure it is
        # there before subscribing (idempotent), or the subscription finds no stream.
        await ensure_stream(js, EventStreamSpec(PUBLIC_CHANNEL, self.root))
        await js.subscribe(f"{self.root}.public.table.>", cb=self._on, ordered_consumer=True)

    async def _on(self, message: Msg) -> None:
        stored = message.metadata.timestamp.replace(tzinfo=UTC)
        event = events_pb2.PublicTableEvent.FromString(message.data)
        self.seen.append(Seen(message.subject, stored, event))
        self._changed.set()

    async def close(self) -> None:
        if self._nc is not None:
            await self._nc.close()

    async def wait_for(self, condition: Callable[[], bool], seconds: float) -> None:
        """Until `condition()` holds (checked at each arrival); TimeoutError otherwise."""
        async with asyncio.timeout(seconds):
            while not condition():
                self._changed.clear()
                await self._changed.wait()

    def of(self, table_id: str, case: str | None = None) -> list[Seen]:
        return [
            s
            for s in self.seen
            if s.event.table_id == table_id and (case is None or s.case == case)
        ]

    def ends(self, table_id: str) -> Counter[int]:
        """TurnEnded per turn number (superseded announcements aside)."""
        return Counter(
            s.event.turn_ended.number
            for s in self.of(table_id, "turn_ended")
            if s.event.turn_ended.how != events_pb2.TURN_END_SUPERSEDED
        )

    def expired(self, table_id: str) -> Counter[int]:
        return Counter(
            s.event.turn_ended.number
            for s in self.of(table_id, "turn_ended")
            if s.event.turn_ended.how == EXPIRED
        )

    def finished(self, table_id: str) -> bool:
        return bool(self.of(table_id, "table_finished"))

    def lateness(self, table_id: str, offset: float) -> list[float]:
        """Seconds from each expired turn's (skipped) deadline to its TurnEnded's storing."""
        deadlines = {
            s.event.turn_started.number: s.event.turn_started.deadline.ToDatetime(tzinfo=UTC)
            for s in self.of(table_id, "turn_started")
            if s.event.turn_started.HasField("deadline")
        }
        return [
            (
                s.at - (deadlines[s.event.turn_ended.number] - timedelta(seconds=offset))
            ).total_seconds()
            for s in self.of(table_id, "turn_ended")
            if s.event.turn_ended.how == EXPIRED
        ]
