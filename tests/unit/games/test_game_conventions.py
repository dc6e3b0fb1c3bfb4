"""One convention for both games (docs/architecture.md, "One convention for every game").

The state is frozen dataclasses all the way down (no NamedTuple), rule errors come from
one helper over the game's own catalogue plus the common one, and a seat number in a
view is keyed `seat` — except `viewer_seat`, which Khözör's view message already names
so on the wire (KhozorTeamsView field 2) and which stays for clients' sake.
"""

from __future__ import annotations

import dataclasses
import random
import typing
from collections.abc import Iterator
from types import ModuleType
from typing import Any

import pytest

import kozyr.games.khozor_teams as kz
import kozyr.games.khozor_teams.texts as kz_texts
import kozyr.games.three_five_eight as t58
import kozyr.games.three_five_eight.texts as t58_texts
from kozyr.games.cards import Card
from kozyr.games.errors import COMMON_TEXTS, RuleError

GAMES = pytest.mark.parametrize("game", [t58, kz], ids=["three_five_eight", "khozor"])
TEXTS = pytest.mark.parametrize(
    ("game", "texts"), [(t58, t58_texts), (kz, kz_texts)], ids=["three_five_eight", "khozor"]
)
SEAT_KEYS_ON_THE_WIRE = {"khozor_teams": {"viewer_seat"}, "three_five_eight": set()}
"""Seat keys other than `seat` that a view message already has (an API: kept)."""


_VALUES = (Card, type(None), tuple, frozenset, bytes)
"""Leaves of a state: cards, None and containers (their items are visited)."""


def _records(tp: Any, seen: set[type]) -> Iterator[type]:
    """Every class reachable from a type hint (state, its records, their fields)."""
    for arg in typing.get_args(tp):
        yield from _records(arg, seen)
    if not isinstance(tp, type) or tp in seen or tp in _VALUES or issubclass(tp, (str, int)):
        return
    seen.add(tp)
    yield tp
    if dataclasses.is_dataclass(tp) or issubclass(tp, tuple):
        for hint in typing.get_type_hints(tp).values():
            yield from _records(hint, seen)


@GAMES
def test_the_state_is_frozen_dataclasses_all_the_way_down(game: ModuleType) -> None:
    state_type = type(game.initial_state({}))
    found = list(_records(state_type, set()))
    assert state_type in found
    for record in found:
        assert dataclasses.is_dataclass(record), record
        assert record.__dataclass_params__.frozen, record  # type: ignore[attr-defined]
        assert not issubclass(record, tuple), f"{record.__qualname__} is a NamedTuple"


@TEXTS
def test_one_error_helper_over_the_game_catalogue_and_the_common_one(
    game: ModuleType, texts: ModuleType
) -> None:
    assert (*COMMON_TEXTS, *texts.ERRORS) == game.REASONS
    assert not set(texts.ERRORS) & set(COMMON_TEXTS), "a common reason redefined"
    assert texts.error("UNKNOWN_COMMAND").texts is COMMON_TEXTS["UNKNOWN_COMMAND"]
    own = next(r for r, t in texts.ERRORS.items() if "{" not in "".join(t.values()))
    refused = texts.error(own)
    assert isinstance(refused, RuleError)
    assert (refused.reason, refused.texts) == (own, texts.ERRORS[own])


def _keys(value: Any) -> Iterator[str]:
    if isinstance(value, dict):
        for key, inner in value.items():
            yield key
            yield from _keys(inner)
    elif isinstance(value, list):
        for inner in value:
            yield from _keys(inner)


@GAMES
def test_a_seat_number_in_a_view_is_keyed_seat(game: ModuleType) -> None:
    rng = random.Random(9)
    state = game.initial_state({})
    keys: set[str] = set()
    for _step in range(600):
        if game.is_over(state):
            break
        for viewer in (None, *range(game.SEATS)):
            keys.update(_keys(game.view(state, viewer)))
        t = game.turn(state)
        if t.is_chance:
            command = game.chance_command(state, rng.randbytes(32))
        else:
            command = game.default_command(state, t.seats[0])
        for event in game.decide(state, command):
            state = game.evolve(state, event)
    seat_keys = {k for k in keys if k.endswith("seat") or k.startswith("seat_")}
    assert "seat" in seat_keys
    assert seat_keys - {"seat"} == SEAT_KEYS_ON_THE_WIRE[game.GAME_ID]
