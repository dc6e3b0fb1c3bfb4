"""The replay's text and JSON as a moderator reads them (issue 15, item 6): every time
with its date and zone, every card play on its own line with its time, players named
beside their seats, options spelt as the API spells them, a result nobody "made", no
"provisional" on a finished table, and no Python repr anywhere in `--json`."""

from __future__ import annotations

import dataclasses
import json
import re
from typing import Any

import pytest

from kozyr.games import khozor_teams, three_five_eight
from kozyr.table import audit
from tests.unit.table.test_audit_games import GAMES, PLAYERS, forged, played

STEP_LINE = re.compile(r"^ *#\d+ .*  \[(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC)( \(by [^)]+\))?\]$")
"""A step's line: its position, its text, then its time with date and zone."""
REPR = re.compile(r"\['|\{'|': |\bNone\b|\bTrue\b|\bFalse\b")
"""What a Python repr of a list, dict or constant looks like inside a text."""


def step_lines(text: str) -> list[str]:
    return [line for line in text.splitlines() if line.lstrip().startswith("#")]


@pytest.mark.parametrize("game_id", GAMES)
@pytest.mark.parametrize("seat", [None, 1])
def test_every_step_line_ends_with_its_date_time_and_zone(game_id: str, seat: int | None) -> None:
    game = played(game_id)
    lines = step_lines(audit.replay(game.events, seat).to_text())
    assert len(lines) > 100
    assert [line for line in lines if not STEP_LINE.match(line)] == []


def test_every_card_play_has_a_line_with_its_time_for_the_seat_too() -> None:
    game = played(three_five_eight.GAME_ID)
    text = audit.replay(game.events, 2).to_text()
    for play in [e for e in game.events if e.type == "CardPlayed"]:
        seat, card = play.data["seat"], play.data["card"]
        when = f"{play.recorded_at:%Y-%m-%d %H:%M:%S} UTC"
        player = PLAYERS[three_five_eight.GAME_ID][seat]
        assert f"  #{play.position} seat {seat} ({player}) plays {card}  [{when}]\n" in text


def test_the_header_and_deal_lines_name_the_players() -> None:
    game = played(khozor_teams.GAME_ID)
    text = audit.replay(game.events).to_text()
    assert "Seats: 0: p0, 1: p1, 2: p2, 3: p3, 4: p4, 5: p5, 6: p6, 7: p7" in text
    hand = next(e for e in game.events if e.type == "RoundDealt").data["hands"][7]
    assert f"  seat 7 (p7): {' '.join(hand)}\n" in text
    assert not re.search(r"\bseat \d+(?! \(p\d\))", text), "a seat without its player"


def test_options_are_spelt_as_the_api_spells_them() -> None:
    game = played(three_five_eight.GAME_ID)
    events = game.copy_events()
    events[0].data["options"] = {"must_trump": False, "turn_seconds": 60}
    replay = audit.replay(events)
    text = replay.to_text()
    assert "Options: must_trump=false, turn_seconds=60\n" in text
    assert "table created: game three_five_eight, options must_trump=false, turn_seconds=60" in text
    assert "False" not in text


@pytest.mark.parametrize("game_id", GAMES)
def test_the_result_is_nobodys_move(game_id: str) -> None:
    game = played(game_id)
    last_player = game.events[-1].metadata["actor"]
    assert last_player in PLAYERS[game_id], "the last move was a player's"
    text = audit.replay(game.events).to_text()
    (ending,) = [line for line in step_lines(text) if line.startswith(f"#{len(game.events)} ")]
    assert "(by " not in ending


def test_a_finished_table_is_never_provisional_whatever_its_figures_say() -> None:
    game = played(three_five_eight.GAME_ID)
    replay = audit.replay(game.events)
    assert replay.over
    figures: dict[str, Any] = {k: v for k, v in replay.result.items() if k != "final"}
    text = dataclasses.replace(replay, result=figures).to_text()
    assert "provisional" not in text
    assert "\nResult: totals " in text


def test_a_table_in_progress_shows_a_provisional_standing() -> None:
    game = played(three_five_eight.GAME_ID)
    middle = [e for e in game.events if e.type == "TrickTaken"][20].position
    text = audit.replay(game.events[:middle]).to_text()
    assert "in progress" in text.splitlines()[0]
    assert "\nStanding so far (provisional, the game is in progress): totals " in text
    assert "\nResult:" not in text


def texts_in(value: Any) -> list[str]:
    """Every "text" of a replay's JSON (the data itself is JSON already)."""
    if isinstance(value, dict):
        own = [value["text"]] if isinstance(value.get("text"), str) else []
        return own + [t for v in value.values() for t in texts_in(v)]
    if isinstance(value, list):
        return [t for v in value for t in texts_in(v)]
    return []


@pytest.mark.parametrize("game_id", GAMES)
@pytest.mark.parametrize("seat", [None, 0])
def test_no_python_repr_in_the_json(game_id: str, seat: int | None) -> None:
    game = played(game_id)
    texts = texts_in(audit.replay(game.events, seat).to_dict())
    deal_texts = [t for t in texts if t.startswith(("Deal ", "Round "))]
    assert deal_texts, "the deals have texts of their own"
    assert [t for t in texts if REPR.search(t)] == []


def test_a_verify_reason_spells_values_as_json() -> None:
    game = played(three_five_eight.GAME_ID)
    trick = next(e for e in game.events if e.type == "TrickTaken")
    cards = list(reversed(trick.data["cards"]))

    def change(data: dict[str, Any]) -> None:
        data["cards"] = cards

    events, chain = forged(game, trick.position, change)
    report = audit.verify(events, chain)
    assert report.problem is not None
    assert f'cards: recorded {json.dumps(cards)}, the replay gives ["' in report.problem.reason
    assert not REPR.search(json.dumps(report.to_dict()))
