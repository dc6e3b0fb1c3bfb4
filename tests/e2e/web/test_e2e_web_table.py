"""The web table page in Chromium, clicked as a person would, against the real stack
through the gRPC-Web edge: a whole 3-5-8 game against two computers, a refusal in
Romanian and a reload that resumes the table, a Khözör seat's signal and move — and
the leak checker over every message the page received."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.leaks import KHOZOR_TEAMS, THREE_FIVE_EIGHT
from tests.e2e.web.conftest import (
    WebStack,
    drive,
    drop_the_edge,
    leaks_seen_by_page,
)

pytestmark = pytest.mark.e2e


DEALS = 18
"""A 3-5-8 game's deals (docs/rules-three-five-eight.md)."""


async def test_whole_358_game_by_clicking(web_stack: WebStack, tmp_path: Path) -> None:
    """A private table opened from the lobby against two computers (think time 0), each
    decision of the seat clicked — contracts, gives, discards, cards — from the first
    deal to the final result (~300 clicks in ~15 s: drive.mjs waits for each turn
    inside the page and clicks where the card is)."""
    out = await drive(web_stack, "game358", tmp_path, player="ana")
    await assert_game_played(web_stack, out, min_cards=DEALS * 10)
    history = await web_stack.admin_history(out["tableId"])
    assert sum(e.type == "DealScored" for e in history) == DEALS


async def assert_game_played(stack: WebStack, out: dict[str, Any], min_cards: int) -> None:
    assert out["turnLine"] == "GAME OVER"
    assert out["result"].count("place") == 3, out["result"]
    assert out["result"].count("points") == 3, out["result"]
    # cards clicked in the hand, and the listed moves (contracts, discards) clicked
    assert out["kinds"].get("card", 0) >= min_cards, out["kinds"]
    assert out["kinds"].get("move", 0) >= 1, out["kinds"]
    problems, views = await leaks_seen_by_page(
        stack, THREE_FIVE_EIGHT, out["tableId"], out["received"]
    )
    assert views > out["clicks"], "the page's watch delivered fewer views than it made moves"
    assert problems == []
    sizes = [len(await asyncio.to_thread(Path(shot).read_bytes)) for shot in out["shots"]]
    assert min(sizes) > 10_000, out["shots"]


async def test_refusal_in_romanian_and_reload_resumes(web_stack: WebStack, tmp_path: Path) -> None:
    out = await drive(
        web_stack,
        "refusalReload",
        tmp_path,
        during=lambda folder: drop_the_edge(web_stack, folder),
        player="bogdan",
        drop=True,
    )
    assert out["hint"]["text"].startswith("Sugestie: "), out["hint"]
    assert out["hintFocused"], "the hinted move has the focus: Enter plays it"
    refusal = out["refusal"]
    submitted = "kozyr.table.v1.TableService/SubmitAction"
    errors = [r["error"] for r in out["received"] if "error" in r and r["method"] == submitted]
    assert errors, "the page received no refusal"
    said = errors[0]
    assert out["lang"] == "ro"
    assert refusal["reason"] == said["reason"]
    assert refusal["text"] == said["messages"]["ro"] != said["messages"]["en"]
    if said["reason"] == "NOT_YOUR_TURN":
        assert refusal["text"] == "Nu este rândul tău."
    assert out["turnLineRo"].startswith(("RÂNDUL TĂU", "Se așteaptă")), out["turnLineRo"]
    places = out["leavePlaces"]  # on the seat's turns and after its moves
    assert all(p["abovePlay"] for p in places), f"moves listed push it down: {places}"
    assert len({p["top"] for p in places}) == 1, f"the way back to the lobby moves: {places}"
    before, after = out["before"], out["after"]
    assert after["tableId"] == before["tableId"] == out["tableId"]
    assert int(after["version"]) >= int(before["version"])
    assert out["afterHand"] > 0
    reopened = out["reopened"]  # from the lobby, by its id
    assert reopened["tableId"] == out["tableId"]
    assert int(reopened["version"]) >= int(after["version"])
    if "afterReloadMove" in out:  # the reloaded page plays on
        assert int(out["final"]["version"]) > int(after["version"])
    if "pendingCard" in out:  # the edge went away on the seat's turn, and came back
        assert out["dropStatus"]["text"].startswith("Conexiune pierdută"), out["dropStatus"]
        assert out["lostStatus"]["kind"] == "error"
        assert int(out["reconnected"]["version"]) > int(out["final"]["version"])
        history = await web_stack.admin_history(out["tableId"])
        played = [
            e for e in history if e.type == "CardPlayed" and e.data["card"] == out["pendingCard"]
        ]
        assert len(played) == 1, "the move sent while the edge was down is applied once"
    problems, _ = await leaks_seen_by_page(
        web_stack, THREE_FIVE_EIGHT, out["tableId"], out["received"]
    )
    assert problems == []


