"""Acting on public `TurnStarted` events: one move per computer turn, never two.

A `TurnStarted` names the seats that may act and who controls each of them. For the
first computer-controlled one (a Khözör confirmation may be open to several seats; one
answer ends the turn) the bot waits `think_seconds`, reads that seat's view with the
bots token (the table refuses it a person's seat), plays at the level the view gives
the seat (`SeatInfo.level`: the seat's own, or the table's for a covered seat), and
submits one move with `request_id = bots:<table>:<turn>:<seat>` and
`expected_version` = the view's version.

Why no second move is ever made: SubmitAction is idempotent per request id (a
redelivered event, a restarted process or a second replica that sends the same move
again gets the first answer, the move applied once), and a bot acts only while the view
still shows the event's turn open for its seat — an old event finds the turn moved on
and does nothing. A turn whose control changes (a seat covered, or retaken by its
player) ends "superseded" and starts again with the same number and the new control, so
its new `TurnStarted` is all the bots need; a bot move racing a retake is refused by the
table (STALE_VERSION or SEAT_NOT_COMPUTER), never applied on top of it.
"""

from __future__ import annotations

import asyncio
import json

import grpc
import structlog
from nats.aio.msg import Msg

from kozyr.api.common.v1 import seats_pb2
from kozyr.api.table.v1 import actions_pb2, views_pb2
from kozyr.bots.knowledge import Knowledge, deal_began, knowledge
from kozyr.bots.levels import Level, NoMove, announced, choose, game_level
from kozyr.bots.metrics import DECISION_SECONDS, MOVES, REFUSED
from kozyr.bots.search import DEFAULT_BUDGET_MS, Budget
from kozyr.client.caller import ServiceCaller
from kozyr.games.decider import CLIENT_SEED
from kozyr.games.info import Searcher
from kozyr.runtime.errors import error_reason
from kozyr.runtime.tracing import continued_from
from kozyr.tablewire.public import published_event

CALL_SECONDS = 4.0
"""A call to the table service is given up after this and the event redelivered: less
than the consumer's ack_wait."""
ATTEMPTS = 3
"""Reads and submissions per event when the table moves on under the bot (a signal
toggled by a teammate, a control change): then the event is redelivered."""
DONE_CODES = (
    grpc.StatusCode.PERMISSION_DENIED,  # the seat is a person's again
    grpc.StatusCode.NOT_FOUND,
    grpc.StatusCode.ALREADY_EXISTS,  # this request id already made a move
)

HISTORY_WINDOW = 200
"""The hard level reads the seat's history back this many versions first (a 3-5-8 deal
is about 90 events), four times further each time the deal's start is not in it."""

log = structlog.get_logger("kozyr.bots")


def seat_level(view: views_pb2.TableView, seat: int, fallback: Level) -> Level:
    """The level the table gives a computer seat; `fallback` if the view names none
    (or one this process does not play)."""
    code = view.seats[seat].level
    try:
        return Level(seats_pb2.ComputerLevel.Name(code).removeprefix("COMPUTER_LEVEL_").lower())
    except ValueError:  # unspecified, or a level newer than this process
        return fallback


def request_id(table_id: str, turn: int, seat: int) -> str:
    """The one request id of a bot's move: the same for every delivery and replica."""
    return f"bots:{table_id}:{turn}:{seat}"


