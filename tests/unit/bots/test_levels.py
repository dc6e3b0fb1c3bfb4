"""The bots' levels never choose an illegal move: whole games played in-process on the
pure table decision, every seat's move chosen from that seat's view as the table
service builds it (`table_view`), some seats at random so that positions vary."""

from __future__ import annotations

import random

import pytest

from kozyr.bots.levels import Level, choose, turn_moves
from kozyr.table.actions import command_from_action
from kozyr.table.servicer import table_view
from kozyr.tables import model
from kozyr.tables.decision import decide, draw_chance
from kozyr.tables.model import COMPUTER, TableCreated

SEATS = {"three_five_eight": 3, "khozor_teams": 8}
MOVES = 3000
"""A bound on one game's moves (a 3-5-8 game takes about 1,000)."""


def _play(game_id: str, level: Level, seed: int) -> int:
    rng = random.Random(seed)
    seeds = lambda: rng.randbytes(32)  # noqa: E731
    created = TableCreated(f"t-{seed}", game_id, {}, (COMPUTER,) * SEATS[game_id])
    table = draw_chance(model.start(created), [], seeds).after
    randomly = {s for s in range(SEATS[game_id]) if rng.random() < 0.3}
    moves = 0
    while not table.is_over and moves < MOVES:
        seat = table.game.turn(table.state).seats[0]
        view = table_view(table, seat)
        if seat in randomly:
            action = rng.choice(turn_moves(view))
        else:
            action = choose(view, level)
            assert choose(view, level) == action, "a level must be deterministic"
        command = command_from_action(game_id, seat, action)
        table = decide(table, command, seeds=seeds).after  # raises on an illegal move
        moves += 1
    assert table.is_over, f"{game_id} not over after {MOVES} moves"
    return moves


@pytest.mark.parametrize("level", list(Level))
@pytest.mark.parametrize("game_id", list(SEATS))
@pytest.mark.parametrize("seed", range(6))
def test_a_level_plays_whole_games_with_legal_moves_only(
    game_id: str, level: Level, seed: int
) -> None:
    assert _play(game_id, level, seed) > 10
