"""Engine views → proto messages (kozyr.table.edge.views): every view of a random game
converts for every seat and the spectator, the proto side loses nothing, and any drift
between an engine's view and its message fails loudly.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Iterator
from enum import IntEnum
from typing import Any

import pytest
from google.protobuf import json_format
from google.protobuf.descriptor import Descriptor
from google.protobuf.message import Message

from kozyr.api.table.v1 import actions_pb2, views_pb2
from kozyr.games import khozor_teams, three_five_eight
from kozyr.games.khozor_teams import Beat, Lead, ToggleSignal
from kozyr.games.khozor_teams.scenarios import cards, fill_hands, position
from kozyr.games.plugin import plugin_by_id
from kozyr.games.three_five_eight.simulate import random_command
from kozyr.table.edge.views import (
    ViewDriftError,
    fill_message,
    fits,
    game_view_fields,
    game_view_to_proto,
    message_from,
)

THREE_FIVE_EIGHT = three_five_eight.GAME_ID
KHOZOR_TEAMS = khozor_teams.GAME_ID
VIEWERS: dict[str, list[int | None]] = {
    THREE_FIVE_EIGHT: [None, *range(three_five_eight.SEATS)],
    KHOZOR_TEAMS: [None, *range(khozor_teams.SEATS)],
}
VIEW_OF: dict[str, Callable[[Any, int | None], dict[str, Any]]] = {
    THREE_FIVE_EIGHT: three_five_eight.view,
    KHOZOR_TEAMS: khozor_teams.view,
}
MESSAGE_OF: dict[str, Descriptor] = {
    THREE_FIVE_EIGHT: views_pb2.ThreeFiveEightView.DESCRIPTOR,
    KHOZOR_TEAMS: views_pb2.KhozorTeamsView.DESCRIPTOR,
}
# 3-5-8 lists the engine sends as null when hidden or not yet known; the proto sends
# them empty, which is lossless only because the engine never shows them empty.
NULLABLE_LISTS = ("roles", "targets", "talon", "discards")
# Fields no random game reaches. A giver holding only trumps skips his gives, which
# is unreachable with 16-card hands (tests/unit/games/test_three_five_eight_rules.py).
UNREACHED = {THREE_FIVE_EIGHT: {"exchange.transfers.skipped"}, KHOZOR_TEAMS: set()}
ROUND_TRIP_EVERY = 10  # round-trip every 10th position (and the last) of each game


# ------------------------------------------------------------------ random games


def _three_five_eight_game(seed: int) -> list[Any]:
    """Every position of a random 3-5-8 game (after each decision), first to last."""
    rng = random.Random(seed)
    state = three_five_eight.initial_state({"must_trump": True, "turn_seconds": 60})
    positions = [state]
    while not three_five_eight.is_over(state):
        for event in three_five_eight.decide(state, random_command(state, rng)):
            state = three_five_eight.evolve(state, event)
        positions.append(state)
    return positions


def _khozor_choice(state: Any, rng: random.Random) -> object:
    """A uniform legal move of the turn; now and then a bystander's signal tap."""
    t = khozor_teams.turn(state)
    if t.is_chance:
        return khozor_teams.chance_command(state, rng.randbytes(32))
    if rng.random() < 0.05:
        bystander = rng.randrange(khozor_teams.SEATS)
        taps = [
            c for c in khozor_teams.legal_commands(state, bystander) if isinstance(c, ToggleSignal)
        ]
        if taps:
            return rng.choice(taps)
    return rng.choice(khozor_teams.legal_commands(state, rng.choice(t.seats)))


def _khozor_match(seed: int) -> list[Any]:
    """Every position of a random Khözör match (after each decision), first to last."""
    rng = random.Random(seed)
    state = khozor_teams.initial_state({})
    positions = [state]
    while not khozor_teams.is_over(state):
        for event in khozor_teams.decide(state, _khozor_choice(state, rng)):
            state = khozor_teams.evolve(state, event)
        positions.append(state)
    return positions


def _khozor_after_a_sleep() -> Any:
    """A lead and seven beats: the cycle sleeps (random play rarely gets there)."""
    climb = ["7C", "8C", "9C", "10C", "JC", "QC", "KC", "3C"]
    second = ["7D", "8D", "9D", "10D", "JD", "QD", "KD", "AD"]
    hands = fill_hands({seat: f"{climb[seat]} {second[seat]}" for seat in range(8)})
    state = position(hands, opener=0)
    moves = [Lead(0, cards(climb[0])), *(Beat(s, cards(climb[s])) for s in range(1, 8))]
    for move in moves:
        for event in khozor_teams.decide(state, move):
            state = khozor_teams.evolve(state, event)
    assert len(state.sleeping) == 8
    return state