class Player:
    """Plays the computer seats of every table, one `TurnStarted` at a time."""

    def __init__(
        self,
        tables: ServiceCaller,
        level: Level,
        think_seconds: float,
        hard_budget_ms: float = DEFAULT_BUDGET_MS,
    ) -> None:
        self._tables = tables
        self._level = level
        self._think = think_seconds
        self._budget = Budget(milliseconds=hard_budget_ms)
        self._searching = asyncio.Semaphore(1)

    async def public_event(self, message: Msg) -> None:
        event = published_event(message.data, message.subject, "turn_started")
        if event is None:
            return
        started = event.turn_started
        if started.kind == CLIENT_SEED:  # the first deal waits for players' seeds: no move
            return
        computer = [s.seat for s in started.seats if s.control == seats_pb2.SEAT_CONTROL_COMPUTER]
        if computer:
            with continued_from(
                message.headers, "bots.turn", table_id=event.table_id, turn=started.number
            ):
                await self.play(event.table_id, started.number, min(computer))

    async def play(self, table_id: str, turn: int, seat: int) -> bool:
        """Make the seat's move of this turn; True when this call's move was applied."""
        if self._think:
            await asyncio.sleep(self._think)
        for _ in range(ATTEMPTS):
            try:
                return await self._attempt(table_id, turn, seat)
            except grpc.aio.AioRpcError as error:
                REFUSED.labels(error_reason(error) or error.code().name).inc()
                if error.code() in DONE_CODES:
                    log.info("bot turn over", table_id=table_id, turn=turn, seat=seat,
                             code=error.code().name)  # fmt: skip
                    return False
                if error.code() is not grpc.StatusCode.ABORTED:
                    raise
        raise RuntimeError(f"table {table_id} kept moving under the bot of seat {seat}")

    async def _attempt(self, table_id: str, turn: int, seat: int) -> bool:
        async with asyncio.timeout(CALL_SECONDS):
            view = await self._tables.table.get_table(table_id, seat=seat)
        if view.finished or view.turn.number != turn or seat not in view.turn.seats:
            return False
        async with asyncio.timeout(CALL_SECONDS):
            view = await self._signal(table_id, turn, seat, view)
        level = seat_level(view, seat, self._level)
        known = None
        _, own_player = game_level(view, level)
        if isinstance(own_player, Searcher):  # the search reads the history
            async with asyncio.timeout(CALL_SECONDS):
                known = await self._knowledge(table_id, seat, view)
        try:
            action = await self._decide(view, level, known)
        except NoMove:
            return False
        async with asyncio.timeout(CALL_SECONDS):
            answer = await self._tables.table.submit(
                table_id,
                action,
                request_id=request_id(table_id, turn, seat),
                expected_version=view.version,
                seat=seat,
            )
        log.info("bot moved", table_id=table_id, turn=turn, seat=seat,
                 move=action.WhichOneof("action"), duplicate=answer.duplicate)  # fmt: skip
        MOVES.labels("duplicate" if answer.duplicate else "applied").inc()
        return not answer.duplicate

    async def _decide(
        self, view: views_pb2.TableView, level: Level, known: Knowledge | None
    ) -> actions_pb2.Action:
        """The level's move. A hard decision searches for its budget: it runs in a worker
        thread, one at a time, so the event loop keeps serving the other tables' calls and
        no call's timeout is spent on a search (each table call has its own)."""
        if level is not Level.HARD:
            with DECISION_SECONDS.labels(level).time():
                return choose(view, level, known, self._budget)
        async with self._searching:
            with DECISION_SECONDS.labels(level).time():
                return await asyncio.to_thread(choose, view, level, known, self._budget)

    async def _signal(
        self, table_id: str, turn: int, seat: int, view: views_pb2.TableView
    ) -> views_pb2.TableView:
        """What the game has a computer seat make known before its move
        (`GameInfo.announce`: Khözör's true team signals, RULES.md). Each has its own
        request id per table, turn, seat and the values it carries (`bots-signal:…`,
        apart from the moves' `bots:…`; a signal's: its number), so a redelivery never
        sends one twice; a refused one (the tap limit, the hand changed) is skipped — a
        signal is never worth a lost turn."""
        for toggle in announced(view):
            body = getattr(toggle, toggle.WhichOneof("action") or "")
            kind = ":".join(str(value) for _, value in body.ListFields())
            try:
                answer = await self._tables.table.submit(
                    table_id,
                    toggle,
                    request_id=f"bots-signal:{table_id}:{turn}:{seat}:{kind}",
                    expected_version=view.version,
                    seat=seat,
                )
            except grpc.aio.AioRpcError as error:
                log.info("bot signal refused", table_id=table_id, seat=seat,
                         reason=error_reason(error) or error.code().name)  # fmt: skip
                return view
            view = answer.view
        return view

    async def _knowledge(self, table_id: str, seat: int, view: views_pb2.TableView) -> Knowledge:
        """The hard level's input: the view and the seat's own history (GetHistory with
        `seat`: redacted for it by the table) since the current deal began."""
        window = HISTORY_WINDOW
        while True:
            start = max(0, view.version - window)
            events = await self._tables.table.history(table_id, seat=seat, from_version=start)
            entries = [
                (e.type, json.loads(e.data_json)) for e in events if e.version <= view.version
            ]
            if start == 0 or deal_began(view, entries):
                return knowledge(view, entries)
            window *= 4
