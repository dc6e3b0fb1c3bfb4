"""Presence at the tables, and covering absent players: offline for his table's
`cover_after` at a table where he has a seat → `SetSeatControl(computer)`.

Every seat's view shows whether its player is online: the clock records each change at
each of his open tables with `SetSeatPresence` (`sync_tables`). The change is read from
the presence bucket's stream by a durable consumer — the expiry marker, or the heartbeat
that brought him online — so a failed table call is retried by redelivery, not lost. The
handler records the presence the bucket shows *now*, whatever message woke it, so two
changes handled out of order still leave every table right.

A table starts with every person's presence unknown. Seated while online, he is
recorded online there at once; seated without a heartbeat, nothing is recorded until his
first heartbeat (online) or his cover deadline (offline, then covered): a player whose
app is still starting is never shown as gone.

Going offline (or being seated while offline) sets the player's cover timer, a message
schedule like the turn timers (kind "cover", one per player, due at the earliest
`cover_after` of his tables); coming back online cancels it. When it fires, the replica
that gets it checks the player is still offline, covers each seat whose table's
`cover_after` has passed, and sets the timer again for the others. Request ids derive
from the handled message, so a redelivery changes nothing twice.

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
from kozyr.clock.seating import SeatAt, SeatIndex, Seats
from kozyr.clock.tables import CALL_SECONDS, TableCaller
from kozyr.clock.timing import Clock

COVER = "cover"
"""The timer kind of covering: one timer per player."""
GONE_CODES = (grpc.StatusCode.NOT_FOUND, grpc.StatusCode.FAILED_PRECONDITION)
FIRING_SLACK = timedelta(seconds=0.25)
"""A table whose cover time is this close when the timer fires is covered with the
others (NATS fires schedules on a 250 ms tick)."""

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

    async def went_offline(self, player_id: str, tag: str) -> None:
        """His heartbeats stopped (the expiry marker `tag`): announce, count, record."""
        now = self._clock.now()
        await self._presence.publish(player_id, False, now)
        metrics.PRESENCE_CHANGES.labels("false").inc()
        await self._arm(player_id, now)
        await self.sync_tables(player_id, tag)

    async def came_online(self, player_id: str) -> None:
        """A heartbeat brought him online: announce at once and stop counting (his
        tables are told by `sync_tables`, from the presence consumer)."""
        await self._scheduler.cancel(COVER, player_id)
        await self._presence.publish(player_id, True, self._clock.now())
        metrics.PRESENCE_CHANGES.labels("true").inc()

    async def sync_tables(self, player_id: str, tag: str) -> None:
        """Record at each of his tables the presence the bucket shows now."""
        online = await self._presence.is_online(player_id)
        for table_id, at in (await self._seats.tables_of(player_id)).items():
            await self._set_presence(table_id, at.seat, online, f"{tag}-{online:d}")

    async def seated(self, player_id: str, table_id: str, at: SeatAt) -> None:
        """A table opened with him at `at.seat`: index it; record him online there if
        he is, else start counting.

        A player without a heartbeat yet is not recorded offline: his seat shows an
        unknown presence (his app may still be starting) until his first heartbeat
        (`sync_tables`) or his cover deadline (`fired` records him offline then).
        """
        if not has_presence(player_id):
            log.warning("player id cannot have a presence: never covered", player_id=player_id)
            return
        await self._seats.seat(player_id, table_id, at)
        if await self._presence.is_online(player_id):
            await self._set_presence(table_id, at.seat, True, "seated")
            return
        pending = await self._scheduler.pending(COVER, player_id)
        since = _since(pending) if pending is not None else self._clock.now()
        await self._arm(player_id, since)

    async def unseated(self, player_id: str, table_id: str) -> None:
        if has_presence(player_id):
            await self._seats.unseat(player_id, table_id)

    def _delay(self, at: SeatAt) -> timedelta:
        if at.cover_after_seconds:
            return timedelta(seconds=at.cover_after_seconds)
        return self.cover_after

    async def _arm(
        self, player_id: str, offline_since: datetime, tables: Seats | None = None
    ) -> None:
        """Set his cover timer for the earliest cover time of `tables` (default: all of
        his open tables); none: no timer (a seating later sets one)."""
        if tables is None:
            tables = await self._seats.tables_of(player_id)
        if not tables:
            return
        at = offline_since + min(self._delay(seat) for seat in tables.values())
        payload = json.dumps({"player_id": player_id, "since": offline_since.isoformat()})
        await self._scheduler.schedule(
            COVER, player_id, self._clock.wall_time_of(at), payload.encode()
        )

    async def fired(self, payload: bytes, tag: str) -> int:
        """Cover the seats of a player still offline whose tables' cover time has come;
        returns how many seats changed. The timer is set again for his other tables.

        `tag` names this firing (the fired message's stream sequence): the request ids
        of the covers, so that a redelivered firing covers nothing twice.
        """
        player_id = str(json.loads(payload)["player_id"])
        since = _since(payload)
        if await self._presence.is_online(player_id):
            return 0
        offline_for = self._clock.now() - since + FIRING_SLACK
        tables = await self._seats.tables_of(player_id)
        due = {t: at for t, at in tables.items() if self._delay(at) <= offline_for}
        covered = 0
        for table_id, at in due.items():
            await self._set_presence(table_id, at.seat, False, f"cover-{tag}")
            covered += await self._cover(player_id, table_id, at.seat, tag)
        later = {t: at for t, at in tables.items() if t not in due}
        if later:
            await self._arm(player_id, since, later)
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

    async def _set_presence(self, table_id: str, seat: int, online: bool, tag: str) -> None:
        try:
            async with asyncio.timeout(CALL_SECONDS):
                await self._tables.table.set_seat_presence(
                    table_id, seat, online, request_id=f"presence-{seat}-{tag}"
                )
        except grpc.aio.AioRpcError as error:
            if error.code() not in GONE_CODES:
                raise
            log.warning("presence not recorded", table_id=table_id, seat=seat,
                        details=error.details())  # fmt: skip


def _since(payload: bytes) -> datetime:
    """When the player went offline, as his cover timer's payload says."""
    return datetime.fromisoformat(str(json.loads(payload)["since"]))
