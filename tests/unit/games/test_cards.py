"""The shared card model: texts, interning, suit order and canonical decks."""

from __future__ import annotations

import pytest

from kozyr.games.cards import (
    Card,
    CardParseError,
    JokerColor,
    Rank,
    RankOrder,
    Suit,
    card,
    format_cards,
    joker,
    parse_card,
    parse_cards,
)

ACE_HIGH = RankOrder(
    (
        Rank.TWO,
        Rank.THREE,
        Rank.FOUR,
        Rank.FIVE,
        Rank.SIX,
        Rank.SEVEN,
        Rank.EIGHT,
        Rank.NINE,
        Rank.TEN,
        Rank.JACK,
        Rank.QUEEN,
        Rank.KING,
        Rank.ACE,
    )
)


def test_text_round_trip_for_every_card() -> None:
    for suit in Suit:
        for rank in Rank:
            c = card(rank, suit)
            assert parse_card(str(c)) is c
    for color in JokerColor:
        assert parse_card(str(joker(color))) is joker(color)


@pytest.mark.parametrize(
    ("text", "expected"),
    [("AS", "AS"), ("10h", "10H"), (" qd ", "QD"), ("JK-RED", "JK-red"), ("jk-Gray", "JK-gray")],
)
def test_parsing_is_case_and_space_insensitive(text: str, expected: str) -> None:
    assert str(parse_card(text)) == expected


@pytest.mark.parametrize("text", ["", "1S", "AX", "11H", "JK-blue", "S", "NT"])
def test_unknown_texts_are_refused(text: str) -> None:
    with pytest.raises(CardParseError):
        parse_card(text)


def test_cards_are_interned_and_equal_to_fresh_instances() -> None:
    fresh = Card(Rank.ACE, Suit.SPADES)
    assert fresh == card(Rank.ACE, Suit.SPADES)
    assert fresh is not card(Rank.ACE, Suit.SPADES)
    assert parse_card("AS") is card(Rank.ACE, Suit.SPADES)
    assert hash(fresh) == hash(parse_card("AS"))


def test_a_card_built_by_hand_has_its_own_text_whatever_was_interned_before() -> None:
    """Interned cards keep their text by id; a card built by hand (a fresh object, maybe at
    the address of one freed a moment ago) is never read from that table."""
    for _ in range(200):  # each call builds a throwaway card before finding the interned one
        card(Rank.ACE, Suit.SPADES)
        joker(JokerColor.RED)
    for rank in Rank:
        for suit in Suit:
            built = Card(rank, suit)
            assert str(built) == f"{rank.value}{suit.value}"
            assert str(card(rank, suit)) == str(built)
    for color in JokerColor:
        assert str(Card(None, None, color)) == f"JK-{color.value}" == str(joker(color))


def test_suit_order_clubs_lowest_spades_highest() -> None:
    assert [s.order for s in (Suit.CLUBS, Suit.DIAMONDS, Suit.HEARTS, Suit.SPADES)] == [0, 1, 2, 3]
    assert [s.symbol for s in Suit] == ["♣", "♦", "♥", "♠"]


def test_canonical_deck_is_suit_by_suit_weakest_first() -> None:
    deck = ACE_HIGH.deck()
    assert len(deck) == 52
    assert len(set(deck)) == 52
    assert format_cards(deck[:3]) == ["2C", "3C", "4C"]
    assert str(deck[12]) == "AC"
    assert str(deck[13]) == "2D"
    assert str(deck[-1]) == "AS"
    with_jokers = ACE_HIGH.deck([JokerColor.GRAY, JokerColor.RED])
    assert format_cards(with_jokers[-2:]) == ["JK-gray", "JK-red"]


def test_rank_order_strength() -> None:
    assert ACE_HIGH.strength(Rank.TWO) == 0
    assert ACE_HIGH.strength(Rank.ACE) == 12
    assert ACE_HIGH.strength(Rank.TEN) < ACE_HIGH.strength(Rank.JACK)


def test_parse_and_format_many() -> None:
    assert format_cards(parse_cards(["AS", "10h", "2c"])) == ["AS", "10H", "2C"]
    assert parse_card("JK-black").is_joker
    assert not parse_card("2C").is_joker
