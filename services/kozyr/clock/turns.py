"""Turn clocks: a timer per table, set by each `TurnStarted`, fired into `ExpireTurn`.

The timer of a table is one JetStream message schedule (`kozyr.bus.schedules`), so a
new turn's timer replaces the last one's and nothing lives in a process. At the
deadline the fired message reaches one clock replica, which calls the table service's
`ExpireTurn(table, turn number)`. That call is idempotent per turn number (the table's
request id is derived from it) and does nothing once the turn has moved on — which is
what makes redelivery (a replica killed before its ack), two replicas, and a move made
just before the deadline all safe: the default move is played at most once, and never
for a turn that was answered in time.
"""

from __future__ import annotations

import asyncio
import json
from dataclasses import dataclass
from datetime import UTC, datetime

import grpc
import structlog

from kozyr.bus.schedules import MessageScheduler
from kozyr.clock import metrics
from kozyr.clock.tables import CALL_SECONDS, TableCaller
from kozyr.clock.timing import Clock

TURN = "turn"
"""The timer kind of turn deadlines: one timer per table."""
FINAL_CODES = (grpc.StatusCode.NOT_FOUND, grpc.StatusCode.INVALID_ARGUMENT)
"""ExpireTurn answers that no retry can change (the timer is dropped, with a log line)."""

log = structlog.get_logger("kozyr.clock.turns")


@dataclass(frozen=True, slots=True)
class TurnTimer:
    """What a fired turn timer carries."""

    table_id: str
    turn: int
    deadline: datetime

    def encode(self) -> bytes:
        return json.dumps(
            {"table_id": self.table_id, "turn": self.turn, "deadline": self.deadline.isoformat()}
        ).encode()

    @classmethod
    def decode(cls, payload: bytes) -> TurnTimer:
        data = json.loads(payload)
        return cls(
            str(data["table_id"]), int(data["turn"]), datetime.fromisoformat(data["deadline"])
        )


class TurnClock:
    """Sets, replaces and cancels the turn timers; expires the turns they fire for."""

    def __init__(self, scheduler: MessageScheduler, clock: Clock, tables: TableCaller) -> None:
        self._scheduler = scheduler
        self._clock = clock
        self._tables = tables

    async def turn_started(self, table_id: str, number: int, deadline: datetime | None) -> None:
        """A turn with a deadline gets the table's timer (replacing the last turn's)."""
        if deadline is None:
            await self._scheduler.cancel(TURN, table_id)
            return
        timer = TurnTimer(table_id, number, deadline)
        await self._scheduler.schedule(
            TURN, table_id, self._clock.wall_time_of(deadline), timer.encode()
        )

    async def table_finished(self, table_id: str) -> None:
        await self._scheduler.cancel(TURN, table_id)

    async def fired(self, payload: bytes, fired_at: datetime | None = None) -> bool:
        """Expire the turn of a fired timer; True when the default move was played.

        `fired_at` is when NATS stored the fired message (for the lateness metric).
        Transient failures raise (the message is redelivered); final ones are logged.
        """
        timer = TurnTimer.decode(payload)
        if fired_at is not None:
            self._observe("fired", timer, fired_at + (self._clock.now() - datetime.now(UTC)))
        self._observe("received", timer, self._clock.now())
        try:
            async with asyncio.timeout(CALL_SECONDS):
                answer = await self._tables.table.expire_turn(timer.table_id, timer.turn)
        except grpc.aio.AioRpcError as error:
            if error.code() not in FINAL_CODES:
                raise
            log.error(
                "turn timer dropped",
                table_id=timer.table_id,
                turn=timer.turn,
                code=error.code().name,
                details=error.details(),
            )
            return False
        lateness = self._observe("answered", timer, self._clock.now())
        metrics.EXPIRIES.labels(str(answer.applied).lower()).inc()
        log.info(
            "turn expired" if answer.applied else "turn had moved on",
            table_id=timer.table_id,
            turn=timer.turn,
            lateness_seconds=round(lateness, 3),
        )
        return bool(answer.applied)

    @staticmethod
    def _observe(stage: str, timer: TurnTimer, at: datetime) -> float:
        lateness = (at - timer.deadline).total_seconds()
        metrics.EXPIRY_LATENESS.labels(stage).observe(max(0.0, lateness))
        return lateness
