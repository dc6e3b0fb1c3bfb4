"""The public table events: what other services (clock, bots, matchmaking) learn of a table.

Game-neutral facts derived from each append, published beside the table's raw events
through the same outbox (docs/events.md, "Public table events"): a table opened, a turn
started (who must act, by when, who controls those seats) and ended, a seat changed
hands, a deal ended with the scores so far, the table finished with places and scores.

`public_events` is a pure function of the table before and after one append, the events
appended and the deadline recorded: it reads only what every game's decider offers
(`turn`, `is_over`, `standing`) and the table's own seats, never a game's events — so a
consumer never parses them either. None of these facts is a card or a seed: a service
that reads only the public tree cannot learn a hidden card.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from enum import StrEnum
from typing import Any

from kozyr.games.decider import Turn
from kozyr.games.standing import Standing
from kozyr.table.domain import model
from kozyr.table.domain.model import SeatControl, Table


class TurnEnd(StrEnum):
    """How a turn ended."""

    PLAYED = "played"
    """A move of one of its seats (or the table's automatic consequences of it)."""
    EXPIRED = "expired"
    """Its deadline passed and the clock's ExpireTurn played the default move."""
    SUPERSEDED = "superseded"
    """Not ended by a move: it is announced again (a `TurnStarted` of the same number
    follows) because the control of one of its seats changed."""


@dataclass(frozen=True, slots=True)
class PublicSeat:
    """A seat, its player id ("" for a computer seat) and who plays it now."""

    seat: int
    player_id: str
    control: SeatControl


@dataclass(frozen=True, slots=True)
class TableOpened:
    game_id: str
    options: Mapping[str, Any]
    seats: tuple[PublicSeat, ...]
    cover_after_seconds: int = 0


@dataclass(frozen=True, slots=True)
class TurnStarted:
    """A decision the table waits for; any one of `seats` may take it."""

    number: int
    kind: str
    seats: tuple[PublicSeat, ...]
    deadline: datetime | None


@dataclass(frozen=True, slots=True)
class TurnEnded:
    number: int
    how: TurnEnd


@dataclass(frozen=True, slots=True)
class SeatControlChanged:
    seat: PublicSeat


@dataclass(frozen=True, slots=True)
class DealEnded:
    """Deal (Khözör: round) `deal` is over; `scores` per seat so far."""

    deal: int
    scores: tuple[int, ...]


@dataclass(frozen=True, slots=True)
class SeatResult:
    """A seat's place and score, and the leaver accounting's facts of a player's seat
    (docs/leavers.md): its turns, those covered, those from its first covered one on,
    and whether its person was not playing it at the end. All 0/False for a computer."""

    seat: int
    player_id: str
    place: int
    score: int
    turns: int = 0
    covered_turns: int = 0
    turns_since_cover: int = 0
    covered_at_end: bool = False


@dataclass(frozen=True, slots=True)
class TableFinished:
    """The game is over: per seat its place (1 is best, equal places shared) and score."""

    game_id: str
    results: tuple[SeatResult, ...]


PublicEvent = TableOpened | TurnStarted | TurnEnded | SeatControlChanged | DealEnded | TableFinished


def public_events(
    before: Table | None,
    after: Table,
    appended: Sequence[Any],
    deadline: datetime | None,
    *,
    expired: bool = False,
) -> list[PublicEvent]:
    """The public events of one append, in the order a consumer should apply them.

    `before` is None for the table's creation; `appended` are the decoded events of the
    append (table-level and the game's); `deadline` the one recorded with them;
    `expired` says the append was the clock's default move for the open turn.
    Every `TurnStarted` is later matched by exactly one `TurnEnded` of its number.
    """
    found: list[PublicEvent] = []
    if before is None:
        found.append(
            TableOpened(
                after.game_id, dict(after.options), _seats(after), after.cover_after_seconds
            )
        )
    found += [
        SeatControlChanged(_seat(after, event.seat))
        for event in appended
        if isinstance(event, model.SeatControlChanged)
    ]
    closed, opened = _open_turn(before), _open_turn(after)
    if closed is not None and _announced(before, closed) != _announced(after, opened):
        moved = opened is None or opened.number != closed.number
        how = (TurnEnd.EXPIRED if expired else TurnEnd.PLAYED) if moved else TurnEnd.SUPERSEDED
        found.append(TurnEnded(closed.number, how))
    found += _deals_ended(before, after)
    if after.is_over and (before is None or not before.is_over):
        found.append(_finished(after))
    if opened is not None and _announced(before, closed) != _announced(after, opened):
        found.append(TurnStarted(opened.number, opened.kind, _seats(after, opened.seats), deadline))
    return found


def _open_turn(table: Table | None) -> Turn | None:
    """The turn a seat must take, if any (not a chance step, not over)."""
    if table is None or table.is_over:
        return None
    turn = table.turn
    return None if turn.is_chance or not turn.seats else turn


def _announced(table: Table | None, turn: Turn | None) -> object:
    """What a `TurnStarted` of `turn` at `table` says: a new one is due when it changes."""
    if table is None or turn is None:
        return None
    return turn.number, turn.kind, _seats(table, turn.seats)


def _seat(table: Table, seat: int) -> PublicSeat:
    return PublicSeat(seat, table.seats[seat], table.control[seat])


def _seats(table: Table, seats: Sequence[int] | None = None) -> tuple[PublicSeat, ...]:
    chosen = range(len(table.seats)) if seats is None else seats
    return tuple(_seat(table, seat) for seat in chosen)


def _deals_ended(before: Table | None, after: Table) -> list[PublicEvent]:
    ended = 0 if before is None else before.game.standing(before.state).deals_ended
    standing = after.game.standing(after.state)
    return [DealEnded(deal, standing.scores) for deal in range(ended + 1, standing.deals_ended + 1)]


def _finished(table: Table) -> TableFinished:
    standing = table.game.standing(table.state)
    return TableFinished(
        table.game_id,
        tuple(_result(table, seat, standing) for seat in range(len(table.seats))),
    )


def _result(table: Table, seat: int, standing: Standing) -> SeatResult:
    place, score, player = standing.places[seat], standing.scores[seat], table.seats[seat]
    if player == model.COMPUTER:
        return SeatResult(seat, player, place, score)
    tally = table.tally[seat] if table.tally else model.TurnTally()
    away = table.control[seat] is not SeatControl.PERSON
    return SeatResult(
        seat, player, place, score, tally.turns, tally.covered, tally.since_cover, away
    )
