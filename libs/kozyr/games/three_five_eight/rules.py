"""decide, legal moves, timeouts and turns: the checks of 3-5-8.

`decide` validates one command against the state and returns the events it causes,
including every automatic follow-up (the forced return of an exchange is inside
`CardExchanged`; skipped gives, the talon pickup, trick results, scoring, the seed
reveal and the game's end are separate events). After a command the state always
waits for a real decision: a seat's move or the table's seed.
"""

from __future__ import annotations

from collections.abc import Callable
from itertools import combinations
from typing import Any

from kozyr.games import fair_deal
from kozyr.games.cards import Card
from kozyr.games.decider import CHANCE, Turn, command_check
from kozyr.games.three_five_eight import exchange, scoring
from kozyr.games.three_five_eight.model import (
    COMMANDS,
    DEALS,
    DECK,
    FIRST_LOOK,
    HAND_SIZE,
    SEATS,
    TALON_SIZE,
    TRICKS_PER_DEAL,
    CardExchanged,
    CardPlayed,
    CardsDealt,
    CardsDiscarded,
    ChooseContract,
    Command,
    Contract,
    ContractChosen,
    DealCards,
    DealScored,
    DealSeedRevealed,
    DealState,
    Discard,
    DrawFirstDealer,
    Event,
    ExchangePlanned,
    ExchangeSkipped,
    FirstDealerDrawn,
    GameEnded,
    GiveCard,
    HandsCompleted,
    Phase,
    PlayCard,
    State,
    TalonTaken,
    TrickTaken,
)
from kozyr.games.three_five_eight.ranking import low_key, trick_winner_offset
from kozyr.games.three_five_eight.texts import error
from kozyr.games.three_five_eight.transitions import evolve, find

TURN_KINDS: dict[Phase, str] = {
    Phase.DRAW_DEALER: CHANCE,
    Phase.DEAL: CHANCE,
    Phase.CONTRACT: "contract",
    Phase.EXCHANGE: "exchange_give",
    Phase.DISCARD: "discard",
    Phase.PLAY: "play",
    Phase.OVER: "over",
}


# --------------------------------------------------------------------------- turns


def acting_seat(state: State) -> int | None:
    """The seat that must decide now, or None when the table (or nobody) acts."""
    d = state.deal
    phase = state.phase
    if d is None or phase is Phase.DEAL or phase is Phase.OVER:
        return None
    if phase is Phase.PLAY:
        return (d.leader + len(d.trick)) % SEATS
    if phase is Phase.EXCHANGE:
        return d.transfers[d.transfer_index].giver
    return d.declarer  # CONTRACT and DISCARD


def turn(state: State) -> Turn:
    """Who acts next and how; `number` grows by one with every settled decision."""
    seat = acting_seat(state)
    if seat is None:
        return Turn(state.turn_number, TURN_KINDS[state.phase])
    return Turn(state.turn_number, TURN_KINDS[state.phase], (seat,), state.options.turn_seconds)


def is_over(state: State) -> bool:
    return state.phase is Phase.OVER


# ---------------------------------------------------------------------- legality


def playable(d: DealState, hand: tuple[Card, ...], must_trump: bool) -> tuple[Card, ...]:
    """Cards of `hand` that may go to the current trick.

    Follow the suit led if possible (no need to beat). Void in it: anything — unless
    `must_trump` is on and the hand holds a trump, then a trump (no need to overtrump).
    """
    if not d.trick:
        return hand
    led = d.trick[0].suit
    follow = tuple(c for c in hand if c.suit is led)
    if follow:
        return follow
    trump = d.trump
    if must_trump and trump is not None:
        trumps = tuple(c for c in hand if c.suit is trump)
        if trumps:
            return trumps
    return hand


def _check_turn(state: State, seat: int, phase: Phase) -> DealState:
    if state.phase is Phase.OVER:
        raise error("GAME_OVER")
    if acting_seat(state) != seat:
        raise error("NOT_YOUR_TURN", seat=seat)
    if state.phase is not phase:
        raise error("WRONG_PHASE", phase=state.phase.value)
    assert state.deal is not None
    return state.deal


