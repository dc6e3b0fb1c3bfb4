"""The hard level's sampler never deals a card where the seat knows it cannot be.

Whole games are played in-process; at every decision, what seat 0 knows is built from
its view and its own redacted history (as the bots service builds it from
GetHistory), and worlds are sampled from it. Each is checked against the seat's
knowledge — its own hand is its own, a played card is nowhere, a seat that showed a
void holds none of that suit, an exchange's receiver holds nothing above his forced
return, every count is right — and the knowledge against the real (hidden) state: a
void the seat inferred is a real void, a card it places is really there.
"""

from __future__ import annotations

import random
from typing import Any

import pytest

from kozyr.bots.knowledge import Knowledge, decision_seed, knowledge
from kozyr.bots.levels import Level, choose, turn_moves
from kozyr.bots.search import Budget
from kozyr.client.games import neutral_view
from kozyr.games.cards import Card
from kozyr.games.khozor_teams import hard as hard_khozor
from kozyr.games.three_five_eight import hard as hard_three_five_eight
from kozyr.games.three_five_eight.model import DECK
from kozyr.games.three_five_eight.ranking import strength
from kozyr.table.edge.shown import table_view
from tests.support import tournament
from tests.support.tournament import KHOZOR, THREE_FIVE_EIGHT

ME = 0


def _below_cap(f: hard_three_five_eight.Facts, seat: int, card: Card) -> bool:
    assert card.suit is not None
    return strength(card) < f.caps[seat].get(card.suit, hard_three_five_eight.NO_CAP)


def _positions(game_id: str, seed: int, every: int) -> list[tuple[Knowledge, Any]]:
    """(seat 0's knowledge, the true engine state) at every `every`-th decision; odd
    seeds of 3-5-8 with the `must_trump` option (a void in the suit led and a side card
    thrown shows a void in trumps too)."""
    seats = tournament.SEATS[game_id]
    players = ("hard", *(["easy"] * (seats - 1)))
    options = {"must_trump": True} if game_id == THREE_FIVE_EIGHT and seed % 2 else {}
    game = tournament.start(game_id, players, seed, options)
    rng = random.Random(seed)
    found = []
    step = 0
    while not game.table.is_over:
        seat = game.table.game.turn(game.table.state).seats[0]
        if step % every == 0:
            view = table_view(game.table, ME)
            found.append((Knowledge(view, tuple(game.histories[ME])), game.table.state))
        moves = turn_moves(table_view(game.table, seat))
        tournament.apply(game, seat, rng.choice(moves))
        step += 1
    return found


@pytest.mark.parametrize("seed", range(3))
def test_3_5_8_worlds_keep_to_what_the_seat_knows(seed: int) -> None:
    checked = 0
    for known, truth in _positions(THREE_FIVE_EIGHT, seed, every=7):
        d = truth.deal
        if d is None or truth.phase.value in ("deal", "over", "draw_dealer"):
            continue
        f = hard_three_five_eight.facts(neutral_view(known.view), known.seat, known.events)
        for s in range(3):  # the knowledge is true of the real deal
            assert not any(c.suit in f.voids[s] for c in d.hands[s]), "a void that is none"
            for c in d.hands[s]:
                if c not in f.known[s] and s != ME:
                    assert _below_cap(f, s, c), "a cap the real hand breaks"
            assert f.known[s] <= set(d.hands[s]), "a card placed where it is not"
        assert f.played <= {c for t in d.completed for c in t.cards} | set(d.trick)
        rng = random.Random(seed)
        for _ in range(20):
            deal = hard_three_five_eight.sample(f, rng)
            assert deal is not None
            for s in range(3):
                hand = deal.hands[s]
                assert len(hand) == len(d.hands[s]), "every hand at its count"
                assert not set(hand) & f.played, "a played card dealt again"
                if s == ME:
                    assert set(f.hand) <= set(hand)
                    assert len(set(hand) - set(f.hand)) == f.hidden_own
                else:
                    assert not set(hand) & set(f.hand), "the seat's own card given away"
                    assert not any(c.suit in f.voids[s] for c in hand), "a card in a void"
                    assert all(_below_cap(f, s, c) for c in hand if c not in f.known[s]), (
                        "a card above a forced return"
                    )
                    assert f.known[s] <= set(hand)
            assert len(deal.talon) == (0 if d.talon_taken else 4)
            everything = [*(c for h in deal.hands for c in h), *deal.talon, *deal.discards]
            assert len(everything) == len(set(everything)), "a card dealt twice"
            assert set(everything) | f.played | f.out <= set(DECK)
        checked += 1
    assert checked > 50


def test_3_5_8_knowledge_sees_exchanges_and_voids() -> None:
    """Over a few games the facts the sampler keeps to are really there to keep."""
    caps = voids = known = 0
    for seed in range(3):
        for k, _ in _positions(THREE_FIVE_EIGHT, seed, every=5):
            f = hard_three_five_eight.facts(neutral_view(k.view), k.seat, k.events)
            caps += sum(len(c) for c in f.caps)
            voids += sum(len(v) for v in f.voids)
            known += sum(len(c) for c in f.known)
    assert caps
    assert voids
    assert known


@pytest.mark.parametrize("seed", range(2))
def test_khozor_worlds_keep_to_what_the_seat_knows(seed: int) -> None:
    checked = 0
    for known, truth in _positions(KHOZOR, seed, every=5):
        if truth.phase.value != "play":
            continue
        f = hard_khozor.facts(neutral_view(known.view), known.seat)
        pile = {c for play in f.pile for c in play.cards}
        rng = random.Random(seed)
        for _ in range(10):
            deal = hard_khozor.sample(f, rng)
            assert deal is not None
            assert deal.hands[ME] == f.hand
            for s in range(8):
                assert len(deal.hands[s]) == len(truth.hands[s])
                if s != ME:
                    assert not set(deal.hands[s]) & (set(f.hand) | pile)
            assert len(deal.reserve) == len(truth.reserve)
            assert len(deal.sleeping) == len(truth.sleeping)
            hidden = [*(c for s in range(8) if s != ME for c in deal.hands[s])]
            hidden += [*deal.reserve, *deal.sleeping]
            assert len(hidden) == len(set(hidden))
        checked += 1
    assert checked > 20


def test_a_hard_decision_is_reproducible() -> None:
    """The search's generator is seeded by table, turn and seat."""
    assert decision_seed("t", 5, 1) == decision_seed("t", 5, 1)
    assert decision_seed("t", 5, 1) != decision_seed("t", 5, 2)
    budget = Budget(milliseconds=60_000, worlds=6)
    for known, _ in _positions(THREE_FIVE_EIGHT, 11, every=13)[:20]:
        if ME not in known.view.turn.seats:
            continue
        seen = knowledge(known.view, known.events)
        assert choose(known.view, Level.HARD, seen, budget) == choose(
            known.view, Level.HARD, seen, budget
        )