@pytest.fixture(scope="module")
def games() -> dict[str, list[Any]]:
    return {
        THREE_FIVE_EIGHT: _three_five_eight_game(seed=1),
        KHOZOR_TEAMS: [*_khozor_match(seed=1), _khozor_after_a_sleep()],
    }


# --------------------------------------------------------------------- helpers


def _all_paths(descriptor: Descriptor, prefix: str = "") -> Iterator[str]:
    """Dotted paths of every field of a message, nested messages included."""
    for field in descriptor.fields:
        path = prefix + field.name
        yield path
        sub = field.message_type
        if sub is not None and not sub.GetOptions().map_entry:
            yield from _all_paths(sub, path + ".")


def _set_paths(message: Message, prefix: str = "") -> Iterator[str]:
    """Dotted paths of the fields set (present, non-empty or non-zero) in a message."""
    for field, value in message.ListFields():
        path = prefix + field.name
        yield path
        sub = field.message_type
        if sub is not None and not sub.GetOptions().map_entry:
            for item in value if field.is_repeated else [value]:
                yield from _set_paths(item, path + ".")


def _as_proto_json(game_id: str, view: dict[str, Any]) -> dict[str, Any]:
    """The view in the message's shape: 3-5-8's list of lists wrapped, as documented."""
    if game_id != THREE_FIVE_EIGHT:
        return view
    return {**view, "contracts_used": [{"contracts": row} for row in view["contracts_used"]]}


def _without_absent(value: Any) -> Any:
    """`value` without nulls and empty lists (proto says both as "absent"), recursively."""
    if isinstance(value, dict):
        return {k: _without_absent(v) for k, v in value.items() if v is not None and v != []}
    if isinstance(value, list):
        return [_without_absent(v) for v in value]
    return value


# ----------------------------------------------------------------------- tests


@pytest.mark.parametrize("game_id", [THREE_FIVE_EIGHT, KHOZOR_TEAMS])
def test_every_view_of_a_random_game_converts_and_reaches_every_field(
    games: dict[str, list[Any]], game_id: str
) -> None:
    reached: set[str] = set()
    for state in games[game_id]:
        for seat in VIEWERS[game_id]:
            view = VIEW_OF[game_id](state, seat)
            message = game_view_to_proto(game_id, view)
            assert message.DESCRIPTOR is MESSAGE_OF[game_id]
            reached.update(_set_paths(message))
            if game_id == THREE_FIVE_EIGHT:
                assert all(view[key] != [] for key in NULLABLE_LISTS)
    assert set(_all_paths(MESSAGE_OF[game_id])) - reached == UNREACHED[game_id]


@pytest.mark.parametrize("game_id", [THREE_FIVE_EIGHT, KHOZOR_TEAMS])
def test_the_message_holds_everything_the_view_says(
    games: dict[str, list[Any]], game_id: str
) -> None:
    positions = games[game_id]
    for state in [*positions[::ROUND_TRIP_EVERY], positions[-1]]:
        for seat in VIEWERS[game_id]:
            view = VIEW_OF[game_id](state, seat)
            message = game_view_to_proto(game_id, view)
            back = json_format.MessageToDict(
                message,
                preserving_proto_field_name=True,
                always_print_fields_with_no_presence=True,
            )
            assert _without_absent(back) == _without_absent(_as_proto_json(game_id, view))


def test_seat_zero_and_the_spectator_stay_apart(games: dict[str, list[Any]]) -> None:
    game = games[THREE_FIVE_EIGHT][-1]
    seated = game_view_to_proto(THREE_FIVE_EIGHT, three_five_eight.view(game, 0))
    spectator = game_view_to_proto(THREE_FIVE_EIGHT, three_five_eight.view(game, None))
    assert isinstance(seated, views_pb2.ThreeFiveEightView)
    assert isinstance(spectator, views_pb2.ThreeFiveEightView)
    assert seated.HasField("seat")
    assert seated.seat == 0
    assert not spectator.HasField("seat")

    match = games[KHOZOR_TEAMS][-1]
    seated_k = game_view_to_proto(KHOZOR_TEAMS, khozor_teams.view(match, 0))
    spectator_k = game_view_to_proto(KHOZOR_TEAMS, khozor_teams.view(match, None))
    assert isinstance(seated_k, views_pb2.KhozorTeamsView)
    assert isinstance(spectator_k, views_pb2.KhozorTeamsView)
    assert seated_k.HasField("viewer_seat")
    assert seated_k.viewer_seat == 0
    assert not spectator_k.HasField("viewer_seat")


