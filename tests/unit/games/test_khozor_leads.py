"""Leads: 1 card; 3 with a pair; 5 with two pairs; jokers singly; the hand-size edges."""

from __future__ import annotations

import pytest

from kozyr.games.errors import RuleError
from kozyr.games.khozor_teams import CardsLed, Lead, SignalKind, decide, holds_set
from kozyr.games.khozor_teams.model import State
from kozyr.games.khozor_teams.scenarios import cards, fill_hands, position


def _reason(state: State, command: object) -> str:
    with pytest.raises(RuleError) as refused:
        decide(state, command)
    return refused.value.reason


def _leads(state: State, seat: int, text: str) -> bool:
    events = decide(state, Lead(seat, cards(text)))
    return events[0] == CardsLed(seat, cards(text))


def _table(hand: str, *, size: int = 5, reserve: str = "", **others: str) -> State:
    chosen = {0: hand, **{int(k[1:]): v for k, v in others.items()}}
    return position(fill_hands(chosen, size=size, reserve=reserve), reserve, opener=0)


@pytest.mark.parametrize("lead", ["7H", "AS", "JK-gray", "JK-red"])
def test_any_single_card_leads(lead: str) -> None:
    state = _table("7H AS JK-gray JK-red 8D")
    assert _leads(state, 0, lead)


@pytest.mark.parametrize("lead", ["7H 7S 9D", "7H 7S 7D", "9D 7H 7S"])
def test_three_cards_with_a_pair_or_a_triple(lead: str) -> None:
    assert _leads(_table("7H 7S 7D 9D JK-red"), 0, lead)


@pytest.mark.parametrize(
    ("lead", "hand"),
    [
        ("7H 7S 9D 9C AS", "7H 7S 9D 9C AS"),  # two pairs and one more
        ("7H 7S 7D 7C AS", "7H 7S 7D 7C AS"),  # four of a kind counts as two pairs
        ("7H 7S 7D 9C 9S", "7H 7S 7D 9C 9S"),  # a full house too
    ],
)
def test_five_card_shapes(lead: str, hand: str) -> None:
    assert _leads(_table(hand), 0, lead)


@pytest.mark.parametrize(
    ("lead", "hand", "reason"),
    [
        ("7H 8S 9D", "7H 8S 9D 10C JS", "INVALID_LEAD"),
        ("7H 7S 7D 9C AS", "7H 7S 7D 9C AS", "INVALID_LEAD"),  # a triple is one pair only
        ("7H 8S 9D 10C AS", "7H 8S 9D 10C AS", "INVALID_LEAD"),
        ("7H 7S JK-red", "7H 7S JK-red 9D 10C", "JOKER_NOT_SINGLE"),
        ("7H 7S 9D 9C JK-red", "7H 7S 9D 9C JK-red", "JOKER_NOT_SINGLE"),
        ("7H 7S", "7H 7S 9D 9C AS", "WRONG_CARD_COUNT"),
        ("7H 7S 9D 9C", "7H 7S 9D 9C AS", "WRONG_CARD_COUNT"),
        ("AD", "7H 7S 9D 9C AS", "CARD_NOT_IN_HAND"),
        ("7H 7H 9D", "7H 7S 9D 9C AS", "DUPLICATE_CARD"),
    ],
)
def test_refused_leads(lead: str, hand: str, reason: str) -> None:
    assert _reason(_table(hand), Lead(0, cards(lead))) == reason


def test_an_empty_lead_is_refused() -> None:
    assert _reason(_table("7H"), Lead(0, ())) == "WRONG_CARD_COUNT"


def test_three_card_lead_edge_every_hand_at_least_three() -> None:
    lead = Lead(0, cards("7H 7S 9D"))
    at_edge = _table("7H 7S 9D", size=3, reserve="AS AD AC")  # reserve may still hold cards
    assert _leads(at_edge, 0, "7H 7S 9D")
    below = _table("7H 7S 9D 10C", size=3, s5="QC KC")  # seat 5 holds only 2
    assert _reason(below, lead) == "LEAD_NEEDS_THREE_CARDS_EACH"
    leader_short = _table("7H 7S 9D", size=4, s3="QC QD QH")
    assert _leads(leader_short, 0, "7H 7S 9D")


def test_five_card_lead_needs_an_empty_reserve() -> None:
    hand = "7H 7S 9D 9C AS"
    lead = Lead(0, cards(hand))
    assert _reason(_table(hand, reserve="AD"), lead) == "LEAD_NEEDS_EMPTY_RESERVE"
    assert _leads(_table(hand), 0, hand)


def test_five_card_lead_edge_every_hand_at_least_five() -> None:
    hand = "7H 7S 9D 9C AS"
    lead = Lead(0, cards(hand))
    assert _reason(_table(hand, s6="QC KC 3C 2C"), lead) == "LEAD_NEEDS_FIVE_CARDS_EACH"
    assert _leads(_table(hand, s6="QC KC 3C 2C AC"), 0, hand)
    assert _leads(_table(hand, s6="QC KC 3C 2C AC 7C"), 0, hand)


def test_only_the_player_to_lead_may_lead() -> None:
    state = _table("7H AS")
    assert _reason(state, Lead(1, (state.hands[1][0],))) == "NOT_YOUR_TURN"
    assert _reason(state, Lead(9, (state.hands[1][0],))) == "INVALID_SEAT"


@pytest.mark.parametrize(
    ("hand", "three", "five"),
    [
        ("7H 7S 9D", True, False),
        ("7H 7S JK-red", False, False),  # jokers never join a set
        ("7H 8S 9D 10C JS", False, False),
        ("7H 7S 7D", True, False),
        ("7H 7S 9D 9C", True, False),  # two pairs but no fifth card
        ("7H 7S 9D 9C JK-red", True, False),
        ("7H 7S 9D 9C AS", True, True),
        ("7H 7S 7D 7C AS", True, True),
        ("7H 7S 7D 9C 9S", True, True),
        ("7H 7S 7D 9C AS", True, False),
    ],
)
def test_holds_set(hand: str, three: bool, five: bool) -> None:
    assert holds_set(cards(hand), SignalKind.THREE_SET) is three
    assert holds_set(cards(hand), SignalKind.FIVE_SET) is five
