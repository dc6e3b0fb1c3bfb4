"""evolve: apply one event to the state; fold: replay a whole log.

Events are facts already checked by `decide`, so evolve only records them. It
never draws randomness and never decides: the next seat to act is carried by the
event or follows from it by a fixed rule (clockwise, or the sleeper leads).
`decisions` (the turn number) grows on exactly the events that complete a decision.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import replace
from typing import Any

from kozyr.games.cards import Card
from kozyr.games.khozor_teams.beating import index_of
from kozyr.games.khozor_teams.messages import (
    CardsBeaten,
    CardsLed,
    CycleSlept,
    DealSeedRevealed,
    Event,
    MatchWon,
    OpenerConfirmed,
    OpeningTeamDrawn,
    PilePickedUp,
    ReserveDrawn,
    RoundDealt,
    RoundWon,
    SignalCleared,
    SignalSet,
)
from kozyr.games.khozor_teams.model import (
    ALL_SIGNALS_OFF,
    Phase,
    Play,
    PlayKind,
    RoundResult,
    SignalKind,
    State,
    next_seat,
)
from kozyr.games.khozor_teams.options import initial_state


def _with_hand(state: State, seat: int, hand: tuple[Card, ...]) -> tuple[tuple[Card, ...], ...]:
    hands = list(state.hands)
    hands[seat] = hand
    return tuple(hands)


def _without(hand: tuple[Card, ...], cards: tuple[Card, ...]) -> tuple[Card, ...]:
    gone = {index_of(c) for c in cards}
    return tuple(c for c in hand if index_of(c) not in gone)


def _opening_team_drawn(state: State, e: OpeningTeamDrawn) -> State:
    return replace(
        state,
        phase=Phase.AWAITING_DEAL,
        opening_team=e.team,
        opening_draw_seed=e.seed,
        decisions=state.decisions + 1,
    )


def _round_dealt(state: State, e: RoundDealt) -> State:
    return replace(
        state,
        phase=Phase.CONFIRM_OPENER,
        decisions=state.decisions + 1,
        round_no=e.round_no,
        trump=e.trump,
        opening_team=e.opening_team,
        opener=None,
        to_act=None,
        hands=e.hands,
        reserve=e.reserve,
        pile=(),
        sleeping=(),
        signals=ALL_SIGNALS_OFF,
        commitment=e.commitment,
        seed=e.seed,
        seed_revealed=False,
    )


def _opener_confirmed(state: State, e: OpenerConfirmed) -> State:
    return replace(
        state, phase=Phase.PLAY, opener=e.opener, to_act=e.opener, decisions=state.decisions + 1
    )


def _played(state: State, seat: int, cards: tuple[Card, ...], kind: PlayKind) -> State:
    hand = _without(state.hands[seat], cards)
    pile = (
        (Play(seat, kind, cards),)
        if kind is PlayKind.LEAD
        else (*state.pile, Play(seat, kind, cards))
    )
    return replace(
        state,
        hands=_with_hand(state, seat, hand),
        pile=pile,
        to_act=next_seat(seat),
        decisions=state.decisions + 1,
    )


def _cards_led(state: State, e: CardsLed) -> State:
    return _played(state, e.seat, e.cards, PlayKind.LEAD)


def _cards_beaten(state: State, e: CardsBeaten) -> State:
    return _played(state, e.seat, e.cards, PlayKind.BEAT)


def _pile_picked_up(state: State, e: PilePickedUp) -> State:
    return replace(
        state,
        hands=_with_hand(state, e.seat, state.hands[e.seat] + e.cards),
        pile=(),
        to_act=next_seat(e.seat),
        decisions=state.decisions + 1,
    )


def _reserve_drawn(state: State, e: ReserveDrawn) -> State:
    return replace(
        state,
        hands=_with_hand(state, e.seat, state.hands[e.seat] + e.cards),
        reserve=state.reserve[len(e.cards) :],
    )


def _cycle_slept(state: State, e: CycleSlept) -> State:
    slept = tuple(c for play in state.pile for c in play.cards)
    return replace(state, pile=(), sleeping=state.sleeping + slept, to_act=e.seat)


def _with_signals(state: State, seat: int, kinds: frozenset[SignalKind]) -> State:
    signals = list(state.signals)
    signals[seat] = kinds
    return replace(state, signals=tuple(signals))


def _signal_set(state: State, e: SignalSet) -> State:
    return _with_signals(state, e.seat, state.signals[e.seat] | {e.kind})


def _signal_cleared(state: State, e: SignalCleared) -> State:
    return _with_signals(state, e.seat, state.signals[e.seat] - {e.kind})


def _round_won(state: State, e: RoundWon) -> State:
    return replace(
        state,
        phase=Phase.AWAITING_DEAL,
        to_act=None,
        results=(*state.results, RoundResult(e.round_no, e.team, e.seat)),
    )


def _seed_revealed(state: State, e: DealSeedRevealed) -> State:
    return replace(state, seed_revealed=True)


def _match_won(state: State, e: MatchWon) -> State:
    return replace(state, phase=Phase.OVER, winner=e.team)


_APPLY: dict[type, Callable[[State, Any], State]] = {
    OpeningTeamDrawn: _opening_team_drawn,
    RoundDealt: _round_dealt,
    OpenerConfirmed: _opener_confirmed,
    CardsLed: _cards_led,
    CardsBeaten: _cards_beaten,
    PilePickedUp: _pile_picked_up,
    ReserveDrawn: _reserve_drawn,
    CycleSlept: _cycle_slept,
    SignalSet: _signal_set,
    SignalCleared: _signal_cleared,
    RoundWon: _round_won,
    DealSeedRevealed: _seed_revealed,
    MatchWon: _match_won,
}


def evolve(state: State, event: Event) -> State:
    """The state after one event. Raises KeyError for an object that is no Khözör event."""
    return _APPLY[type(event)](state, event)


def fold(options: Mapping[str, Any], events: Iterable[Event]) -> State:
    """Replay: the state after `events` from a fresh table with these options."""
    state = initial_state(options)
    for event in events:
        state = evolve(state, event)
    return state
