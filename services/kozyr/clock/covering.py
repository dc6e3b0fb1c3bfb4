"""Covering absent players: offline for `cover_after` at a table where he has a seat →
`SetSeatControl(computer)`.

Going offline (or being seated while offline) sets the player's cover timer, a message
schedule like the turn timers (kind "cover", one per player); coming back online
cancels it. When it fires, the replica that gets it checks the player is still offline
and covers each seat of his open tables (`kozyr.clock.seating`). The request id of each
`SetSeatControl` is derived from the fired message, so a redelivery covers nothing twice.

Coming back online does not give the seats back: he may only be watching. He takes a
covered seat back by acting at the table (the table records the change with his move).
"""

from __future__ import annotations

import asyncio
import json
from datetime import datetime, timedelta

import grpc
import structlog

from kozyr.api.common.v1 import seats_pb2
from kozyr.bus.schedules import MessageScheduler
from kozyr.clock import metrics
from kozyr.clock.presence import PresenceBook, has_presence
from kozyr.clock.seating import SeatIndex
from kozyr.clock.tables import CALL_SECONDS, TableCaller
from kozyr.clock.timing import Clock

COVER = "cover"
"""The timer kind of covering: one timer per player."""
GONE_CODES = (grpc.StatusCode.NOT_FOUND, grpc.StatusCode.FAILED_PRECONDITION)

log = structlog.get_logger("kozyr.clock.covering")


class Covering:
    """Reacts to presence changes and seatings; covers seats when a cover timer fires."""

    def __init__(
        self,
        scheduler: MessageScheduler,
        clock: Clock,
        presence: PresenceBook,
        seats: SeatIndex,
        tables: TableCaller,
        cover_after: float,
    ) -> None:
        self._scheduler = scheduler
        self._clock = clock
        self._presence = presence
        self._seats = seats
        self._tables = tables
        self.cover_after = timedelta(seconds=cover_after)

    async def went_offline(self, player_id: str) -> None:
        now = self._clock.now()
        await self._presence.publish(player_id, False, now)
        metrics.PRESENCE_CHANGES.labels("false").inc()
        await self._arm(player_id, now)

    async def came_online(self, player_id: str) -> None:
        await self._scheduler.cancel(COVER, player_id)
        await self._presence.publish(player_id, True, self._clock.now())
        metrics.PRESENCE_CHANGES.labels("true").inc()

    async def seated(self, player_id: str, table_id: str, seat: int) -> None:
        """A table opened with him at `seat`: index it; if he is offline, start counting."""
        if not has_presence(player_id):
            log.warning("player id cannot have a presence: never covered", player_id=player_id)
            return
        await self._seats.seat(player_id, table_id, seat)
        if not await self._presence.is_online(player_id) and not await self._scheduler.pending(
            COVER, player_id
        ):
            await self._arm(player_id, self._clock.now())

    async def unseated(self, player_id: str, table_id: str) -> None:
        if has_presence(player_id):
            await self._seats.unseat(player_id, table_id)

    async def _arm(self, player_id: str, offline_since: datetime) -> None:
        at = offline_since + self.cover_after
        payload = json.dumps({"player_id": player_id, "since": offline_since.isoformat()})
        await self._scheduler.schedule(
            COVER, player_id, self._clock.wall_time_of(at), payload.encode()
        )

    async def fired(self, payload: bytes, tag: str) -> int:
        """Cover the seats of a player still offline; returns how many seats changed.

        `tag` names this firing (the fired message's stream sequence): the request ids
        of the covers, so that a redelivered firing covers nothing twice.
        """
        player_id = str(json.loads(payload)["player_id"])
        if await self._presence.is_online(player_id):
            return 0
        covered = 0
        for table_id, seat in (await self._seats.tables_of(player_id)).items():
            covered += await self._cover(player_id, table_id, seat, tag)
        return covered

    async def _cover(self, player_id: str, table_id: str, seat: int, tag: str) -> int:
        try:
            async with asyncio.timeout(CALL_SECONDS):
                answer = await self._tables.table.set_seat_control(
                    table_id,
                    seat,
                    seats_pb2.SEAT_CONTROL_COMPUTER,
                    request_id=f"cover-{seat}-{tag}",
                )
        except grpc.aio.AioRpcError as error:
            if error.code() not in GONE_CODES:
                raise
            log.warning("seat not covered", table_id=table_id, seat=seat, details=error.details())
            return 0
        if answer.changed:
            metrics.COVERS.inc()
            log.info("seat covered", player_id=player_id, table_id=table_id, seat=seat)
        return int(answer.changed)