async def test_khozor_signal_and_move(web_stack: WebStack, tmp_path: Path) -> None:
    out = await drive(web_stack, "khozor", tmp_path, player="chiara")
    if "falseSignal" in out:  # a signal refused (the hand holds none, or no round yet)
        submitted = "kozyr.table.v1.TableService/SubmitAction"
        (said,) = [r["error"] for r in out["received"] if "error" in r and r["method"] == submitted]
        assert out["falseSignal"]["reason"] == said["reason"]
        assert out["falseSignal"]["text"] == said["messages"]["it"] != said["messages"]["en"]
        if said["reason"] == "SIGNAL_NOT_TRUE":
            assert said["messages"]["it"] == "La tua mano non contiene una combinazione simile."
    assert out["signalStatus"]["kind"] != "error", out["signalStatus"]
    shown = "set da 3" if out["signal"] == "signal-three" else "set da 5"
    assert any(row.startswith("chiara (tu):") and shown in row for row in out["teamSignals"])
    assert out["moves"], "no move was offered on the seat's turn"
    assert int(out["turnAfter"]["turnNumber"]) > int(out["turnBefore"]["turnNumber"])
    problems, views = await leaks_seen_by_page(
        web_stack, KHOZOR_TEAMS, out["tableId"], out["received"]
    )
    assert views > 2
    assert problems == []


@pytest.mark.parametrize("clock_ahead", [176.0])
async def test_queue_to_a_table_and_the_turn_clock(web_stack: WebStack, tmp_path: Path) -> None:
    """Join the queue (computers now): the ticket's stream through the edge seats the
    player at a rated table, where hints are off. There the turn clock: the time left on
    the seat's turn counting down, the seat online by the page's heartbeats through the
    edge, and — the clock service running 176 s ahead, so a 180 s turn runs out in 4 s —
    the default move played for the seat when its time is up, nobody clicking."""
    out = await drive(web_stack, "queue", tmp_path, player="dana")
    ticket_answers = [
        r
        for r in out["received"]
        if r["method"] == "kozyr.matchmaking.v1.MatchmakingService/WatchTicket"
    ]
    assert ticket_answers[-1]["message"]["table_id"] == out["tableId"]
    views = [r["message"]["view"] for r in out["received"] if "view" in r.get("message", {})]
    assert views, "no view of the table"
    assert not any(v.get("hints_allowed") for v in views), "a queue's table allows no hints"
    assert out["hintHidden"]
    first, later = out["clockFirst"], out["clockLater"]
    assert first["text"] == f"Your time: {first['seconds']} s left", first
    assert 170 <= int(first["seconds"]) <= 180, first  # a 180 s turn, on the wall clock
    assert int(later["seconds"]) < int(first["seconds"]), (first, later)
    assert later["turnNumber"] == first["turnNumber"], (first, later)
    assert later["deadline"] == first["deadline"], "the same turn keeps its deadline"
    assert out["ownSeat"].startswith("Seat ")
    assert "person · online" in out["ownSeat"]
    heartbeats = [r for r in out["received"] if r["method"].endswith("ClockService/Heartbeat")]
    assert heartbeats, "the page sent no heartbeat"
    assert "error" not in heartbeats[0], heartbeats[0]
    # nobody clicked: the turn ended by the clock's ExpireTurn, a move of the seat's own
    assert not [r for r in out["received"] if r["method"].endswith("/SubmitAction")]
    assert int(out["afterExpiry"]["turnNumber"]) > int(first["turnNumber"])
    seat = next(v["seat"] for v in views if "seat" in v)
    history = await web_stack.admin_history(out["tableId"])
    moves = [e for e in history if e.type in SEAT_MOVES and e.data.get("seat") == seat]
    assert moves, "no move of the seat in the table's log"
    if "clockNext" in out:  # the seat's next turn: a new deadline, counted from its start
        following = out["clockNext"]
        assert int(following["turnNumber"]) > int(first["turnNumber"])
        assert int(following["deadline"]) > int(first["deadline"]), (first, following)
    problems, _ = await leaks_seen_by_page(
        web_stack, THREE_FIVE_EIGHT, out["tableId"], out["received"]
    )
    assert problems == []


SEAT_MOVES = frozenset({"ContractChosen", "CardsDiscarded", "CardPlayed", "TalonTaken"})
"""The 3-5-8 events of one seat's decision (its `seat` field)."""