def _check_seed(state: State, seed: bytes, phase: Phase) -> bytes:
    if state.phase is Phase.OVER:
        raise error("GAME_OVER")
    if state.phase is not phase:
        raise error("WRONG_PHASE", phase=state.phase.value)
    if len(seed) != fair_deal.SEED_BYTES:
        raise error("INVALID_SEED")
    return seed


_PLAYS: tuple[dict[int, PlayCard], ...] = tuple(
    {id(c): PlayCard(seat, c) for c in DECK} for seat in range(SEATS)
)
"""Ready-made PlayCard commands by interned card identity: commands are immutable
values, and `legal_commands` runs before every card of every game (bots, bench). The
interned cards live as long as the process, so their ids are never reused."""

_PLAYED: tuple[dict[int, CardPlayed], ...] = tuple(
    {id(c): CardPlayed(seat, c) for c in DECK} for seat in range(SEATS)
)
"""Ready-made CardPlayed events, for the same reason as `_PLAYS`."""


# ----------------------------------------------------------------- follow-up events


def _automatic(state: State) -> Event | None:
    """The next event the table makes by itself, or None when a decision is due."""
    d = state.deal
    if d is None:
        return None
    phase = state.phase
    if phase is Phase.EXCHANGE:
        if d.transfer_index >= len(d.transfers):
            return TalonTaken(d.declarer, d.talon)
        leg = d.transfers[d.transfer_index]
        if not exchange.giveable(d.hands[leg.giver], d.trump):
            return ExchangeSkipped(leg.giver, leg.receiver, leg.count - d.transfer_done)
        return None
    if phase is Phase.PLAY:
        if len(d.trick) == SEATS:
            winner = (d.leader + trick_winner_offset(d.trick, d.trump)) % SEATS
            return TrickTaken(len(d.completed) + 1, d.leader, winner, d.trick)
        if len(d.completed) == TRICKS_PER_DEAL:
            return _scoring(state, d)
        return None
    if phase is Phase.DEAL:
        if not d.seed_revealed:
            return DealSeedRevealed(d.number, d.commitment, d.seed)
        if d.number == DEALS and state.places is None:
            return GameEnded(state.totals, scoring.places(state.totals))
    return None


def _scoring(state: State, d: DealState) -> DealScored:
    assert d.contract is not None
    target = scoring.targets(d.contract, d.dealer)
    points = scoring.points(d.contract, target, d.tricks)
    totals = tuple(t + p for t, p in zip(state.totals, points, strict=True))
    return DealScored(d.number, d.dealer, d.contract, target, d.tricks, points, totals)


def _settle(state: State, events: list[Event]) -> list[Event]:
    """Append the automatic follow-ups of `events` until a decision is due."""
    for e in events:
        state = evolve(state, e)
    while (follow := _automatic(state)) is not None:
        events.append(follow)
        state = evolve(state, follow)
    return events


# ------------------------------------------------------------------------- decide


def _draw_first_dealer(state: State, cmd: DrawFirstDealer) -> list[Event]:
    seed = _check_seed(state, cmd.seed, Phase.DRAW_DEALER)
    return [FirstDealerDrawn(fair_deal.draw_index(seed, SEATS), seed)]


def deal_from_seed(seed: bytes) -> tuple[tuple[tuple[Card, ...], ...], tuple[Card, ...]]:
    """(hands, talon) of a seed: shuffled deck positions 16s..16s+15 → seat s, 48..51 → talon.

    Seats are absolute (not relative to the dealer), hands keep deck order, so the
    first six cards of seat s are deck positions 16s..16s+5 (docs/fair-deal.md).
    """
    deck = fair_deal.shuffle(DECK, seed)
    hands = tuple(deck[HAND_SIZE * s : HAND_SIZE * (s + 1)] for s in range(SEATS))
    talon = deck[HAND_SIZE * SEATS : HAND_SIZE * SEATS + TALON_SIZE]
    return hands, talon


