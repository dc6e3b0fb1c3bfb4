"""Every registered game's `GameInfo` (`kozyr.games.info`) agrees with its own rules:
its seats are the rules' seats, its teams the sides that share a place, its option
bounds those the rules accept, its levels some of the platform's, each playing a legal
move where it has a player of its own. A GameInfo that could not be true is refused."""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence
from typing import Any

import pytest

import tests.support.higher_card  # noqa: F401  (registers the test-only game)
from kozyr.games import khozor_teams, three_five_eight  # noqa: F401  (register themselves)
from kozyr.games.errors import OptionsError
from kozyr.games.info import (
    LEVELS,
    ComputerPlayer,
    Decision,
    GameInfo,
    GameOption,
    LevelPlayer,
    Move,
    Searcher,
    first_listed,
)
from kozyr.games.plugin import AnyPlugin, UnknownGame, plugin_by_word, registered
from kozyr.texts import Texts

PLUGINS = {plugin.id: plugin for plugin in registered()}
NAME = Texts(en="Game", ro="Joc", it="Gioco")


def some_options(plugin: AnyPlugin, **given: Any) -> dict[str, Any]:
    return {o.name: given[o.name] for o in plugin.info.options if o.name in given}


@pytest.mark.parametrize("game_id", sorted(PLUGINS))
def test_the_seats_are_those_of_the_rules(game_id: str) -> None:
    plugin = PLUGINS[game_id]
    state = plugin.rules.initial_state({})
    view = plugin.rules.view(state, plugin.info.seats - 1)  # the last seat exists
    assert view is not None
    with pytest.raises(ValueError, match="seat"):
        plugin.rules.view(state, plugin.info.seats)


def test_the_teams_are_khozors_own_and_the_others_play_alone() -> None:
    khozor = PLUGINS["khozor_teams"].info
    assert khozor.in_teams
    assert khozor.party_max == khozor.team_size == 4
    for seat in range(khozor.seats):
        team = khozor_teams.team_of(seat)
        assert khozor.sides[khozor.side_of(seat)] == team.seats
    for game_id in ("three_five_eight", "higher_card"):
        info = PLUGINS[game_id].info
        assert not info.in_teams
        assert info.sides == tuple((s,) for s in range(info.seats))
        assert info.party_max == info.seats


@pytest.mark.parametrize("game_id", sorted(PLUGINS))
def test_the_option_bounds_are_those_the_rules_accept(game_id: str) -> None:
    plugin = PLUGINS[game_id]
    for option in plugin.info.options:
        if option.flag:
            for flag in (True, False):
                plugin.rules.initial_state({option.name: flag})
                assert option.accepts(flag)
            assert not option.accepts(1)
            continue
        for number in (option.low, option.high):
            plugin.rules.initial_state({option.name: number})
            assert option.accepts(number)
        for number in (option.low - 1, option.high + 1):
            assert not option.accepts(number)
            with pytest.raises(OptionsError):
                plugin.rules.initial_state({option.name: number})
        assert option.accepts(0)  # the default
        assert not option.accepts(True)
    with pytest.raises(OptionsError):  # an option the info does not list is none
        plugin.rules.initial_state({"no_such_option": 1})


def test_the_real_games_options_and_levels() -> None:
    t58, kz = PLUGINS["three_five_eight"].info, PLUGINS["khozor_teams"].info
    assert [o.name for o in t58.options] == ["must_trump", "turn_seconds"]
    assert [o.name for o in kz.options] == ["turn_seconds"]
    assert (t58.short, kz.short) == ("358", "khozor")
    for info in (t58, kz):
        assert tuple(info.levels) == LEVELS
    for info in (t58, kz):  # hard: the game's search; easy and normal: on the view alone
        assert isinstance(info.levels["hard"], Searcher)
        assert not isinstance(info.levels["easy"], Searcher)
        assert not isinstance(info.levels["normal"], Searcher)
    assert kz.announce is not None
    assert t58.announce is None


def _on_view(player: LevelPlayer) -> ComputerPlayer:
    """A level's player as one on the view alone (a searcher: one world, no history)."""
    if not isinstance(player, Searcher):
        return player
    searcher = player

    def search(view: Mapping[str, Any], moves: Sequence[Move]) -> Move:
        seat = view.get("seat", view.get("viewer_seat"))
        assert isinstance(seat, int)
        return searcher.choose(Decision(view, moves, seat, (), seed=len(moves), worlds=1))

    return search


