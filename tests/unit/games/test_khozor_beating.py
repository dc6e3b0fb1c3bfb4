"""The beating relation, the strength order, and matching a defence to a play."""

from __future__ import annotations

from itertools import combinations, permutations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kozyr.games.cards import Card, Suit, parse_card
from kozyr.games.khozor_teams import DECK, assign_beats, beating_sets, beats, power
from kozyr.games.khozor_teams.scenarios import cards

H, D, S, C = Suit.HEARTS, Suit.DIAMONDS, Suit.SPADES, Suit.CLUBS


@pytest.mark.parametrize(
    ("x", "y", "trump", "expected"),
    [
        # jokers among themselves
        ("JK-red", "JK-black", H, True),
        ("JK-black", "JK-gray", H, True),
        ("JK-red", "JK-gray", H, True),
        ("JK-gray", "JK-black", H, False),
        ("JK-black", "JK-red", H, False),
        ("JK-gray", "JK-gray", H, False),
        # a joker against the trump ace, and the trump ace against a joker
        ("JK-gray", "AH", H, True),
        ("AH", "JK-gray", H, False),
        ("JK-gray", "AS", S, True),
        ("AS", "JK-gray", S, False),
        # trump against non-trump, both ways
        ("7H", "AS", H, True),
        ("AS", "7H", H, False),
        ("7D", "AH", D, True),
        ("AH", "7D", D, False),
        # the same suit: the order 7 8 9 10 J Q K 3 2 A
        ("8S", "7S", H, True),
        ("7S", "8S", H, False),
        ("10C", "9C", H, True),
        ("JC", "10C", H, True),
        ("3S", "KS", H, True),
        ("KS", "3S", H, False),
        ("2S", "3S", H, True),
        ("AS", "2S", H, True),
        ("2S", "AS", H, False),
        ("8H", "7H", H, True),
        ("7H", "8H", H, False),
        ("AS", "AS", H, False),
        # different non-trump suits never beat each other
        ("AS", "7C", H, False),
        ("7C", "AS", H, False),
        ("AD", "7C", S, False),
    ],
)
def test_beating_relation(x: str, y: str, trump: Suit, expected: bool) -> None:
    assert beats(parse_card(x), parse_card(y), trump) is expected


def test_strength_order_for_timeouts() -> None:
    """Non-trumps by rank < trumps by rank < jokers."""
    ladder = cards("7S AS 7H AH JK-gray JK-black JK-red")
    powers = [power(c, H) for c in ladder]
    assert powers == sorted(powers)
    assert len(set(powers)) == len(powers)
    assert power(parse_card("7C"), H) == power(parse_card("7S"), H)


def test_greedy_placement_fails_but_a_matching_exists() -> None:
    """7♠ (trump) beats both 7♣ and 8♦; 8♣ beats only 7♣.

    Placing 7♠ on the first target it beats (7♣) strands 8♣: the assignment must
    re-route 7♠ to 8♦.
    """
    defence, attack = cards("7S 8C"), cards("7C 8D")
    first_fit: list[int] = []
    for d in defence:
        free = [j for j, a in enumerate(attack) if beats(d, a, S) and j not in first_fit]
        if free:
            first_fit.append(free[0])
    assert len(first_fit) < len(attack), "the case must defeat first-fit placement"
    assert assign_beats(defence, attack, S) == (1, 0)


def test_three_card_matching_needs_an_augmenting_chain() -> None:
    # With ♥ trump: 9C beats 7C, 8C; 8C beats 7C; 8H (trump) beats all.
    attack = cards("7C 8C 9D")
    assert assign_beats(cards("8H 9C 8C"), attack, H) is not None
    assert assign_beats(cards("9C 8C 10C"), attack, H) is None  # nothing beats 9D
    assert assign_beats(cards("8H 9C"), attack, H) is None  # wrong size


def _brute_force_beats(defence: tuple[Card, ...], attack: tuple[Card, ...], trump: Suit) -> bool:
    return len(defence) == len(attack) and any(
        all(beats(d, a, trump) for d, a in zip(defence, perm, strict=True))
        for perm in permutations(attack)
    )


_ORDINARY = [c for c in DECK if c.joker is None]


@settings(max_examples=150, deadline=None)
@given(
    pool=st.lists(st.sampled_from(DECK), min_size=2, max_size=12, unique=True),
    size=st.sampled_from([1, 3, 5]),
    trump=st.sampled_from([H, D, S, C]),
    data=st.data(),
)
def test_matching_and_enumeration_agree_with_brute_force(
    pool: list[Card], size: int, trump: Suit, data: st.DataObject
) -> None:
    source = DECK if size == 1 else _ORDINARY  # only a single card may be a joker
    attack = tuple(
        data.draw(st.lists(st.sampled_from(source), min_size=size, max_size=size, unique=True))
    )
    hand = tuple(c for c in pool if c not in attack)
    for defence in combinations(hand, size):
        assert (assign_beats(defence, attack, trump) is not None) == _brute_force_beats(
            defence, attack, trump
        )
    expected = {
        frozenset(d)
        for d in combinations(hand, size)
        if (size == 1 or not any(c.joker for c in d)) and _brute_force_beats(d, attack, trump)
    }
    found = beating_sets(hand, attack, trump, limit=10_000)
    assert len(found) == len(set(map(frozenset, found)))
    assert set(map(frozenset, found)) == expected
    if found:
        least = min(sum(power(c, trump) for c in d) for d in expected)
        assert sum(power(c, trump) for c in found[0]) == least
    limited = beating_sets(hand, attack, trump, limit=2)
    assert limited == found[:2]
