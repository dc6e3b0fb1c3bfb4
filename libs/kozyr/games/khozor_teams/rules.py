"""decide: check a command against the rules and say what happened, as events.

One command may yield several events, in this order: the move itself; the refill
(`ReserveDrawn`); signals the new hand breaks; then either the end of the round
(`RoundWon`, remaining signals cleared, `DealSeedRevealed`, maybe `MatchWon`) when
the mover's hand is empty, or `CycleSlept` after the seventh beat.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from kozyr.games import fair_deal
from kozyr.games.cards import Card
from kozyr.games.decider import command_check
from kozyr.games.errors import RuleError
from kozyr.games.khozor_teams.beating import assign_beats, index_of, is_khozor_card
from kozyr.games.khozor_teams.leads import LEAD_SIZES, has_joker, is_set_play
from kozyr.games.khozor_teams.messages import (
    COMMANDS,
    Beat,
    CardsBeaten,
    CardsLed,
    ConfirmOpener,
    CycleSlept,
    DealRound,
    DealSeedRevealed,
    DrawOpeningTeam,
    Event,
    Lead,
    MatchWon,
    OpenerConfirmed,
    OpeningTeamDrawn,
    PickUp,
    PilePickedUp,
    ReserveDrawn,
    RoundDealt,
    RoundWon,
    SignalCleared,
    ToggleSignal,
)
from kozyr.games.khozor_teams.model import (
    CYCLE_PLAYS,
    DECK,
    FIVE_CARD_LEAD_MIN_HAND,
    HAND_SIZE,
    ROUNDS_TO_WIN,
    SEATS,
    THREE_CARD_LEAD_MIN_HAND,
    Phase,
    State,
    Team,
    team_of,
    trump_of_round,
)
from kozyr.games.khozor_teams.signals import broken_signals, decide_toggle, round_end_clears
from kozyr.games.khozor_teams.texts import error

# ------------------------------------------------------------------ chance


def _checked_seed(seed: bytes) -> bytes:
    if len(seed) != fair_deal.SEED_BYTES:
        raise error("INVALID_SEED")
    return seed


def _chance_phase(state: State, phase: Phase) -> None:
    if state.phase is Phase.OVER:
        raise error("GAME_OVER")
    if state.phase is not phase:
        raise error("WRONG_PHASE")


def _draw_opening_team(state: State, command: DrawOpeningTeam) -> list[Event]:
    _chance_phase(state, Phase.AWAITING_DRAW)
    seed = _checked_seed(command.seed)
    team = Team.A if fair_deal.draw_index(seed, 2) == 0 else Team.B
    return [OpeningTeamDrawn(seed, fair_deal.commitment(seed), team)]


def deal_from_seed(seed: bytes) -> tuple[tuple[tuple[Card, ...], ...], tuple[Card, ...]]:
    """(hands, reserve): d = shuffle(DECK, seed); seat s gets d[5s:5s+5], reserve d[40:43]."""
    order = fair_deal.shuffle(DECK, seed)
    hands = tuple(order[HAND_SIZE * s : HAND_SIZE * (s + 1)] for s in range(SEATS))
    return hands, order[HAND_SIZE * SEATS :]


def _deal_round(state: State, command: DealRound) -> list[Event]:
    _chance_phase(state, Phase.AWAITING_DEAL)
    seed = _checked_seed(command.seed)
    opening_team = state.next_opening_team
    assert opening_team is not None, "awaiting_deal always follows the opening-team draw"
    hands, reserve = deal_from_seed(seed)
    round_no = state.round_no + 1
    return [
        RoundDealt(
            round_no=round_no,
            trump=trump_of_round(round_no),
            opening_team=opening_team,
            commitment=fair_deal.commitment(seed),
            seed=seed,
            hands=hands,
            reserve=reserve,
        )
    ]


# ------------------------------------------------------------------ opener


def _confirm_opener(state: State, command: ConfirmOpener) -> list[Event]:
    if state.phase is Phase.OVER:
        raise error("GAME_OVER")
    seat = command.seat
    if state.phase is Phase.PLAY:
        raise error("OPENER_ALREADY_CONFIRMED")
    if state.phase is not Phase.CONFIRM_OPENER:
        raise error("WRONG_PHASE")
    team = state.opening_team
    assert team is not None
    if team_of(seat) is not team:
        raise error("NOT_ON_OPENING_TEAM")
    opener = command.opener
    if team_of(opener) is not team:
        raise error("OPENER_NOT_ON_OPENING_TEAM", opener=opener)
    return [OpenerConfirmed(seat, opener)]


# ------------------------------------------------------------------ play


def _check_turn(state: State, seat: int) -> int:
    if state.phase is Phase.OVER:
        raise error("GAME_OVER")
    if state.phase is not Phase.PLAY:
        raise error("WRONG_PHASE")
    if seat != state.to_act:
        raise error("NOT_YOUR_TURN")
    return seat


def _check_cards(hand: Sequence[Card], cards: Sequence[Card]) -> None:
    held = {index_of(c) for c in hand}
    named: set[int] = set()
    for c in cards:
        if not is_khozor_card(c) or index_of(c) not in held:
            raise error("CARD_NOT_IN_HAND", card=c)
        if index_of(c) in named:
            raise error("DUPLICATE_CARD", card=c)
        named.add(index_of(c))


def lead_problem(state: State, cards: Sequence[Card]) -> RuleError | None:
    """Why these cards (already known to be in hand) cannot be led now, or None."""
    size = len(cards)
    if size not in LEAD_SIZES:
        return error("WRONG_CARD_COUNT", expected=(1, 3, 5))
    if size == 1:
        return None
    if has_joker(cards):
        return error("JOKER_NOT_SINGLE")
    if not is_set_play(cards):
        return error("INVALID_LEAD")
    smallest = min(len(h) for h in state.hands)
    if size == 3 and smallest < THREE_CARD_LEAD_MIN_HAND:
        return error("LEAD_NEEDS_THREE_CARDS_EACH")
    if size == 5 and state.reserve:
        return error("LEAD_NEEDS_EMPTY_RESERVE")
    if size == 5 and smallest < FIVE_CARD_LEAD_MIN_HAND:
        return error("LEAD_NEEDS_FIVE_CARDS_EACH")
    return None


def _lead(state: State, command: Lead) -> list[Event]:
    seat = _check_turn(state, command.seat)
    if state.pile:
        raise error("MUST_DEFEND")
    cards = command.cards
    _check_cards(state.hands[seat], cards)
    problem = lead_problem(state, cards)
    if problem is not None:
        raise problem
    return [CardsLed(seat, cards), *_after_play(state, seat, cards, plays_in_cycle=1)]


def beat_problem(state: State, cards: Sequence[Card]) -> RuleError | None:
    """Why these cards (already known to be in hand) do not beat the last play, or None."""
    attack = state.pile[-1].cards
    if len(cards) != len(attack):
        return error("WRONG_CARD_COUNT", expected=len(attack))
    if len(cards) > 1 and has_joker(cards):
        return error("JOKER_NOT_SINGLE")
    assert state.trump is not None
    if assign_beats(cards, attack, state.trump) is None:
        return error("DOES_NOT_BEAT")
    return None


def _beat(state: State, command: Beat) -> list[Event]:
    seat = _check_turn(state, command.seat)
    if not state.pile:
        raise error("NOTHING_TO_BEAT")
    cards = command.cards
    _check_cards(state.hands[seat], cards)
    problem = beat_problem(state, cards)
    if problem is not None:
        raise problem
    plays = len(state.pile) + 1
    return [CardsBeaten(seat, cards), *_after_play(state, seat, cards, plays_in_cycle=plays)]


def _pick_up(state: State, command: PickUp) -> list[Event]:
    seat = _check_turn(state, command.seat)
    if not state.pile:
        raise error("NOTHING_TO_BEAT")
    return [PilePickedUp(seat, tuple(c for play in state.pile for c in play.cards))]


def _after_play(
    state: State, seat: int, cards: tuple[Card, ...], plays_in_cycle: int
) -> list[Event]:
    """Refill, broken signals, then victory or sleep — in the order the rules demand."""
    gone = {index_of(c) for c in cards}
    left = tuple(c for c in state.hands[seat] if index_of(c) not in gone)
    drawn = state.reserve[: max(0, HAND_SIZE - len(left))]
    events: list[Event] = [ReserveDrawn(seat, drawn)] if drawn else []
    hand = left + drawn
    broken = broken_signals(state, seat, hand)
    events.extend(broken)
    if not hand:
        events.extend(_round_end(state, seat, broken))
    elif plays_in_cycle == CYCLE_PLAYS:
        slept = sum(len(p.cards) for p in state.pile) + len(cards)
        events.append(CycleSlept(seat, slept))
    return events


def _round_end(state: State, seat: int, broken: Sequence[SignalCleared]) -> list[Event]:
    team = team_of(seat)
    assert state.seed is not None
    events: list[Event] = [RoundWon(state.round_no, team, seat)]
    events.extend(round_end_clears(state, broken))
    events.append(DealSeedRevealed(state.round_no, state.seed))
    wins = {t: state.wins(t) + (1 if t is team else 0) for t in Team}
    if wins[team] >= ROUNDS_TO_WIN:
        events.append(MatchWon(team, wins[Team.A], wins[Team.B]))
    return events


_HANDLERS: dict[type, Callable[[State, Any], list[Any]]] = {
    DrawOpeningTeam: _draw_opening_team,
    DealRound: _deal_round,
    ConfirmOpener: _confirm_opener,
    Lead: _lead,
    Beat: _beat,
    PickUp: _pick_up,
    ToggleSignal: decide_toggle,
}


_check_command = command_check(COMMANDS, SEATS)


def decide(state: State, command: object) -> list[Event]:
    """The events of a legal command; RuleError (with a reason code) for an illegal one.

    Any object is accepted and judged: one that is not a well-formed command of this
    game is refused like an illegal move (`kozyr.games.decider.command_check`).
    """
    _check_command(command)
    return _HANDLERS[type(command)](state, command)