@pytest.mark.parametrize("game_id", sorted(PLUGINS))
def test_every_levels_own_player_plays_whole_games_legally(game_id: str) -> None:
    """Each level's own player, on the view as the wire holds it and the listed moves,
    makes a move the rules accept: a listed one, or on a turn too wide to list (3-5-8's
    discard) a legal one of its own; a game played so comes to its end. A searching
    level searches one world, on the view alone (the engine's view dict, its unset
    fields None, not absent as on the wire)."""
    plugin = PLUGINS[game_id]
    players = {level: _on_view(p) for level, p in plugin.info.levels.items()}
    rng = random.Random(7)
    state = plugin.rules.initial_state({})
    for _ in range(20_000):
        turn = plugin.rules.turn(state)
        if plugin.rules.is_over(state):
            break
        if turn.is_chance:
            command = plugin.rules.chance_command(state, rng.randbytes(32))
        else:
            seat = turn.seats[0]
            listed = plugin.listed_moves(state, seat)
            moves: list[Move] = [plugin.action_of(c) for c in listed]
            view = plugin.view_to_wire(plugin.rules.view(state, seat))
            picks = {level: player(view, moves) for level, player in players.items()}
            wide = turn.kind in plugin.wide_turns
            assert all(pick in moves for pick in picks.values()) or wide
            kind, fields = picks[rng.choice(sorted(picks))]
            command = plugin.command_of(kind, seat, fields)  # decided below: legal
        for event in plugin.rules.decide(state, command):
            state = plugin.rules.evolve(state, event)
    assert plugin.rules.is_over(state)


def test_a_game_is_found_by_its_id_or_its_short_word() -> None:
    for plugin in PLUGINS.values():
        assert plugin_by_word(plugin.id) is plugin
        assert plugin_by_word(plugin.info.short) is plugin
    with pytest.raises(UnknownGame):
        plugin_by_word("chess")


@pytest.mark.parametrize(
    ("seats", "teams", "party_max", "levels"),
    [
        (0, (), 1, {"easy": first_listed}),  # no seats
        (4, ((0, 2), (1,)), 1, {"easy": first_listed}),  # seat 3 in no team
        (4, ((0, 2), (1, 3, 2)), 1, {"easy": first_listed}),  # seat 2 twice
        (4, ((0, 2), (1, 3)), 3, {"easy": first_listed}),  # a party bigger than a team
        (3, (), 4, {"easy": first_listed}),  # a party bigger than the table
        (3, (), 0, {"easy": first_listed}),  # no party at all
        (3, (), 1, {}),  # no level
        (3, (), 1, {"genius": first_listed}),  # a level the platform lacks
    ],
)
def test_an_impossible_game_info_is_refused(
    seats: int, teams: tuple[tuple[int, ...], ...], party_max: int, levels: dict[str, Any]
) -> None:
    with pytest.raises(ValueError, match=r"seat|part|level"):
        GameInfo(NAME, "g", seats, party_max, NAME, teams=teams, levels=levels)


def test_a_whole_number_option_takes_its_default_or_its_bounds() -> None:
    option = GameOption("turn_seconds", low=10, high=3600)
    assert [option.accepts(v) for v in (0, 9, 10, 3600, 3601, -1)] == [
        True, False, True, True, False, False,
    ]  # fmt: skip
    assert not option.accepts("10")  # type: ignore[arg-type]


@pytest.mark.parametrize("game_id", sorted(PLUGINS))
def test_every_choice_a_client_shows_is_a_move_of_the_game(game_id: str) -> None:
    """A row of choices (`GameInfo.choices`) holds moves the game reads, and each value
    a move carries that a client words by `choice_names` is one of those moves'."""
    plugin = PLUGINS[game_id]
    worded = set()
    for _kind, offered in plugin.info.choices.items():
        for move, fields in offered:
            plugin.command_of(move, 0, fields)  # raises MalformedAction if not a move
            worded |= {v for v in fields.values() if isinstance(v, str)}
    assert worded <= set(plugin.info.choice_names)


def test_the_real_games_word_their_choices() -> None:
    t58, kz = PLUGINS["three_five_eight"].info, PLUGINS["khozor_teams"].info
    assert len(t58.choices["contract"]) == 6
    assert t58.choice_names["CONTRACT_NO_TRUMP"]["en"] == "No trump"
    assert kz.choices == {"confirm_opener": ()}
    assert kz.choice_names["SIGNAL_FIVE_SET"]["ro"] == "set de 5"
    kz_plugin = PLUGINS["khozor_teams"]
    for name in kz.choice_names:  # each names a signal a move may carry
        kz_plugin.command_of("toggle_signal", 0, {"signal": name})
