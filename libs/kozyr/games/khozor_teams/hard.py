"""Khözör at the `hard` level (its `GameInfo.levels`' `Searcher`): PIMC
(`kozyr.games.search`) on the pure engine, from neutral data — the seat's view as the
game's view dict and the moves it lists (`kozyr.games.info.Decision`).

What the seat knows is its view: its hand, the pile of the current cycle, every hand's
count, the reserve's and the sleeping pile's counts. Its history adds no card — the
engine's `redact` never names one (docs/rules-khozor.md, "History": a card shown once
may later fall asleep, and sleeping cards are never shown again) — so a world deals the
cards the seat has not in front of it (43 minus its hand and the pile) at random to
the other seven hands, the reserve (in a random order: the refills' order) and the
sleeping pile, each to its count.

Decisions searched: the lead (the normal one, every single card, a few sets) and the
defence (the normal one, the pickup, the cheapest beats). A world is played out to the
round's end by `normal` for every seat; a move is worth 1 when the seat's team wins
the round, 0 otherwise. The opener's confirmation is `normal`'s (the seat with the
fewest cards). Signals are not read (RULES.md): a world has every signal off.
"""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from kozyr.games.cards import Card, Suit, parse_card
from kozyr.games.info import Decision, Move
from kozyr.games.khozor_teams import computer as normal_khozor
from kozyr.games.khozor_teams.beating import beating_sets
from kozyr.games.khozor_teams.evolve import evolve
from kozyr.games.khozor_teams.messages import Beat, Command, Lead, PickUp, RoundWon
from kozyr.games.khozor_teams.model import (
    DECK,
    SEATS,
    Phase,
    Play,
    PlayKind,
    RoundResult,
    State,
    Team,
    team_of,
)
from kozyr.games.khozor_teams.moves import legal_commands
from kozyr.games.khozor_teams.rules import decide
from kozyr.games.search import pimc

ROLLOUT_DECISIONS = 600
"""A playout that has not ended its round after this many decisions counts as a draw."""
CANDIDATES = 10
"""The most moves one search compares."""
MARGIN_WEIGHT = 0.01
"""A playout's value per card left in the losing team's hands (a round is worth 1)."""


@dataclass(frozen=True)
class Facts:
    """Everything one Khözör seat knows about where the cards are."""

    seat: int
    hand: tuple[Card, ...]
    pile: tuple[Play, ...]
    counts: tuple[int, ...]
    reserve: int
    sleeping: int


def facts(view: Mapping[str, Any], me: int) -> Facts:
    """What seat `me` sees: its view (its history adds no card)."""
    pile = tuple(
        Play(int(p.get("seat") or 0), PlayKind(p.get("kind") or ""), _cards(p.get("cards")))
        for p in view.get("pile") or ()
    )
    return Facts(
        seat=me,
        hand=_cards(view.get("hand")),
        pile=pile,
        counts=tuple(int(n) for n in view.get("hand_counts") or ()),
        reserve=int(view.get("reserve_count") or 0),
        sleeping=int(view.get("sleeping_count") or 0),
    )


def _cards(texts: Sequence[str] | None) -> tuple[Card, ...]:
    return tuple(parse_card(t) for t in texts or ())


@dataclass(frozen=True)
class Deal:
    hands: tuple[tuple[Card, ...], ...]
    reserve: tuple[Card, ...]
    sleeping: tuple[Card, ...]


def sample(f: Facts, rng: random.Random) -> Deal | None:
    """The unseen cards dealt at random to the other hands, the reserve and the sleeping
    pile, each to its count; None when the counts do not add up (a view out of step)."""
    seen = set(f.hand) | {c for play in f.pile for c in play.cards}
    unseen = [c for c in DECK if c not in seen]
    others = [s for s in range(SEATS) if s != f.seat]
    if sum(f.counts[s] for s in others) + f.reserve + f.sleeping != len(unseen):
        return None
    rng.shuffle(unseen)
    hands: list[tuple[Card, ...]] = [()] * SEATS
    hands[f.seat] = f.hand
    at = 0
    for s in others:
        hands[s] = tuple(unseen[at : at + f.counts[s]])
        at += f.counts[s]
    reserve = tuple(unseen[at : at + f.reserve])
    return Deal(tuple(hands), reserve, tuple(unseen[at + f.reserve :]))


