"""A searching level reads the seat's history from where its game's deal or round began
(`GameInfo.history_starts`): the bots cut what they read there, and read further back
until they reach it."""

from __future__ import annotations

from kozyr.api.common.v1 import games_pb2
from kozyr.api.table.v1 import views_pb2
from kozyr.bots.knowledge import HistoryEntry, deal_began, knowledge
from kozyr.games.catalogue import game_by_code

HISTORY: list[HistoryEntry] = [
    ("CardsDealt", {"deal": 1}),
    ("CardPlayed", {"card": "AS"}),
    ("RoundDealt", {"round": 1}),
    ("CardsDealt", {"deal": 2}),
    ("CardPlayed", {"card": "7H"}),
    ("RoundDealt", {"round": 2}),
    ("Beat", {"cards": ["8H"]}),
]


def test_the_history_is_cut_where_the_view_s_game_begins_a_deal_or_round() -> None:
    three = views_pb2.TableView(game=games_pb2.GAME_THREE_FIVE_EIGHT)
    khozor = views_pb2.TableView(game=games_pb2.GAME_KHOZOR_TEAMS)
    assert game_by_code(three.game).info.history_starts == {"CardsDealt"}
    assert knowledge(three, HISTORY).events == tuple(HISTORY[3:])
    assert knowledge(khozor, HISTORY).events == tuple(HISTORY[5:])
    assert deal_began(three, HISTORY[1:3]) is False
    assert deal_began(khozor, HISTORY[1:3]) is True


def test_a_game_this_process_lacks_keeps_the_whole_history() -> None:
    unknown = views_pb2.TableView(game=9999)  # type: ignore[arg-type]
    assert knowledge(unknown, HISTORY).events == tuple(HISTORY)
    assert deal_began(unknown, HISTORY) is False
