"""The fair-deal algorithm against an independent re-implementation and a published vector.

`_reference_shuffle` is written from docs/fair-deal.md alone (plain hashlib and ints),
as a third party would; the fixed vector is the one printed in that document.
"""

from __future__ import annotations

import hashlib
import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kozyr.games import fair_deal
from kozyr.games.cards import format_cards
from kozyr.games.three_five_eight import DECK, deal_from_seed

VECTOR_SEED = bytes(range(32))  # 00 01 02 … 1f
VECTOR_COMMITMENT = "630dcd2966c4336691125448bbb25b4ff412a49c732db2c8abc1b8581bd710dd"
VECTOR_DECK_TEXT = (
    "7H 8C JS 4D 3S 2S 7D JD KS 9D QC 3D 2D 10C 3H 4S "
    "KC 5C 6C JC AH AS QD 2C 8H KD 6S 6D 5S QS 10D KH "
    "3C 10H 9H 8D JH AD 4C QH 2H 7S 9C 4H 6H 10S 8S 7C "
    "9S 5H 5D AC"
)
VECTOR_DECK = VECTOR_DECK_TEXT.split()


def _reference_words(seed: bytes) -> list[int]:
    words: list[int] = []
    for counter in range(64):
        block = hashlib.sha256(seed + counter.to_bytes(8, "big")).digest()
        words.extend(int.from_bytes(block[i : i + 4], "big") for i in range(0, 32, 4))
    return words


def _reference_below(words: list[int], m: int) -> int:
    limit = 2**32 - (2**32 % m)
    while True:
        r = words.pop(0)
        if r < limit:
            return r % m


def _reference_shuffle(items: list[str], seed: bytes) -> list[str]:
    words = _reference_words(seed)
    order = list(items)
    for i in range(len(order) - 1, 0, -1):
        j = _reference_below(words, i + 1)
        order[i], order[j] = order[j], order[i]
    return order


def test_published_vector() -> None:
    assert fair_deal.commitment(VECTOR_SEED) == VECTOR_COMMITMENT
    assert format_cards(fair_deal.shuffle(DECK, VECTOR_SEED)) == VECTOR_DECK
    assert fair_deal.draw_index(VECTOR_SEED, 3) == 0


def test_published_vector_of_the_zero_seed_and_first_swaps() -> None:
    zero = bytes(32)
    assert fair_deal.commitment(zero) == (
        "66687aadf862bd776c8fc18b8e9f8e20089714856ee233b3902a591d0d5f2925"
    )
    assert fair_deal.draw_index(zero, 3) == 1
    assert format_cards(fair_deal.shuffle(DECK, zero)[:6]) == ["10S", "10D", "QD", "KD", "3D", "3H"]
    draws = fair_deal.SeededDraws(VECTOR_SEED)
    assert [draws.below(i + 1) for i in range(51, 45, -1)] == [12, 16, 29, 46, 5, 45]


def test_published_vector_deal_layout() -> None:
    hands, talon = deal_from_seed(VECTOR_SEED)
    assert [format_cards(h) for h in hands] == [
        VECTOR_DECK[0:16],
        VECTOR_DECK[16:32],
        VECTOR_DECK[32:48],
    ]
    assert format_cards(talon) == VECTOR_DECK[48:52]


def test_commitment_is_sha256_of_the_seed() -> None:
    seed = bytes([7]) * 32
    assert fair_deal.commitment(seed) == hashlib.sha256(seed).hexdigest()


@settings(max_examples=40, deadline=None)
@given(st.binary(min_size=32, max_size=32))
def test_shuffle_matches_the_reference(seed: bytes) -> None:
    deck = format_cards(DECK)
    assert format_cards(fair_deal.shuffle(DECK, seed)) == _reference_shuffle(deck, seed)


@settings(max_examples=40, deadline=None)
@given(st.binary(min_size=32, max_size=32), st.integers(min_value=1, max_value=2**32))
def test_draws_match_the_reference_including_rejections(seed: bytes, m: int) -> None:
    # m just above 2^31 rejects about half the words: the rejection path is exercised.
    for modulus in (m, 2**31 + 1):
        words = _reference_words(seed)
        draws = fair_deal.SeededDraws(seed)
        for _ in range(5):
            assert draws.below(modulus) == _reference_below(words, modulus)
    assert fair_deal.draw_index(seed, m) == _reference_below(_reference_words(seed), m)


def test_shuffle_is_a_permutation_and_depends_only_on_the_seed() -> None:
    seed = bytes(range(32, 64))
    random.seed(1)
    first = fair_deal.shuffle(DECK, seed)
    random.seed(2)
    random.random()
    second = fair_deal.shuffle(DECK, seed)
    assert first == second
    assert sorted(map(str, first)) == sorted(map(str, DECK))
    assert first != fair_deal.shuffle(DECK, bytes(range(1, 33)))


@pytest.mark.parametrize("size", [0, 16, 31, 33, 64])
def test_seeds_must_be_32_bytes(size: int) -> None:
    with pytest.raises(fair_deal.SeedError):
        fair_deal.shuffle(DECK, bytes(size))
    with pytest.raises(fair_deal.SeedError):
        fair_deal.commitment(bytes(size))
    with pytest.raises(fair_deal.SeedError):
        fair_deal.draw_index(bytes(size), 3)


def test_below_refuses_an_empty_range() -> None:
    with pytest.raises(ValueError, match="positive"):
        fair_deal.SeededDraws(bytes(32)).below(0)