def world(view: Mapping[str, Any], f: Facts, deal: Deal) -> State:
    """The engine state of the seat's view with `deal`'s cards in the hidden places."""
    return State(
        turn_seconds=int(view.get("turn_seconds") or 0) or 180,
        phase=Phase.PLAY,
        decisions=int((view.get("turn") or {}).get("number") or 0),
        round_no=int(view.get("round") or 0),
        trump=Suit(view.get("trump") or ""),
        opening_team=Team(view["opening_team"]) if view.get("opening_team") is not None else None,
        opener=int(view["opener"]) if view.get("opener") is not None else None,
        to_act=f.seat,
        hands=deal.hands,
        reserve=deal.reserve,
        pile=f.pile,
        sleeping=deal.sleeping,
        results=tuple(
            RoundResult(
                int(r.get("round") or 0), Team(r.get("team") or ""), int(r.get("seat") or 0)
            )
            for r in view.get("round_winners") or ()
        ),
        commitment="",
        seed=bytes(32),  # a placeholder: the playout stops at the round's end, before the reveal
    )


def policy(state: State, seat: int) -> Command:
    """`normal` on an engine state: the playouts' move for every seat."""
    trump = state.trump
    assert trump is not None
    hand = state.hands[seat]
    if not state.pile:
        leads = [c.cards for c in legal_commands(state, seat) if isinstance(c, Lead)]
        return Lead(seat, normal_khozor.choose_lead(leads, trump))
    beats = beating_sets(hand, state.pile[-1].cards, trump, 1)
    if not beats or normal_khozor.pick_up_instead(beats[0], len(state.reserve), trump):
        return PickUp(seat)
    return Beat(seat, beats[0])


def outcome(state: State, command: Command, team: Team) -> float:
    """About 1 when `team` wins the round after `command` (then `normal` for everybody),
    about 0 when it loses — shaded by the cards the losing team is left with
    (`MARGIN_WEIGHT` a card): a near loss is worth more than a rout, which tells moves
    apart on far fewer worlds than the bare win or loss."""
    for _ in range(ROLLOUT_DECISIONS):
        for event in decide(state, command):
            if isinstance(event, RoundWon):
                losers = event.team.other.seats
                left = MARGIN_WEIGHT * sum(len(state.hands[s]) for s in losers)
                return 1.0 + left if event.team is team else -left
            state = evolve(state, event)
        assert state.to_act is not None
        command = policy(state, state.to_act)
    return 0.5


def _command(seat: int, move: Move) -> Command:
    kind, fields = move
    if kind == "lead":
        return Lead(seat, normal_khozor.move_cards(fields))
    if kind == "beat":
        return Beat(seat, normal_khozor.move_cards(fields))
    return PickUp(seat)


def candidates(moves: Sequence[Move], fallback: Move) -> list[Move]:
    """The normal move first, then the listed ones (single leads and the pickup before
    sets and dearer beats), at most `CANDIDATES`."""

    def order(move: Move) -> int:
        kind, fields = move
        if kind == "pick_up" or (kind == "lead" and len(fields.get("cards", ())) == 1):
            return 0
        return 1

    rest = sorted((m for m in moves if m != fallback), key=order)
    return [fallback, *rest][:CANDIDATES]


def choose(decision: Decision) -> Move:
    """The hard move: the normal one unless the search finds a better one (signal
    toggles are no answer to the turn: `true_signal_moves` makes them)."""
    view, me = decision.view, decision.seat
    moves = [m for m in decision.moves if m[0] != "toggle_signal"] or list(decision.moves)
    fallback = normal_khozor.normal(view, moves)
    kind = moves[0][0]
    if kind not in ("lead", "beat", "pick_up") or len(moves) == 1 or view.get("trump") is None:
        return fallback
    actions = candidates(moves, fallback)
    commands = [_command(me, a) for a in actions]
    f = facts(view, me)
    team = team_of(me)
    rng = random.Random(decision.seed)

    def draw(r: random.Random) -> State | None:
        deal = sample(f, r)
        return None if deal is None else world(view, f, deal)

    found = pimc(commands, draw, lambda state, c: outcome(state, c, team), decision, rng)
    return actions[found.best]
