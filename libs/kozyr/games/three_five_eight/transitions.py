"""evolve(state, event) → state: apply one event, trusting it.

Every check belongs to `decide`; evolve only records facts, so that replaying a log
(`fold`) is exactly the code path that built the state in the first place. It never
draws randomness. The events that settle a decision (`FirstDealerDrawn`, `CardsDealt`,
`ContractChosen`, `CardExchanged`, `CardsDiscarded`, `CardPlayed`: the first event of
every command) advance the turn number by one; automatic follow-ups do not.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any, TypeVar

from kozyr.games.cards import Card
from kozyr.games.three_five_eight.model import (
    CardExchanged,
    CardPlayed,
    CardsDealt,
    CardsDiscarded,
    ContractChosen,
    DealScored,
    DealSeedRevealed,
    DealState,
    Event,
    ExchangePlanned,
    ExchangeSkipped,
    FirstDealerDrawn,
    GameEnded,
    HandsCompleted,
    Phase,
    State,
    TalonTaken,
    TrickTaken,
)

_T = TypeVar("_T", DealState, State)
_new = object.__new__
_set = object.__setattr__


def _patch(record: _T, **changes: Any) -> _T:
    """`dataclasses.replace(record, **changes)` at a seventh of the cost (this runs at
    every event): a copy of the frozen record's attributes with the changed ones set,
    without running `__init__` (both records hold values only, no derived field)."""
    attributes = record.__dict__.copy()
    attributes.update(changes)
    patched = _new(type(record))
    _set(patched, "__dict__", attributes)
    return patched


def find(hand: tuple[Card, ...], card: Card) -> int:
    """Index of `card` in `hand`, or -1.

    Cards are interned, so identity finds them without calling the dataclass
    `__eq__` on every other card (this runs at every card played); equality is the
    fallback for a card built without `cards.card()`.
    """
    for i, c in enumerate(hand):
        if c is card:
            return i
    for i, c in enumerate(hand):
        if c == card:
            return i
    return -1


def _without(hand: tuple[Card, ...], card: Card) -> tuple[Card, ...]:
    i = find(hand, card)
    if i < 0:
        raise ValueError(f"{card} is not in the hand")
    return hand[:i] + hand[i + 1 :]


def _with_hand(
    hands: tuple[tuple[Card, ...], ...], seat: int, hand: tuple[Card, ...]
) -> tuple[tuple[Card, ...], ...]:
    return (*hands[:seat], hand, *hands[seat + 1 :])


def _current(state: State) -> DealState:
    assert state.deal is not None, "a deal event before any deal"
    return state.deal


def _first_dealer_drawn(state: State, e: FirstDealerDrawn) -> State:
    return _patch(state, first_dealer=e.dealer, phase=Phase.DEAL, turn_number=state.turn_number + 1)


def _cards_dealt(state: State, e: CardsDealt) -> State:
    deal = DealState(
        number=e.deal,
        dealer=e.dealer,
        commitment=e.commitment,
        seed=e.seed,
        hands=e.hands,
        talon=e.talon,
        leader=(e.dealer + 1) % 3,
    )
    return _patch(state, deal=deal, phase=Phase.CONTRACT, turn_number=state.turn_number + 1)


def _contract_chosen(state: State, e: ContractChosen) -> State:
    used = list(state.used)
    used[e.seat] = used[e.seat] | {e.contract}
    deal = _patch(_current(state), contract=e.contract)
    return _patch(
        state,
        deal=deal,
        used=tuple(used),
        phase=Phase.EXCHANGE,
        turn_number=state.turn_number + 1,
    )


def _hands_completed(state: State, e: HandsCompleted) -> State:
    """A disclosure only: the cards are in the state since the deal."""
    return state


def _exchange_planned(state: State, e: ExchangePlanned) -> State:
    deal = _patch(_current(state), transfers=e.transfers, transfer_index=0, transfer_done=0)
    return _patch(state, deal=deal)


def _card_exchanged(state: State, e: CardExchanged) -> State:
    d = _current(state)
    hands = d.hands
    if e.returned != e.given:
        hands = _with_hand(hands, e.giver, (*_without(hands[e.giver], e.given), e.returned))
        hands = _with_hand(hands, e.receiver, (*_without(hands[e.receiver], e.returned), e.given))
    done = d.transfer_done + 1
    index = d.transfer_index
    if done >= d.transfers[index].count:
        index, done = index + 1, 0
    deal = _patch(
        d,
        hands=hands,
        transfer_index=index,
        transfer_done=done,
        exchange_log=(*d.exchange_log, e),
    )
    return _patch(state, deal=deal, turn_number=state.turn_number + 1)


def _exchange_skipped(state: State, e: ExchangeSkipped) -> State:
    d = _current(state)
    deal = _patch(
        d,
        transfer_index=d.transfer_index + 1,
        transfer_done=0,
        exchange_log=(*d.exchange_log, e),
    )
    return _patch(state, deal=deal)


def _talon_taken(state: State, e: TalonTaken) -> State:
    d = _current(state)
    hands = _with_hand(d.hands, e.seat, d.hands[e.seat] + e.cards)
    deal = _patch(d, hands=hands, talon_taken=True)
    return _patch(state, deal=deal, phase=Phase.DISCARD)


def _cards_discarded(state: State, e: CardsDiscarded) -> State:
    d = _current(state)
    hand = d.hands[e.seat]
    for c in e.cards:
        hand = _without(hand, c)
    deal = _patch(
        d, hands=_with_hand(d.hands, e.seat, hand), discards=e.cards, leader=e.seat, trick=()
    )
    return _patch(state, deal=deal, phase=Phase.PLAY, turn_number=state.turn_number + 1)


def _card_played(state: State, e: CardPlayed) -> State:
    """The hottest transition of all, hence `_patch` written out."""
    d = _current(state)
    seat = e.seat
    hands = d.hands
    deal_attributes = d.__dict__.copy()
    deal_attributes["hands"] = (*hands[:seat], _without(hands[seat], e.card), *hands[seat + 1 :])
    deal_attributes["trick"] = (*d.trick, e.card)
    deal = _new(DealState)
    _set(deal, "__dict__", deal_attributes)
    attributes = state.__dict__.copy()
    attributes["deal"] = deal
    attributes["turn_number"] = state.turn_number + 1
    whole = _new(State)
    _set(whole, "__dict__", attributes)
    return whole


def _trick_taken(state: State, e: TrickTaken) -> State:
    d = _current(state)
    tricks = list(d.tricks)
    tricks[e.winner] += 1
    deal = _patch(d, trick=(), leader=e.winner, tricks=tuple(tricks), completed=(*d.completed, e))
    return _patch(state, deal=deal)


def _deal_scored(state: State, e: DealScored) -> State:
    return _patch(state, records=(*state.records, e), totals=e.totals, phase=Phase.DEAL)


def _deal_seed_revealed(state: State, e: DealSeedRevealed) -> State:
    return _patch(state, deal=_patch(_current(state), seed_revealed=True))


def _game_ended(state: State, e: GameEnded) -> State:
    return _patch(state, phase=Phase.OVER, places=e.places, totals=e.totals)


_EVOLVERS: dict[type, Callable[[State, Any], State]] = {
    FirstDealerDrawn: _first_dealer_drawn,
    CardsDealt: _cards_dealt,
    ContractChosen: _contract_chosen,
    HandsCompleted: _hands_completed,
    ExchangePlanned: _exchange_planned,
    CardExchanged: _card_exchanged,
    ExchangeSkipped: _exchange_skipped,
    TalonTaken: _talon_taken,
    CardsDiscarded: _cards_discarded,
    CardPlayed: _card_played,
    TrickTaken: _trick_taken,
    DealScored: _deal_scored,
    DealSeedRevealed: _deal_seed_revealed,
    GameEnded: _game_ended,
}


def evolve(state: State, event: Event) -> State:
    """The state after `event`. Raises KeyError for an event of another game."""
    return _EVOLVERS[type(event)](state, event)


def evolve_all(state: State, events: Iterable[Event]) -> State:
    for event in events:
        state = _EVOLVERS[type(event)](state, event)
    return state
