"""The bots' levels never choose an illegal move: whole games played in-process on the
pure table decision, every seat's move chosen from that seat's view as the table
service builds it (`table_view`) — and, for `hard`, its own redacted history — some
seats at random so that positions vary. Khözör computer seats also send the signal
toggles that make their signals true before each move; the engine refuses a false one.
"""

from __future__ import annotations

import random

import pytest

from kozyr.bots.levels import Level, choose
from kozyr.bots.search import Budget
from kozyr.table.edge.actions import command_from_action
from kozyr.table.edge.shown import table_view
from tests.support import tournament
from tests.support.tournament import KHOZOR, RANDOM, THREE_FIVE_EIGHT

SMALL = Budget(milliseconds=60_000, worlds=1)
"""One world per decision whatever the machine: reproducible, and quick."""


def _play(game_id: str, level: Level, seed: int) -> int:
    """One whole game; in 3-5-8 one hard seat at most (a hard game costs seconds)."""
    rng = random.Random(seed)
    seats = tournament.SEATS[game_id]
    players = tuple(RANDOM if rng.random() < 0.3 else level.value for _ in range(seats))
    if level is Level.HARD and game_id == THREE_FIVE_EIGHT:
        players = tuple(
            level.value if s == seed % seats else rng.choice([RANDOM, Level.NORMAL.value])
            for s in range(seats)
        )
    game = tournament.start(game_id, players, seed)
    moves = 0
    while not game.table.is_over and moves < tournament.MOVES:
        seat = game.table.game.turn(game.table.state).seats[0]
        if players[seat] != RANDOM:
            for toggle in tournament.signals(game, seat):
                tournament.apply(game, seat, toggle)  # raises if the signal is false
            assert not tournament.signals(game, seat), "the signals now tell the truth"
        action = tournament.move(game, seat, rng, SMALL, None)
        if players[seat] != RANDOM and (players[seat] != Level.HARD or moves % 10 == 0):
            again = tournament.move(game, seat, rng, SMALL, None)
            assert again == action, "a level must be deterministic"
        tournament.apply(game, seat, action)  # raises on an illegal move
        moves += 1
    assert game.table.is_over, f"{game_id} not over after {tournament.MOVES} moves"
    return moves


@pytest.mark.parametrize("level", [Level.EASY, Level.NORMAL])
@pytest.mark.parametrize("game_id", [THREE_FIVE_EIGHT, KHOZOR])
@pytest.mark.parametrize("seed", range(6))
def test_a_level_plays_whole_games_with_legal_moves_only(
    game_id: str, level: Level, seed: int
) -> None:
    assert _play(game_id, level, seed) > 10


@pytest.mark.parametrize("game_id", [THREE_FIVE_EIGHT, KHOZOR])
@pytest.mark.parametrize("seed", range(2))
def test_the_hard_level_plays_whole_games_with_legal_moves_only(game_id: str, seed: int) -> None:
    assert _play(game_id, Level.HARD, 100 + seed) > 10


def test_the_hard_level_without_a_history_still_moves() -> None:
    """A view alone (the history could not be read): hard searches what the view shows."""
    game = tournament.start(THREE_FIVE_EIGHT, ("hard",) * 3, 7)
    rng = random.Random(7)
    for _ in range(100):
        seat = game.table.game.turn(game.table.state).seats[0]
        view = table_view(game.table, seat)
        tournament.apply(game, seat, choose(view, Level.HARD, budget=SMALL))
        if rng.random() < 0.5 and not game.table.is_over:
            seat = game.table.game.turn(game.table.state).seats[0]
            tournament.apply(game, seat, tournament.move(game, seat, rng, SMALL, None))


@pytest.mark.parametrize("game_id", [THREE_FIVE_EIGHT, KHOZOR])
@pytest.mark.parametrize("seed", range(2))
def test_easy_plays_the_timeouts_default_move_and_normal_does_not(game_id: str, seed: int) -> None:
    """A seat at `easy` plays exactly the clock's default move (docs/bots.md), in each
    game: a level mixed up per game — easy played as normal in Khözör — shows as a move
    the engine's `default_command` would not have made. Normal must differ somewhere in
    the same game, or the check could not tell the two levels apart."""
    game = tournament.start(game_id, (Level.EASY.value,) * tournament.SEATS[game_id], seed)
    moves = differs = 0
    while not game.table.is_over and moves < tournament.MOVES:
        seat = game.table.game.turn(game.table.state).seats[0]
        view = table_view(game.table, seat)
        easy = choose(view, Level.EASY)
        default = game.table.game.default_command(game.table.state, seat)
        assert command_from_action(game_id, seat, easy) == default, f"move {moves}"
        differs += easy != choose(view, Level.NORMAL)
        tournament.apply(game, seat, easy)
        moves += 1
    assert game.table.is_over
    assert differs > 10, "normal plays like easy here: the positions tell nothing"
