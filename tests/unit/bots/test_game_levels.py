"""The bots play a game's levels as its `GameInfo.levels` say, for a game no line of
the bots service names: the test-only higher_card (every level the first listed move)
plays whole games at every level it declares; a variant of it whose levels pick the
last listed move, offering no `normal`, shows that the level's own player is the one
that chooses, on the view and moves as neutral data, and that a level the game lacks
is played by the nearest weaker one it offers."""

from __future__ import annotations

import random
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import replace
from typing import Any, cast

import pytest

import tests.support.higher_card  # noqa: F401  (registers the test-only game)
from kozyr.bots.levels import Level, choose, game_level, turn_moves
from kozyr.games import plugin as plugins
from kozyr.games.info import Move, Searcher, first_listed
from kozyr.table.edge.shown import table_view
from tests.support import tournament
from tests.support.higher_card import INFO, PLUGIN
from tests.support.higher_card import rules as g

PICKY = "picky_higher_card"
SEEN: list[tuple[Mapping[str, Any], Sequence[Move]]] = []


def last_listed(view: Mapping[str, Any], moves: Sequence[Move]) -> Move:
    SEEN.append((view, moves))
    return moves[-1]


class _Rules:
    """higher_card's rules under this test's game id."""

    GAME_ID = PICKY

    def view(self, state: g.State, seat: int | None) -> dict[str, Any]:
        return g.view(state, seat) | {"game_id": PICKY}

    def __getattr__(self, name: str) -> Any:
        return getattr(g, name)


PICKY_PLUGIN = replace(
    PLUGIN,
    id=PICKY,
    code=97,
    rules=cast(Any, _Rules()),
    info=replace(INFO, levels={"easy": first_listed, "hard": last_listed}),
)


@pytest.fixture
def picky_game() -> Iterator[None]:
    """The variant registered for this test only (every-game tests must not meet it)."""
    plugins.register(PICKY_PLUGIN)
    try:
        yield
    finally:
        plugins._BY_ID.pop(PICKY, None)  # no unregister in the product: tests only
        plugins._BY_CODE.pop(PICKY_PLUGIN.code, None)


def play(game_id: str, level: Level, seed: int) -> list[tuple[int, int]]:
    """A whole game, every seat at `level`: per move (index chosen, moves listed)."""
    game = tournament.start(game_id, (level.value,) * g.SEATS, seed)
    picks = []
    for _ in range(100):
        if game.table.is_over:
            break
        seat = game.table.game.turn(game.table.state).seats[0]
        view = table_view(game.table, seat)
        moves = turn_moves(view)
        action = choose(view, level)
        picks.append((list(moves).index(action), len(moves)))
        tournament.apply(game, seat, action)  # raises on an illegal move
    assert game.table.is_over
    return picks


@pytest.mark.parametrize("level", list(Level))
def test_the_test_only_game_is_played_whole_at_every_level_it_declares(level: Level) -> None:
    assert level.value in INFO.levels
    picks = play(g.GAME_ID, level, seed=3)
    assert len(picks) == g.DEALS * g.HAND * g.SEATS
    assert all(pick == 0 for pick, _ in picks)  # its levels: the first listed move


@pytest.mark.usefixtures("picky_game")
def test_a_levels_own_player_chooses_on_neutral_data() -> None:
    SEEN.clear()
    picks = play(PICKY, Level.HARD, seed=5)
    assert all(pick == listed - 1 for pick, listed in picks)  # the last listed
    assert any(listed > 1 for _, listed in picks)
    view, moves = SEEN[0]
    assert view["game_id"] == PICKY
    assert len(view["hand"]) == view["hand_counts"][view["seat"]]
    assert {kind for kind, _ in moves} == {"play_card"}
    assert {fields["card"]["code"] for _, fields in moves} == set(view["hand"])


@pytest.mark.usefixtures("picky_game")
def test_a_level_the_game_lacks_is_played_by_the_nearest_weaker_one() -> None:
    game = tournament.start(PICKY, ("normal",) * g.SEATS, 1)
    view = table_view(game.table, game.table.game.turn(game.table.state).seats[0])
    assert game_level(view, Level.NORMAL) == (Level.EASY, first_listed)
    assert game_level(view, Level.HARD) == (Level.HARD, last_listed)
    assert all(pick == 0 for pick, _ in play(PICKY, Level.NORMAL, seed=5))


def test_the_real_games_levels_are_their_own_or_the_bots() -> None:
    """The real games' levels are their packages' own players: easy and normal on the
    view (`kozyr.games.<game>.computer`), hard a search (`kozyr.games.<game>.hard`)."""
    rng = random.Random(1)
    for game_id in (tournament.THREE_FIVE_EIGHT, tournament.KHOZOR):
        game = tournament.start(game_id, ("easy",) * tournament.SEATS[game_id], 2)
        seat = game.table.game.turn(game.table.state).seats[0]
        view = table_view(game.table, seat)
        searching = {level: isinstance(game_level(view, level)[1], Searcher) for level in Level}
        assert searching == {Level.EASY: False, Level.NORMAL: False, Level.HARD: True}
        assert all(game_level(view, level)[0] is level for level in Level)
        budget = tournament.DEFAULT_BUDGET
        tournament.apply(game, seat, tournament.move(game, seat, rng, budget, None))
