"""`kozyr play`'s options: the plan they make (or why they do not fit) and where the
services and the token are found."""

from __future__ import annotations

import pytest

from kozyr.api.common.v1 import games_pb2
from kozyr.cli.play.endpoints import DEFAULT_TARGETS, find_endpoints
from kozyr.cli.play.lobby import Mode, Plan, make_plan


def test_plans() -> None:
    assert make_plan("358") == Plan(games_pb2.GAME_THREE_FIVE_EIGHT, Mode.QUEUE)
    assert make_plan("khozor", computers="none") == Plan(
        games_pb2.GAME_KHOZOR_TEAMS, Mode.QUEUE, computers=False
    )
    assert make_plan("358", private=True, computers="hard").level == 3
    assert make_plan("358", private=True).mode is Mode.PRIVATE
    assert make_plan("358", party=True, private=True) == Plan(
        games_pb2.GAME_THREE_FIVE_EIGHT, Mode.HOST, private=True
    )
    assert make_plan("358", join="ABC123").code == "ABC123"
    assert make_plan("358", table_id="t-1").mode is Mode.TABLE


@pytest.mark.parametrize(
    ("options", "says"),
    [
        ({"game": "chess"}, "--game is 358"),  # or khozor (and any game registered)
        ({"game": "358", "computers": "brutal"}, "--computers is one of"),
        ({"game": "358", "join": "ABC123", "party": True}, "choose one of --join, --party"),
        ({"game": "358", "table_id": "t", "private": True}, "--private opens a new table"),
        ({"game": "358", "private": True, "computers": "none"}, "not with --computers none"),
    ],
)
def test_options_that_do_not_fit_say_why(options: dict[str, object], says: str) -> None:
    game = str(options.pop("game"))
    with pytest.raises(ValueError, match=says):
        make_plan(game, **options)  # type: ignore[arg-type]


def test_an_option_wins_over_the_variable_which_wins_over_make_runs_port(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("KOZYR_BOTS_TARGET", "bots.example:1")
    monkeypatch.setenv("KOZYR_TOKEN", "from-env")
    for name in ("TABLE", "MATCHMAKING", "CLOCK"):
        monkeypatch.delenv(f"KOZYR_{name}_TARGET", raising=False)
    found = find_endpoints(table="table.example:2")
    assert found.table == "table.example:2"
    assert found.bots == "bots.example:1"
    assert found.matchmaking == DEFAULT_TARGETS["matchmaking"]
    assert found.clock == DEFAULT_TARGETS["clock"]
    assert found.token == "from-env"
    assert find_endpoints(clock="none", token="given").clock is None
    assert find_endpoints(token="given").token == "given"
