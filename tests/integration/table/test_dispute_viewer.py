"""The dispute viewer (`kozyr replay TABLE --html FILE`) on whole games: a 3-5-8 game and
a Khözör match played through TableApp on PostgreSQL, their pages written by the
command line (a subprocess), rendered headless in Debian's Chromium, their text
checked against the log, their HTML checked by the W3C Nu checker, and every seat's
page checked by the e2e suite's leak checker, position by position."""

from __future__ import annotations

from pathlib import Path

import pytest

from kozyr.eventstore import RecordedEvent
from kozyr.games import khozor_teams, three_five_eight
from tests.e2e.leaks import LoggedEvent, find_leaks, seen_page
from tests.integration.table.test_audit import Database, db, kozyr, play
from tests.support.pages import PageText, dump_dom, page_text, screenshot, validate
from tests.unit.table.test_audit_games import PLAYERS

pytestmark = pytest.mark.integration

__all__ = ["db"]  # the fixture, shared with test_audit

WINDOW = (1280, 2400)
MIN_PNG_BYTES = 40_000
"""A screenshot of a rendered page of tables and text is hundreds of KB; a blank or
unstyled error page is a few KB."""
SEATS = {three_five_eight.GAME_ID: (1, "ro"), khozor_teams.GAME_ID: (6, "it")}


def when(event: RecordedEvent) -> str:
    return f"{event.recorded_at:%Y-%m-%d %H:%M:%S} UTC"


def leaks(game_id: str, events: list[RecordedEvent], seat: int, page: PageText) -> list[str]:
    """What the page shows that `seat` may not know (tests/e2e/leaks.py, log numbering)."""
    admin = [LoggedEvent(e.position, e.type, e.data) for e in events]
    seen = [
        seen_page(position, texts, f"page #{position}")
        for position, texts in page.by_position.items()
    ]
    return find_leaks(game_id, admin, seat, seen, log_numbers=True)


async def write_page(db: Database, table_id: str, out: Path, *args: str) -> None:
    run = await kozyr(db.url, "replay", table_id, "--html", str(out), *args)
    assert run.returncode == 0, run.stderr
    assert run.stdout.startswith(f"wrote {out} (")
    assert "Traceback" not in run.stderr


def assert_rendered(page: Path, tmp_path: Path) -> PageText:
    """Chromium renders the page (a real, non-blank screenshot) and its DOM reads back."""
    png = page.with_suffix(".png")
    assert screenshot(page, png, tmp_path / f"{page.stem}-profile", *WINDOW) == WINDOW
    assert png.stat().st_size > MIN_PNG_BYTES
    text = page_text(dump_dom(page, tmp_path / f"{page.stem}-profile"))
    assert text.urls, "the page links its own sections"
    assert [u for u in text.urls if not u.startswith("#")] == [], "nothing outside the page"
    return text


def assert_moderator_page(game_id: str, events: list[RecordedEvent], page: PageText) -> None:
    """Every hand as dealt, every move with its time, seat and player, every deal's
    commitment and seed with both checks holding, scores and the result."""
    text = page.text()
    for name in PLAYERS[game_id]:
        assert name in page.by_position[0]
    for event in events:
        shown = " ".join(page.by_position.get(event.position, []))
        assert f"{event.position}" in shown, event
        assert when(event) in shown, event
        data = event.data
        if event.type in ("CardsDealt", "RoundDealt"):
            for hand in data["hands"]:
                assert " ".join(hand) in shown
            assert data["commitment"] in text
            assert data["seed"] in text
        if event.type in ("CardPlayed", "CardsLed", "CardsBeaten"):
            cards = data.get("cards") or [data["card"]]
            assert " ".join(cards) in shown
            assert PLAYERS[game_id][data["seat"]] in page.by_position[event.position]
        if event.type == "CardExchanged":
            assert data["given"] in shown
            assert data["returned"] in shown
    deals = sum(e.type in ("CardsDealt", "RoundDealt") for e in events)
    fairness = text[text.index("Fairness proof") :]
    assert fairness.count("\nyes\nyes") == deals  # SHA-256(seed) = commitment; re-derived
    assert "yes: every check holds" in fairness
    assert "\nResult:" in text


@pytest.mark.parametrize("game_id", [three_five_eight.GAME_ID, khozor_teams.GAME_ID])
async def test_a_whole_game_as_the_moderator_and_as_a_seat_saw_it(
    db: Database, game_id: str, tmp_path: Path
) -> None:
    table = await play(db, game_id, seed=15)
    events, _ = await db.stream(table.table_id)
    seat, lang = SEATS[game_id]
    moderator, seat_page = tmp_path / "moderator.html", tmp_path / f"seat-{seat}.html"
    await write_page(db, table.table_id, moderator)
    await write_page(db, table.table_id, seat_page, "--seat", str(seat), "--lang", lang)

    checked = validate(moderator, seat_page)
    assert checked.returncode == 0, (checked.stdout + checked.stderr)[-3000:]

    everything = assert_rendered(moderator, tmp_path)
    assert_moderator_page(game_id, events, everything)

    mine = assert_rendered(seat_page, tmp_path)
    assert leaks(game_id, events, seat, mine) == []
    text = mine.text()
    assert {"ro": "Dovada corectitudinii", "it": "Prova di equità"}[lang] in text
    assert "Fairness proof" not in text
    plays = [e for e in events if e.type in ("CardPlayed", "CardsLed", "CardsBeaten")]
    for play_event in plays:
        shown = mine.by_position[play_event.position]
        assert when(play_event) in shown
        assert PLAYERS[game_id][play_event.data["seat"]] in shown
    for dealt in [e for e in events if e.type in ("CardsDealt", "RoundDealt")]:
        assert dealt.data["commitment"] in text
        assert dealt.data["seed"] in text  # revealed: the game is over
    # The checker is not blind: the moderator's page, shown to this seat, leaks.
    assert leaks(game_id, events, seat, everything)
