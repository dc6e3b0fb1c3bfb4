"""From "match decided" to "table open": CreateTable, then `MatchSeated` — or, when the
table service refuses the match for good, `MatchReleased` (its tickets search again).

Safe to run anywhere, any number of times: CreateTable is idempotent by the match's
request id (one table per match, whoever asks), and `MatchSeated`/`MatchReleased` are
decided on the lobby — a match already seated or released decides nothing. The
replica that decided a match places it at once; every replica also places any match
decided more than `complete_after` ago (its decider died between the two steps, or
the table service was down), so a SIGKILL between the two steps only delays the table.
"""

from __future__ import annotations

import asyncio
import contextlib

import grpc
import structlog

from kozyr.client.caller import ServiceCaller
from kozyr.matchmaking import metrics
from kozyr.matchmaking.book import Decision, LobbyBook
from kozyr.matchmaking.decisions import Event
from kozyr.matchmaking.events import MatchReleased, MatchSeated
from kozyr.matchmaking.lobby import Lobby, Match
from kozyr.matchmaking.tablemaking import create_table_request
from kozyr.matchmaking.timing import Clock

log = structlog.get_logger("kozyr.matchmaking")

CALL_SECONDS = 4.0
REFUSALS = (
    grpc.StatusCode.INVALID_ARGUMENT,
    grpc.StatusCode.FAILED_PRECONDITION,
    grpc.StatusCode.PERMISSION_DENIED,
)
"""Answers that the same request would get again: the match is released."""


def seated(match_id: str, table_id: str, at: str) -> Decision:
    def decision(lobby: Lobby) -> list[Event]:
        if match_id not in lobby.matches:
            return []
        return [MatchSeated(match_id, table_id, at)]

    return decision


class Placer:
    def __init__(
        self,
        book: LobbyBook,
        tables: ServiceCaller,
        clock: Clock,
        *,
        complete_after: float,
        delay: float = 0.0,
        seed_window: int = 0,
    ) -> None:
        """`seed_window`: the seconds every table's first deal waits for its players'
        client seeds (`TableOptions.seed_window_seconds`)."""
        self._book = book
        self._tables = tables
        self._clock = clock
        self._complete_after = complete_after
        self._delay = delay
        self._seed_window = seed_window
        self._running: dict[str, asyncio.Task[str | None]] = {}

    def place_soon(self, match: Match) -> asyncio.Task[str | None]:
        """Place the match in the background (one task per match in this process)."""
        task = self._running.get(match.match_id)
        if task is None:
            task = asyncio.create_task(self._place(match), name=f"place-{match.match_id}")
            self._running[match.match_id] = task
            task.add_done_callback(lambda _: self._running.pop(match.match_id, None))
        return task

    def place_overdue(self) -> None:
        """Place every match decided more than `complete_after` ago (by anyone)."""
        now = self._clock.now()
        for match in list(self._book.lobby.matches.values()):
            if (now - match.decided_at).total_seconds() >= self._complete_after:
                self.place_soon(match)

    async def _place(self, match: Match) -> str | None:
        """The table's id once seated; None when released or to be retried later."""
        try:
            if self._delay:
                await asyncio.sleep(self._delay)
            return await self._create(match)
        except Exception as error:  # retried by place_overdue
            log.warning("placing a match failed", match_id=match.match_id, error=repr(error))
            return None

    async def _create(self, match: Match) -> str | None:
        request = create_table_request(match, self._seed_window)
        try:
            async with asyncio.timeout(CALL_SECONDS):
                response = await self._tables.table.create(request)
        except grpc.aio.AioRpcError as error:
            if error.code() not in REFUSALS:
                raise
            log.error("table refused a match: released", match_id=match.match_id,
                      code=error.code().name, details=error.details())  # fmt: skip
            metrics.TABLES.labels("released").inc()
            await self._book.decide(
                f"release:{match.match_id}",
                lambda lobby: (
                    [MatchReleased(match.match_id, reason="refused")]
                    if match.match_id in lobby.matches
                    else []
                ),
            )
            return None
        at = self._clock.now().isoformat()
        await self._book.decide(
            f"seated:{match.match_id}",
            seated(match.match_id, response.table_id, at),
        )
        metrics.TABLES.labels("seated").inc()
        log.info("match seated", match_id=match.match_id, table_id=response.table_id)
        return response.table_id

    async def stop(self) -> None:
        for task in list(self._running.values()):
            task.cancel()
        for task in list(self._running.values()):
            with contextlib.suppress(asyncio.CancelledError):
                await task
