"""Higher card wins: a two-seat game that exists only in the tests, to prove that a game
is one plugin. Its rules satisfy `kozyr.games.decider.Decider` like the real games do.

Each of two deals gives both seats four cards of a 32-card deck (fair-deal shuffle of
the table's seed, commitment published at once, seed revealed when the deal ends). In
each round the leader plays a card, then the other seat; the higher card wins the round
and a point (rank 7..A, ties broken by suit ♣ < ♦ < ♥ < ♠) and leads the next one.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any

from kozyr.games import fair_deal
from kozyr.games.cards import Card, Rank, RankOrder
from kozyr.games.codec import registry_of, to_json
from kozyr.games.decider import CHANCE, Seat, Turn, command_check
from kozyr.games.errors import COMMON_TEXTS, OptionsError, rule_error
from kozyr.games.standing import Standing

GAME_ID = "higher_card"
SEATS = 2
DEALS = 2
HAND = 4
TURN_SECONDS = 60
"""Each play's clock: the game has no options, so a fixed one."""
RANKS = RankOrder(
    (Rank.SEVEN, Rank.EIGHT, Rank.NINE, Rank.TEN, Rank.JACK, Rank.QUEEN, Rank.KING, Rank.ACE)
)
DECK: tuple[Card, ...] = RANKS.deck()


@dataclass(frozen=True, slots=True)
class DealCards:
    seed: bytes


@dataclass(frozen=True, slots=True)
class PlayCard:
    seat: Seat
    card: Card


Command = DealCards | PlayCard
COMMANDS: tuple[type, ...] = (DealCards, PlayCard)


@dataclass(frozen=True, slots=True)
class CardsDealt:
    deal: int
    commitment: str
    seed: bytes
    hands: tuple[tuple[Card, ...], ...]
    stock: tuple[Card, ...]


@dataclass(frozen=True, slots=True)
class CardPlayed:
    seat: int
    card: Card


@dataclass(frozen=True, slots=True)
class RoundWon:
    seat: int


@dataclass(frozen=True, slots=True)
class DealSeedRevealed:
    deal: int
    seed: bytes
    commitment: str


@dataclass(frozen=True, slots=True)
class GameEnded:
    scores: tuple[int, ...]


Event = CardsDealt | CardPlayed | RoundWon | DealSeedRevealed | GameEnded
EVENTS: tuple[type, ...] = (CardsDealt, CardPlayed, RoundWon, DealSeedRevealed, GameEnded)
EVENT_TYPES = registry_of(EVENTS)


@dataclass(frozen=True, slots=True)
class State:
    """`hands` and `stock` of the current deal; `played`: (seat, card) of this round."""

    deal: int = 0
    hands: tuple[tuple[Card, ...], ...] = ((), ())
    stock: tuple[Card, ...] = ()
    seed: bytes = b""
    commitment: str = ""
    seed_revealed: bool = False
    played: tuple[tuple[int, Card], ...] = ()
    leader: int = 0
    scores: tuple[int, ...] = (0, 0)
    decisions: int = 0
    over: bool = False


def strength(c: Card) -> tuple[int, int]:
    assert c.rank is not None
    assert c.suit is not None
    return RANKS.strength(c.rank), c.suit.order


def initial_state(options: Mapping[str, Any]) -> State:
    """No options at all: anything given is refused (a typo must not mean "default")."""
    if options:
        raise OptionsError(f"higher_card has no options, got {', '.join(map(str, options))}")
    return State()


def turn(state: State) -> Turn:
    if state.over:
        return Turn(state.decisions, "over")
    if not any(state.hands):
        return Turn(state.decisions, CHANCE)
    seat = state.leader if not state.played else 1 - state.leader
    return Turn(state.decisions, "play", (seat,), TURN_SECONDS)


def is_over(state: State) -> bool:
    return state.over


_check_command = command_check(COMMANDS, SEATS)


