"""What the clock reads from NATS: public table events, fired timers, presence expiries.

Only the public table tree ("<root>.public.table.<id>.<Type>", `kozyr.table.v1.
PublicTableEvent`) is read, never a game's raw events. Its consumer lets one message
be in flight at a time across all replicas (`max_ack_pending` 1): a table's
`TurnStarted` n+1 must never be handled before its `TurnStarted` n, or the older
timer would replace the newer one.
"""

from __future__ import annotations

from datetime import UTC

import structlog
from nats.aio.msg import Msg

from kozyr.bus.schedules import parse_fire_subject
from kozyr.clock.covering import COVER, Covering
from kozyr.clock.presence import PresenceBook
from kozyr.clock.seating import SeatAt
from kozyr.clock.turns import TURN, TurnClock
from kozyr.tablewire.public import published_event

log = structlog.get_logger("kozyr.clock")


class Follower:
    """Turns each message of the clock's three consumers into a call of its parts."""

    def __init__(
        self, root: str, turns: TurnClock, covering: Covering, presence: PresenceBook
    ) -> None:
        self.root = root
        self._turns = turns
        self._covering = covering
        self._presence = presence

    async def public_event(self, message: Msg) -> None:
        event = published_event(message.data, message.subject)
        if event is None:
            return
        which = event.WhichOneof("event")
        if which == "turn_started":
            started = event.turn_started
            deadline = (
                started.deadline.ToDatetime(tzinfo=UTC) if started.HasField("deadline") else None
            )
            await self._turns.turn_started(event.table_id, started.number, deadline)
        elif which == "table_opened":
            opened = event.table_opened
            for seat in opened.seats:
                if seat.player_id:
                    at = SeatAt(seat.seat, opened.cover_after_seconds)
                    await self._covering.seated(seat.player_id, event.table_id, at)
        elif which == "table_finished":
            await self._turns.table_finished(event.table_id)
            for result in event.table_finished.results:
                if result.player_id:
                    await self._covering.unseated(result.player_id, event.table_id)

    async def fired(self, message: Msg) -> None:
        try:
            kind, _ = parse_fire_subject(message.subject, self.root)
        except ValueError:
            log.error("not a timer: skipped", subject=message.subject)
            return
        if kind == TURN:
            stored = message.metadata.timestamp
            await self._turns.fired(message.data, stored.replace(tzinfo=UTC) if stored else None)
        elif kind == COVER:
            await self._covering.fired(message.data, str(message.metadata.sequence.stream))

    async def presence_entry(self, message: Msg) -> None:
        tag = str(message.metadata.sequence.stream)
        gone = self._presence.expired_player(message.subject, message.headers)
        if gone is not None:
            await self._covering.went_offline(gone, tag)
            return
        back = self._presence.returned_player(message.subject, message.data)
        if back is not None:
            await self._covering.sync_tables(back, tag)
