"""The dispute viewer's page without a browser: its fairness proofs (which must be able
to say "no"), what a seat's page holds back, its languages, escaping, and that it
points at nothing outside itself. Chromium, the HTML checker and the leak checker see
whole games' pages in tests/integration/table/test_dispute_viewer.py."""

from __future__ import annotations

import dataclasses
import hashlib
from html import escape
from pathlib import Path

import pytest

from kozyr.cli.problems import CliError
from kozyr.cli.tables import write_page
from kozyr.eventstore import RecordedEvent
from kozyr.games import khozor_teams, three_five_eight
from kozyr.games.plugin import cards_text
from kozyr.table import audit
from kozyr.table.adapters.repository import stream_of
from kozyr.table.audit.labels import LABELS
from kozyr.table.domain import model
from kozyr.table.domain.history import history_data
from kozyr.texts import Lang
from tests.support.pages import page_text
from tests.unit.table.test_audit_games import GAMES, played, rehashed
from tests.unit.table.test_open_hand_views import DELAY
from tests.unit.table.test_open_hand_views import _play as play_moves
from tests.unit.table.test_open_hand_views import _table as open_hand_table


def page_of(events: list[RecordedEvent], seat: int | None = None, lang: Lang = Lang.EN) -> str:
    return audit.dispute_page(events, rehashed(events)[1], seat, lang)


def fairness_rows(page: str) -> list[list[str]]:
    """The fairness table's rows as their cells' texts."""
    section = page[page.index('<section id="fairness">') :]
    body = section[section.index("<tbody>") : section.index("</tbody>")]
    return [
        [t for texts in page_text(row).by_position.values() for t in texts]
        for row in body.split("</tr>")
        if "<td" in row
    ]


def test_every_label_is_in_every_language() -> None:
    assert {key: set(texts) for key, texts in LABELS.items() if set(texts) != set(Lang)} == {}


@pytest.mark.parametrize("game_id", GAMES)
def test_an_honest_game_proves_every_deal(game_id: str) -> None:
    game = played(game_id)
    page = page_of(game.copy_events())
    deals = [e for e in game.events if e.type in ("CardsDealt", "RoundDealt")]
    rows = fairness_rows(page)
    assert [row[0] for row in rows] == [str(n) for n in range(1, len(deals) + 1)]
    for row, dealt in zip(rows, deals, strict=True):
        assert row[1:] == [dealt.data["commitment"], dealt.data["seed"], "yes", "yes", "yes"]
    assert "yes: every check holds" in page


def test_a_seed_that_deals_other_hands_is_a_no() -> None:
    game = played(three_five_eight.GAME_ID)
    events = game.copy_events()
    dealt = next(e for e in events if e.type == "CardsDealt")
    other = bytes(32)
    dealt.data["seed"], dealt.data["commitment"] = other.hex(), hashlib.sha256(other).hexdigest()
    row = fairness_rows(page_of(events))[0]
    # the seed hashes to its commitment; its deal differs; it is not the derivation
    assert row[-3:] == ["yes", "no", "no"]
    assert f"no: DEAL_MISMATCH fails at event #{dealt.position}" in page_of(events)


def test_a_seed_that_misses_its_commitment_is_a_no() -> None:
    game = played(khozor_teams.GAME_ID)
    events = game.copy_events()
    dealt = next(e for e in events if e.type == "RoundDealt")
    dealt.data["commitment"] = "0" * 64
    assert fairness_rows(page_of(events))[0][-3:] == ["no", "yes", "yes"]


def test_a_seat_page_holds_back_the_hands_and_the_seed_not_yet_revealed() -> None:
    game = played(three_five_eight.GAME_ID)
    middle = [e for e in game.events if e.type == "TrickTaken"][20].position
    events = game.copy_events()[:middle]
    dealt = [e for e in events if e.type == "CardsDealt"]
    page = page_of(events, seat=0)
    current = dealt[-1].data
    assert current["commitment"] in page
    assert current["seed"] not in page
    assert " ".join(current["hands"][1]) not in page
    assert " ".join(current["hands"][0][:6]) in page  # its own first six
    last = fairness_rows(page)[-1]
    assert last[2:] == ["not revealed yet", "-", "yes", "-"]
    assert dealt[0].data["seed"] in page  # deal 1 is over: revealed
    assert "in progress" in page
    assert "Made by" not in page  # who acted: the moderator's only
    assert "(player)" not in page


def test_a_seat_page_re_derives_each_ended_deal_from_its_server_and_client_seeds() -> None:
    """Seed scheme 2 on a seat's page: the derivation is checked from what the seat was
    shown (DealSeeded, ServerSeedRevealed); a ground server seed is a no."""
    game = played(three_five_eight.GAME_ID)
    events = game.copy_events()
    assert [row[-1] for row in fairness_rows(page_of(events, seat=1))] == ["yes"] * len(
        [e for e in events if e.type == "CardsDealt"]
    )
    reveal = next(e for e in events if e.type == "ServerSeedRevealed" and e.data["deal"] == 2)
    reveal.data["server_seed"] = bytes(32).hex()
    assert [row[-1] for row in fairness_rows(page_of(events, seat=1))][:3] == ["yes", "no", "yes"]