def _deal_cards(state: State, cmd: DealCards) -> list[Event]:
    seed = _check_seed(state, cmd.seed, Phase.DEAL)
    assert state.first_dealer is not None
    number = 1 if state.deal is None else state.deal.number + 1
    dealer = (state.first_dealer + number - 1) % SEATS
    hands, talon = deal_from_seed(seed)
    return [CardsDealt(number, dealer, fair_deal.commitment(seed), seed, hands, talon)]


def _choose_contract(state: State, cmd: ChooseContract) -> list[Event]:
    d = _check_turn(state, cmd.seat, Phase.CONTRACT)
    contract = cmd.contract
    if contract in state.used[cmd.seat]:
        raise error("CONTRACT_ALREADY_USED", contract=contract.value)
    rests = tuple(hand[FIRST_LOOK:] for hand in d.hands)
    events: list[Event] = [
        ContractChosen(d.number, cmd.seat, contract),
        HandsCompleted(d.number, rests),
    ]
    previous = state.records[-1].points if state.records else None
    legs = exchange.plan(previous, contract, scoring.targets(contract, d.dealer))
    if legs:
        events.append(ExchangePlanned(d.number, legs))
    return _settle(state, events)


def _give_card(state: State, cmd: GiveCard) -> list[Event]:
    d = _check_turn(state, cmd.seat, Phase.EXCHANGE)
    hand = d.hands[cmd.seat]
    at = find(hand, cmd.card)
    if at < 0:
        raise error("CARD_NOT_IN_HAND", card=cmd.card)
    card = hand[at]
    if card.suit is d.trump:
        raise error("TRUMP_NOT_EXCHANGEABLE", card=card)
    leg = d.transfers[d.transfer_index]
    returned = exchange.forced_return(d.hands[leg.receiver], card)
    give = CardExchanged(leg.giver, leg.receiver, d.transfer_done + 1, card, returned)
    return _settle(state, [give])


def _discard(state: State, cmd: Discard) -> list[Event]:
    d = _check_turn(state, cmd.seat, Phase.DISCARD)
    wanted = cmd.cards
    if len(wanted) != TALON_SIZE or len(set(wanted)) != TALON_SIZE:
        raise error("DISCARD_FOUR_CARDS", count=len(wanted))
    hand = d.hands[cmd.seat]
    cards = []
    for c in wanted:
        at = find(hand, c)
        if at < 0:
            raise error("CARD_NOT_IN_HAND", card=c)
        cards.append(hand[at])
    return [CardsDiscarded(cmd.seat, tuple(cards))]


def _play_card(state: State, cmd: PlayCard) -> list[Event]:
    d = state.deal
    seat = cmd.seat
    if not (  # the usual case, checked inline; `_check_turn` names any error
        state.phase is Phase.PLAY and d is not None and (d.leader + len(d.trick)) % SEATS == seat
    ):
        d = _check_turn(state, seat, Phase.PLAY)
    hand = d.hands[seat]
    at = find(hand, cmd.card)
    if at < 0:
        raise error("CARD_NOT_IN_HAND", card=cmd.card)
    card = hand[at]  # the interned card, whatever the command held
    if d.trick and card.suit is not d.trick[0].suit:
        _check_void_play(state, d, hand, card)
    played = _PLAYED[seat].get(id(card)) or CardPlayed(seat, card)
    if len(d.trick) < SEATS - 1:
        return [played]  # the hot path: nothing follows before the trick is full
    if len(d.completed) < TRICKS_PER_DEAL - 1:
        cards = (*d.trick, card)
        winner = (d.leader + trick_winner_offset(cards, d.trump)) % SEATS
        return [played, TrickTaken(len(d.completed) + 1, d.leader, winner, cards)]
    return _settle(state, [played])  # the deal's last card: scoring and more