def decide(state: State, command: object) -> list[Event]:
    _check_command(command)  # like every game: a malformed command is a RuleError
    t = turn(state)
    if state.over:
        raise rule_error(COMMON_TEXTS, "GAME_OVER")
    if isinstance(command, DealCards):
        if not t.is_chance:
            raise rule_error(COMMON_TEXTS, "WRONG_PHASE")
        deck = fair_deal.shuffle(DECK, command.seed)
        hands = (deck[:HAND], deck[HAND : 2 * HAND])
        commitment = fair_deal.commitment(command.seed)
        return [CardsDealt(state.deal + 1, commitment, command.seed, hands, deck[2 * HAND :])]
    if not isinstance(command, PlayCard) or t.is_chance:
        raise rule_error(COMMON_TEXTS, "WRONG_PHASE")
    if command.seat not in t.seats:
        raise rule_error(COMMON_TEXTS, "NOT_YOUR_TURN")
    if command.card not in state.hands[command.seat]:
        raise rule_error(COMMON_TEXTS, "CARD_NOT_IN_HAND", card=str(command.card))
    events: list[Event] = [CardPlayed(command.seat, command.card)]
    if not state.played:
        return events
    (first_seat, first), second = state.played[0], command.card
    winner = first_seat if strength(first) > strength(second) else command.seat
    events.append(RoundWon(winner))
    if len(state.hands[command.seat]) == 1:  # that was the deal's last card
        events.append(DealSeedRevealed(state.deal, state.seed, state.commitment))
        if state.deal == DEALS:
            scores = list(state.scores)
            scores[winner] += 1
            events.append(GameEnded(tuple(scores)))
    return events


def evolve(state: State, event: Event) -> State:
    match event:
        case CardsDealt(deal=deal, commitment=commitment, seed=seed, hands=hands, stock=stock):
            return replace(
                state,
                deal=deal,
                hands=hands,
                stock=stock,
                seed=seed,
                commitment=commitment,
                seed_revealed=False,
                decisions=state.decisions + 1,
            )
        case CardPlayed(seat=seat, card=card):
            held = list(state.hands)
            held[seat] = tuple(c for c in held[seat] if c != card)
            return replace(
                state,
                hands=tuple(held),
                played=(*state.played, (seat, card)),
                decisions=state.decisions + 1,
            )
        case RoundWon(seat=seat):
            scores = list(state.scores)
            scores[seat] += 1
            return replace(state, played=(), leader=seat, scores=tuple(scores))
        case DealSeedRevealed():
            return replace(state, seed_revealed=True)
        case GameEnded():
            return replace(state, over=True)
    raise TypeError(f"not a higher_card event: {event!r}")


def legal_commands(state: State, seat: int) -> list[Command]:
    t = turn(state)
    if t.kind != "play" or seat not in t.seats:
        return []
    return [PlayCard(seat, c) for c in state.hands[seat]]


def default_command(state: State, seat: int) -> Command:
    """The weakest card of the hand."""
    return PlayCard(seat, min(state.hands[seat], key=strength))


def chance_command(state: State, seed: bytes) -> Command:
    return DealCards(seed)


def _check_viewer(seat: int | None) -> None:
    if seat is not None and seat not in (0, 1):
        raise ValueError(f"no seat {seat} in higher_card")


def view(state: State, seat: int | None) -> dict[str, Any]:
    """A seat sees its own hand, the other's card count, the round's plays and scores."""
    _check_viewer(seat)
    winner = None
    if state.over and state.scores[0] != state.scores[1]:
        winner = 0 if state.scores[0] > state.scores[1] else 1
    return {
        "game_id": GAME_ID,
        "seat": seat,
        "deal": state.deal,
        "deals_total": DEALS,
        "hand": None if seat is None else [str(c) for c in state.hands[seat]],
        "hand_counts": [len(h) for h in state.hands],
        "played": [{"seat": s, "card": str(c)} for s, c in state.played],
        "scores": list(state.scores),
        "winner": winner,
        "over": state.over,
    }


def result(state: State) -> dict[str, Any]:
    return {"final": state.over, "scores": list(state.scores)}


def standing(state: State) -> Standing:
    """A deal has ended once its seed is revealed; scores are rounds won."""
    ended = state.deal if state.seed_revealed else max(state.deal - 1, 0)
    places = tuple(1 + sum(other > mine for other in state.scores) for mine in state.scores)
    return Standing(ended, state.scores, places)


def redact(event: Event, seat: int | None) -> dict[str, Any] | None:
    """Everything is public but the hands (each its own seat's) and an unrevealed seed."""
    _check_viewer(seat)
    if isinstance(event, CardsDealt):
        shown: dict[str, Any] = {
            "deal": event.deal,
            "commitment": event.commitment,
            "hand_counts": [len(h) for h in event.hands],
        }
        if seat is not None:
            shown["hand"] = [str(c) for c in event.hands[seat]]
        return shown
    data = to_json(event)
    assert isinstance(data, dict)
    return data