def test_the_page_speaks_the_viewers_language() -> None:
    events = played(khozor_teams.GAME_ID).copy_events()
    page = page_of(events, seat=2, lang=Lang.RO)
    assert '<html lang="ro">' in page
    for key in ("fairness", "players", "Round", "seat_view"):
        assert LABELS[key][Lang.RO].split(" {")[0] in page
    assert LABELS["fairness"][Lang.EN] not in page


def test_player_names_are_escaped_and_nothing_points_outside_the_page() -> None:
    events = played(three_five_eight.GAME_ID).copy_events()
    events[0].data["seats"] = ['<img src="https://example.org/x.png">', "bogdan", "chiara"]
    page = page_of(events)
    assert "<img" not in page
    assert "&lt;img src=&quot;https://example.org/x.png&quot;&gt;" in page
    text = page_text(page)
    assert text.urls
    assert all(url.startswith("#") for url in text.urls)
    assert "<script" not in page
    assert "<link" not in page


def test_a_page_that_cannot_be_written_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(CliError, match="cannot write the page to"):
        write_page(tmp_path / "missing" / "page.html", "<!DOCTYPE html>")
    assert write_page(tmp_path / "page.html", "<p>é</p>").endswith("(9 bytes)")
    assert (tmp_path / "page.html").read_bytes() == "<p>é</p>".encode()


def test_a_spectator_page_is_what_a_spectators_history_shows() -> None:
    """The dispute viewer for a spectator (issue 27): every step exactly as GetHistory
    gives a spectator (the table service's own redaction), no hand, no seed before its
    reveal, nobody's request."""
    game = played(three_five_eight.GAME_ID)
    middle = [e for e in game.events if e.type == "TrickTaken"][20].position
    events = game.copy_events()[:middle]
    seen = audit.replay(events, spectator=True)
    steps = [*seen.opening, *(s for d in seen.deals for s in (d.start, *d.steps)), *seen.ending]
    table = None
    expected = []
    for event in events:
        table = model.apply(table, model.decode(table, event.type, event.data))
        data = history_data(table, event, None, full=False)
        if data is not None:
            expected.append((event.position, dict(data)))
    assert [(s.position, s.data) for s in steps] == expected
    assert all(s.origin is None for s in steps)
    page = audit.dispute_page(events, rehashed(events)[1], spectator=True)
    current = [e for e in events if e.type == "CardsDealt"][-1].data
    assert not any(" ".join(hand[:6]) in page for hand in current["hands"])
    assert current["seed"] not in page
    assert "only what a spectator saw" in page
    assert "Made by" not in page


async def test_an_open_hand_spectators_page_stops_at_his_delay_with_every_hand() -> None:
    """The open-hand spectator's dispute viewer (docs/open-hand.md): the spectator's
    replay cut where his view is — right before the move DELAY moves back — every hand
    there and nothing after it; the whole table once it is over."""
    app, table = await open_hand_table()
    table = await play_moves(app, table, DELAY + 6)
    events = await app.store.read(stream_of(table.table_id))
    shown = table.open_hand_version()
    assert 1 < shown <= table.version - DELAY
    cut = audit.open_hand_replay(events)
    assert cut.open_hands is not None
    assert (cut.version, cut.open_hands.version, cut.open_hands.delay) == (shown, shown, DELAY)
    past = await app.tables.at_version(table.table_id, shown)
    assert cut.open_hands.hands == model.open_hands(past)
    last = max(s.position for s in [*cut.opening, *(x for d in cut.deals for x in d.steps)])
    assert last <= shown
    assert cut == dataclasses.replace(
        audit.replay(events[:shown], spectator=True), open_hands=cut.open_hands
    )
    text = cut.to_text()
    assert f"Open hands at #{shown}:" in text
    assert f"{DELAY} moves behind" in text
    page = audit.dispute_page(events, rehashed(events)[1], open_hand=True, lang=Lang.RO)
    assert f"Toate mâinile la #{shown}" in page
    past_hand = cut.open_hands.hands[0]
    assert past_hand
    assert escape(cards_text(past_hand)) in page
    live_hand = model.open_hands(table)[0]
    assert live_hand != cut.open_hands.hands[0], "the live hand moved on"


async def test_an_open_hand_page_needs_the_option() -> None:
    game = played(three_five_eight.GAME_ID)
    with pytest.raises(audit.NoOpenHand, match="no open-hand spectating"):
        audit.open_hand_replay(game.events)
    assert issubclass(audit.NoOpenHand, audit.NoSuchViewer)