@pytest.mark.parametrize("game_id", [THREE_FIVE_EIGHT, KHOZOR_TEAMS])
def test_the_message_has_exactly_the_views_keys(games: dict[str, list[Any]], game_id: str) -> None:
    view = VIEW_OF[game_id](games[game_id][0], 0)
    assert set(MESSAGE_OF[game_id].fields_by_name) == set(view)


DRIFTS: list[tuple[str, Callable[[dict[str, Any]], None], str]] = [
    ("unknown key", lambda v: v.update(new_key=1), "new_key"),
    ("unknown nested key", lambda v: v["turn"].update(deadline=5), "deadline"),
    ("missing key", lambda v: v.pop("hand_counts"), "hand_counts"),
    ("null where none may be", lambda v: v.update(phase=None), "phase"),
    ("null in a nested message", lambda v: v["turn"].update(kind=None), "turn.kind"),
    ("wrong type", lambda v: v.update(phase=3), "phase"),
    ("wrong list type", lambda v: v.update(hand_counts=["three"]), "hand_counts"),
    ("bool for a number", lambda v: v["turn"].update(number=True), "number"),
]


@pytest.mark.parametrize("game_id", [THREE_FIVE_EIGHT, KHOZOR_TEAMS])
@pytest.mark.parametrize(("drift", "change", "named"), DRIFTS, ids=[d[0] for d in DRIFTS])
def test_a_view_that_drifted_from_its_message_is_refused(
    games: dict[str, list[Any]],
    game_id: str,
    drift: str,
    change: Callable[[dict[str, Any]], None],
    named: str,
) -> None:
    view = VIEW_OF[game_id](games[game_id][-1], 1)
    game_view_to_proto(game_id, view)
    change(view)
    with pytest.raises(ViewDriftError, match=named):
        game_view_to_proto(game_id, view)


def test_a_view_of_another_game_is_refused(games: dict[str, list[Any]]) -> None:
    view = khozor_teams.view(games[KHOZOR_TEAMS][-1], 0)
    with pytest.raises(ViewDriftError, match="game_id"):
        game_view_to_proto(THREE_FIVE_EIGHT, view)


def test_a_game_without_a_view_message_is_refused() -> None:
    with pytest.raises(ValueError, match="no view message"):
        game_view_to_proto("poker", {"game_id": "poker"})


@pytest.mark.parametrize("game_id", [THREE_FIVE_EIGHT, KHOZOR_TEAMS])
def test_the_fast_way_builds_what_the_strict_way_builds(
    games: dict[str, list[Any]], game_id: str
) -> None:
    """Views that fit their message go to its constructor whole (`game_view_fields`); the
    message is byte for byte the one the strict field-by-field fill makes."""
    plugin = plugin_by_id(game_id)
    message_class = type(game_view_to_proto(game_id, VIEW_OF[game_id](games[game_id][0], 0)))
    for state in games[game_id]:
        for seat in VIEWERS[game_id]:
            view = VIEW_OF[game_id](state, seat)
            fast = game_view_fields(game_id, view)
            assert fast is not None, f"a {game_id} view took the strict way"
            strict = message_class()
            fill_message(strict, plugin.view_to_wire(view))
            built = message_class(**fast[1])
            assert built.SerializeToString(deterministic=True) == strict.SerializeToString(
                deterministic=True
            )
            if seat is not None:
                for command in plugin.listed_moves(state, seat):
                    kind, fields = plugin.action_of(command)
                    assert fits(actions_pb2.Action, {kind: fields})
                    one_way = message_from(actions_pb2.Action, {kind: fields})
                    other = actions_pb2.Action()
                    getattr(other, kind).SetInParent()
                    fill_message(getattr(other, kind), fields)
                    assert one_way == other


def test_data_the_fast_way_refuses_is_filled_strictly() -> None:
    """A view or move outside the fast way's exact types (an IntEnum for an int) still
    converts, the strict way; a misfit is still named."""

    class Seat(IntEnum):
        SOUTH = 2

    assert not fits(actions_pb2.Action, {"confirm_opener": {"opener_seat": Seat.SOUTH}})
    action = message_from(actions_pb2.Action, {"confirm_opener": {"opener_seat": Seat.SOUTH}})
    assert isinstance(action, actions_pb2.Action)
    assert action.confirm_opener.opener_seat == 2
    with pytest.raises(ViewDriftError, match="opener_seat"):
        message_from(actions_pb2.Action, {"confirm_opener": {"opener_seat": True}})
    with pytest.raises(ViewDriftError, match="no field"):
        message_from(actions_pb2.Action, {"confirm_opener": {"seat": 1}})
