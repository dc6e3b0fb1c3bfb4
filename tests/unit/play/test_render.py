"""`kozyr play`'s pure rendering: what each game's table shows a seat, in its language."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from kozyr.api.table.v1 import actions_pb2
from kozyr.cli.play import controls, render
from kozyr.cli.play.controls import Selection
from kozyr.cli.play.texts import LABELS, label
from kozyr.games.khozor_teams import play_ui as render_khozor
from kozyr.games.three_five_eight import play_ui as render_358
from kozyr.texts import Lang
from tests.unit.play.views import cards_action, contract, khozor_view, play, tfe_view

NOW = datetime(2026, 11, 30, 12, 0, tzinfo=UTC)


def test_cards_read_in_the_players_language() -> None:
    assert render.card_label("QS", Lang.EN) == "Q♠"
    assert render.card_label("QS", Lang.RO) == "D♠"
    assert render.card_label("JK-red", Lang.IT) == "jolly rosso"
    assert render.card_label("??", Lang.EN) == "??"
    assert render.card_text("10H", Lang.EN).style == "red"


def test_the_clock_counts_down_to_the_deadline() -> None:
    assert render.seconds_left(NOW + timedelta(seconds=2.5), NOW) == 3
    assert render.seconds_left(NOW - timedelta(seconds=4), NOW) == 0
    assert render.seconds_left(None, NOW) is None


def test_the_turn_line_says_whose_turn_what_and_how_long() -> None:
    view = tfe_view(legal=[play("AS")])
    view.turn.deadline.FromDatetime(NOW + timedelta(seconds=23))
    assert render.turn_line(view, Lang.EN, NOW).plain == "YOUR TURN · Play a card · 23 s · Turn 5"
    assert (
        render.turn_line(view, Lang.RO, NOW).plain == "RÂNDUL TĂU · Joacă o carte · 23 s · Tura 5"
    )
    waiting = tfe_view(seats=[2])
    assert render.turn_line(waiting, Lang.EN, NOW).plain == "Waiting for bob · Play a card · Turn 5"
    waiting.finished = True
    assert render.turn_line(waiting, Lang.EN, NOW).plain == "GAME OVER"


def test_the_first_deals_seed_window_is_named_in_every_language() -> None:
    view = tfe_view(kind="client_seed", seats=[0, 2], turn=2)
    view.turn.deadline.FromDatetime(NOW + timedelta(seconds=9))
    lines = {lang: render.turn_line(view, lang, NOW).plain for lang in Lang}
    assert lines[Lang.EN] == "Waiting for ana (you), bob · Seeds for the first deal · 9 s · Turn 2"
    assert "Semințele primei împărțiri" in lines[Lang.RO]
    assert "Semi della prima mano" in lines[Lang.IT]


def test_the_hand_row_shows_cursor_marks_and_unlisted_cards() -> None:
    row = render.hand_row(
        ["7C", "QS", "AS"], Selection(cursor=2, marked=frozenset({1})), {"AS"}, Lang.EN
    )
    assert row.plain == "1:7♣  2:Q♠*  3:A♠"
    styles = {row.plain[span.start : span.end]: span.style for span in row.spans}
    assert styles["7♣"] == "dim"
    assert styles["Q♠"] == "dim underline bold"
    assert styles["A♠"] == "reverse"


def test_the_contract_choices_dim_the_used_ones() -> None:
    view = tfe_view(kind="contract", legal=[contract(actions_pb2.CONTRACT_HEARTS)])
    row = render.choices_row(view, Selection(cursor=1), Lang.EN)
    assert row.plain.startswith("1:♠ trump  2:♥ trump  3:♦ trump")
    assert row.plain.endswith("6:Minimum tricks")
    styles = {row.plain[span.start : span.end]: span.style for span in row.spans}
    assert styles["1:♠ trump"] == "dim"
    assert styles["2:♥ trump"] == "reverse"


def test_moves_in_words() -> None:
    view = khozor_view()
    assert render.describe(view, cards_action("lead", ["QS", "QH"]), Lang.RO) == "D♠ D♥"
    assert render.describe(view, controls.pick_up(), Lang.IT) == "raccogli"
    signal = controls.toggle_signal(actions_pb2.SIGNAL_FIVE_SET)
    assert render.describe(view, signal, Lang.RO) == "set de 5"
    opener = actions_pb2.Action(confirm_opener=actions_pb2.ConfirmOpener(opener_seat=2))
    assert render.describe(view, opener, Lang.EN) == "opener: computer 2"
    tfe = tfe_view()
    assert render.describe(tfe, contract(actions_pb2.CONTRACT_NO_TRUMP), Lang.RO) == "Fără atu"


def test_the_3_5_8_table_shows_each_seat_and_what_it_has_left() -> None:
    view = tfe_view()
    game = view.three_five_eight
    game.contract, game.trump = "H", "H"
    lines = [line.plain for line in render_358.table_lines(view, Lang.EN)]
    assert lines[0] == "Deal 3/18 · Play · Contract: ♥ trump · Trump: ♥"
    assert lines[1] == (
        "Seat 0 ana (you) [person · online] Dealer · tricks 1 of 3 · 4 cards · 4 points"
        " · contracts left: ♥ ♦ ♣ NT MT"
    )
    assert lines[2].startswith("Seat 1 computer 1 [computer easy · online] Declarer")
    assert lines[2].endswith("contracts left: ♠ ♦ ♣ MT")
    assert lines[3].startswith("Seat 2 bob [person · offline] Third player")
    romanian = render_358.seat_lines(view, Lang.RO)[1].plain
    assert romanian.startswith("Locul 1 calculator 1 [calculator ușor · conectat] Declarant")
    assert render_358.contracts_left(game, 2) == ["S", "H", "D", "C", "NT", "MT"]


def test_the_3_5_8_trick_shows_who_played_what_and_who_took_the_last() -> None:
    view = tfe_view()
    game = view.three_five_eight
    game.tricks_played = 4
    game.trick.add(seat=1, card="QS")
    game.trick.add(seat=2, card="2S")
    last = game.last_trick
    last.number, last.leader, last.winner = 4, 0, 2
    for seat, card in ((0, "7D"), (1, "9D"), (2, "AD")):
        last.cards.add(seat=seat, card=card)
    lines = [line.plain for line in render_358.trick_lines(view, Lang.RO)]
    assert lines == [
        "Levata 5: calculator 1: D♠  bob: 2♠",
        "Ultima levată 4: ana (tu): 7♦  calculator 1: 9♦  bob: A♦ — luată de bob",
    ]


def test_the_3_5_8_result_lists_places_with_points() -> None:
    view = tfe_view()
    view.finished = True
    result = view.three_five_eight.result
    result.totals.extend([-5, 12, -7])
    result.places.extend([2, 1, 3])
    result.winners.append(1)
    lines = [line.plain for line in render_358.result_lines(view, Lang.EN)]
    assert lines == [
        "GAME OVER",
        "1. place: computer 1 — 12 points",
        "2. place: ana (you) — -5 points",
        "3. place: bob — -7 points",
    ]
    view.finished = False
    assert render_358.result_lines(view, Lang.EN) == []


def test_the_khozor_table_shows_teams_pile_and_own_signals() -> None:
    view = khozor_view()
    game = view.khozor_teams
    game.pile.add(seat=1, kind="lead", cards=["9S"])
    game.pile.add(seat=2, kind="beat", cards=["QS"])
    lines = [line.plain for line in render_khozor.table_lines(view, Lang.EN)]
    assert lines[0] == (
        "Round 2 · Play · Trump: ♥ · Rounds won: A 1 – B 0 · Team A opens · Opener: ana (you)"
    )
    assert lines[1] == "Team A · ana (you) [person · online] 5 cards · Signals: —"
    assert lines[2] == "Team A · computer 2 [computer · online] 5 cards · Signals: 3-set"
    assert lines[5] == "Team B · computer 1 [computer · online] 5 cards"
    assert lines[9:] == [
        "Reserve: 20 cards · 4 asleep",
        "Pile:",
        "  computer 1 leads 9♠",
        "  computer 2 beats Q♠",
    ]


def test_the_khozor_result_names_the_winning_team() -> None:
    view = khozor_view()
    view.finished = True
    view.khozor_teams.match_winner = "B"
    lines = [line.plain for line in render_khozor.result_lines(view, Lang.IT)]
    assert lines == ["PARTITA FINITA", "La squadra B vince la partita · Turni vinti: A 1 – B 0"]


@pytest.mark.parametrize("key", sorted(LABELS))
def test_every_label_reads_in_every_language(key: str) -> None:
    texts = LABELS[key]
    assert set(texts) == set(Lang)
    params = {"move": "x", "seconds": 1, "code": "c", "players": 1, "state": "s"}
    params |= {"team": "A", "name": "n", "table_id": "t", "join": "j", "back": "b"}
    assert {label(key, lang, **params) for lang in Lang}  # every template fills


def test_the_3_5_8_exchange_shows_the_cards_this_seat_gave_and_got() -> None:
    view = tfe_view(kind="exchange_give")
    exchange = view.three_five_eight.exchange
    exchange.transfers.add(giver=0, receiver=1, count=2, given=1)
    exchange.steps.add(giver=0, receiver=1, number=1, given="7C", returned="AS")
    exchange.steps.add(giver=2, receiver=1, number=1)  # another seat's: hidden
    lines = [line.plain for line in render_358.exchange_lines(view, Lang.EN)]
    assert lines == ["Exchange: ana (you) → computer 1 7♣ ← A♠"]


def test_the_3_5_8_table_shows_the_last_deals_points() -> None:
    view = tfe_view()
    view.three_five_eight.deal_scores.add(deal=2, contract="NT", points=[3, -1, -2])
    assert [line.plain for line in render_358.last_deal_line(view, Lang.RO)] == [
        "Mâna 2 (Fără atu): ana (tu) +3 · calculator 1 -1 · bob -2"
    ]
