"""The duplicate tournament harness is right: the rotation puts the measured level in
every seat (3-5-8) and on both teams (Khözör), a seed deals the same cards whatever is
played, and a level against itself scores exactly even."""

from __future__ import annotations

import random

import pytest

from kozyr.bots.levels import Level, turn_moves
from kozyr.table.edge.shown import table_view
from tests.support import tournament
from tests.support.tournament import KHOZOR, RANDOM, THREE_FIVE_EIGHT


def test_the_rotation_seats_the_hero_everywhere_once() -> None:
    seatings = tournament.rotations(THREE_FIVE_EIGHT, "hard", "easy")
    assert sorted(s.index("hard") for s in seatings) == [0, 1, 2]
    assert all(s.count("hard") == 1 and s.count("easy") == 2 for s in seatings)
    teams = tournament.rotations(KHOZOR, "hard", "easy")
    assert teams == [("hard", "easy") * 4, ("easy", "hard") * 4]


def _second_deal(players: tuple[str, ...], seed: int) -> object:
    game = tournament.start(THREE_FIVE_EIGHT, players, seed)
    rng = random.Random(1)
    while game.table.state.deal.number < 2:
        seat = game.table.game.turn(game.table.state).seats[0]
        tournament.apply(game, seat, rng.choice(turn_moves(table_view(game.table, seat))))
    return game.table.state.deal.hands


def test_a_seed_deals_the_same_cards_whatever_is_played() -> None:
    assert _second_deal(("easy",) * 3, 5) == _second_deal((RANDOM,) * 3, 5)
    assert _second_deal(("easy",) * 3, 5) != _second_deal(("easy",) * 3, 6)


@pytest.mark.parametrize(("game_id", "even"), [(THREE_FIVE_EIGHT, 0.0), (KHOZOR, 0.5)])
@pytest.mark.parametrize("level", [Level.EASY, Level.NORMAL])
def test_a_level_against_itself_scores_exactly_even(
    game_id: str, even: float, level: Level
) -> None:
    """Deterministic levels replay the same game in every rotation: in 3-5-8 the hero's
    mean over the seats is a third of a zero sum, in Khözör it wins one match of two."""
    assert tournament.duplicate(game_id, level.value, level.value, range(2)) == [even, even]


def test_the_estimate_and_its_interval() -> None:
    e = tournament.estimate([1.0, 3.0])
    assert e.mean == 2.0
    assert e.half_width == pytest.approx(1.96)  # sd √2 over √2 seeds
    assert e.low == pytest.approx(0.04)
    assert e.high == pytest.approx(3.96)
    assert tournament.difference([2.0, 5.0], [1.0, 3.0]).mean == 1.5
