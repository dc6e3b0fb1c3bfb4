"""Private team signals: "I hold a 3-set" / "I hold a 5-set", seen by teammates only.

A signal must be true of the hand when set (ignoring the hand-size timing limits of
leads). Tapping a set signal clears it. After every completed move and refill, a
signal the hand no longer supports clears itself, and every signal clears when the
round ends; both emit `SignalCleared` so the teammates' history shows why.
"""

from __future__ import annotations

from collections.abc import Sequence

from kozyr.games.cards import Card
from kozyr.games.khozor_teams.leads import holds_set, sets_held
from kozyr.games.khozor_teams.messages import SignalCleared, SignalSet, ToggleSignal
from kozyr.games.khozor_teams.model import (
    SEATS,
    ClearReason,
    Phase,
    SignalKind,
    State,
    team_of,
)
from kozyr.games.khozor_teams.texts import error

SIGNAL_KINDS = (SignalKind.THREE_SET, SignalKind.FIVE_SET)


def true_signals(hand: Sequence[Card]) -> frozenset[SignalKind]:
    """The signals this hand may set (what a computer player announces)."""
    return sets_held(hand).intersection(SIGNAL_KINDS)


def decide_toggle(state: State, command: ToggleSignal) -> list[SignalSet | SignalCleared]:
    """Allowed at any moment of a round, whoever's turn it is; never a decision."""
    if state.phase is Phase.OVER:
        raise error("GAME_OVER")
    if not state.round_in_progress:
        raise error("WRONG_PHASE")
    if command.kind in state.signals[command.seat]:
        return [SignalCleared(command.seat, command.kind, ClearReason.TAPPED)]
    if not holds_set(state.hands[command.seat], command.kind):
        raise error("SIGNAL_NOT_TRUE")
    return [SignalSet(command.seat, command.kind)]


def audience(event: object) -> tuple[int, ...] | None:
    """The seats that may see `event` at all; None: every viewer, spectators included.

    A signal event is seen by the signaller's team only. The table counts versions per
    viewer from this (docs/api.md, "Versions"), so the other team cannot see even that a
    signal happened: no version, history position or page size changes with it.
    Agrees with `redact(event, seat) is None` (a property test checks it).
    """
    if isinstance(event, SignalSet | SignalCleared):
        return team_of(event.seat).seats
    return None


def tapped_by(event: object) -> int | None:
    """The seat whose own tap this event records (a set, or a clear by tapping again).

    Taps are the only moves a seat may make at any moment, so the table rate-limits
    them per seat; clears the rules make by themselves (broken, round end) are no tap.
    """
    if isinstance(event, SignalSet):
        return event.seat
    if isinstance(event, SignalCleared) and event.reason is ClearReason.TAPPED:
        return event.seat
    return None


def broken_signals(state: State, seat: int, hand: Sequence[Card]) -> list[SignalCleared]:
    """Signals of `seat` that its hand after a move and refill no longer supports."""
    return [
        SignalCleared(seat, kind, ClearReason.BROKEN)
        for kind in SIGNAL_KINDS
        if kind in state.signals[seat] and not holds_set(hand, kind)
    ]


def round_end_clears(state: State, already: Sequence[SignalCleared]) -> list[SignalCleared]:
    """Every signal still set when the round ends (`already` cleared just before)."""
    gone = {(c.seat, c.kind) for c in already}
    return [
        SignalCleared(seat, kind, ClearReason.ROUND_END)
        for seat in range(SEATS)
        for kind in SIGNAL_KINDS
        if kind in state.signals[seat] and (seat, kind) not in gone
    ]