def _check_void_play(state: State, d: DealState, hand: tuple[Card, ...], card: Card) -> None:
    led = d.trick[0].suit
    assert led is not None
    if any(c.suit is led for c in hand):
        raise error("MUST_FOLLOW_SUIT", suit=led.symbol, card=card)
    trump = d.trump
    if (
        state.options.must_trump
        and trump is not None
        and card.suit is not trump
        and any(c.suit is trump for c in hand)
    ):
        raise error("MUST_TRUMP", suit=led.symbol, trump=trump.symbol, card=card)


_DECIDERS: dict[type, Callable[[State, Any], list[Event]]] = {
    DrawFirstDealer: _draw_first_dealer,
    DealCards: _deal_cards,
    ChooseContract: _choose_contract,
    GiveCard: _give_card,
    Discard: _discard,
    PlayCard: _play_card,
}


_check_command = command_check(COMMANDS, SEATS)


def decide(state: State, command: object) -> list[Event]:
    """The events of a legal command; RuleError (with a reason code) for an illegal one.

    Any object is accepted and judged: one that is not a well-formed command of this
    game is refused like an illegal move (`kozyr.games.decider.command_check`).
    """
    _check_command(command)
    return _DECIDERS[type(command)](state, command)


# ------------------------------------------------------------------- legal moves


def legal_commands(state: State, seat: int) -> list[Command]:
    """Every command `seat` may send now ([] when it is not that seat's decision).

    Discards are listed as every 4-card combination of the hand (up to 4 845), each
    in hand order.
    """
    if acting_seat(state) != seat:
        return []
    d = state.deal
    assert d is not None
    phase = state.phase
    hand = d.hands[seat]
    if phase is Phase.PLAY:
        plays = _PLAYS[seat]
        return [
            plays.get(id(c)) or PlayCard(seat, c)
            for c in playable(d, hand, state.options.must_trump)
        ]
    if phase is Phase.CONTRACT:
        return [ChooseContract(seat, c) for c in Contract if c not in state.used[seat]]
    if phase is Phase.EXCHANGE:
        return [GiveCard(seat, c) for c in exchange.giveable(hand, d.trump)]
    return [Discard(seat, combo) for combo in combinations(hand, TALON_SIZE)]


def default_command(state: State, seat: int) -> Command:
    """The clock's move for a seat whose time ran out (RULES.md "Timeouts").

    Contract: the first unused of ♠ ♥ ♦ ♣ NT MT. Exchange: the lowest non-trump.
    Discard: the 4 lowest non-trumps, then the lowest trumps. Play: the lowest legal
    card. "Lowest" is by rank, ties by suit order ♣ ♦ ♥ ♠.
    """
    if state.phase is Phase.OVER:
        raise error("GAME_OVER")
    if acting_seat(state) is None:
        raise error("NOT_A_PLAYER_MOVE")
    if acting_seat(state) != seat:
        raise error("NOT_YOUR_TURN", seat=seat)
    d = state.deal
    assert d is not None
    hand = d.hands[seat]
    phase = state.phase
    if phase is Phase.CONTRACT:
        return ChooseContract(seat, next(c for c in Contract if c not in state.used[seat]))
    if phase is Phase.EXCHANGE:
        return GiveCard(seat, min(exchange.giveable(hand, d.trump), key=low_key))
    if phase is Phase.DISCARD:
        trump = d.trump
        ordered = sorted(hand, key=lambda c: (c.suit is trump and trump is not None, low_key(c)))
        return Discard(seat, tuple(ordered[:TALON_SIZE]))
    return PlayCard(seat, min(playable(d, hand, state.options.must_trump), key=low_key))


def chance_command(state: State, seed: bytes) -> Command:
    """The table's move when `turn(state).is_chance`: a fresh 32-byte seed."""
    if state.phase is Phase.DRAW_DEALER:
        return DrawFirstDealer(seed)
    if state.phase is Phase.DEAL:
        return DealCards(seed)
    if state.phase is Phase.OVER:
        raise error("GAME_OVER")
    raise error("WRONG_PHASE", phase=state.phase.value)
