"""Card strength in 3-5-8: A high … 2 low; suits break ties ♣ < ♦ < ♥ < ♠.

Lookups go through the rank and suit enums (whose hashes are cached str hashes), not
through `Card` hashing: these helpers sit in the hot path of every trick.
"""

from __future__ import annotations

from collections.abc import Iterable

from kozyr.games.cards import Card, Suit
from kozyr.games.three_five_eight.model import RANKS

_STRENGTH = {rank: i for i, rank in enumerate(RANKS.ranks)}


def strength(c: Card) -> int:
    """Rank strength, 0 = a two, 12 = an ace."""
    assert c.rank is not None
    return _STRENGTH[c.rank]


def low_key(c: Card) -> tuple[int, int]:
    """Sort key "lowest first": by rank, then by suit order (the timeouts' tie-break)."""
    assert c.rank is not None
    assert c.suit is not None
    return (_STRENGTH[c.rank], c.suit.order)


def display_key(c: Card) -> tuple[int, int]:
    """Sort key for showing a hand: by suit ♣ ♦ ♥ ♠, then rank 2 … A."""
    assert c.rank is not None
    assert c.suit is not None
    return (c.suit.order, _STRENGTH[c.rank])


def highest_of_suit(cards: Iterable[Card], suit: Suit) -> Card | None:
    """The strongest card of `suit` among `cards`, or None if there is none."""
    best: Card | None = None
    for c in cards:
        if c.suit is suit and (best is None or strength(c) > strength(best)):
            best = c
    return best


def trick_winner_offset(cards: tuple[Card, ...], trump: Suit | None) -> int:
    """Index in `cards` (play order) of the winning card.

    The highest trump wins; with no trump in the trick, the highest card of the
    suit led. A card of another suit never wins.
    """
    best = 0
    best_card = cards[0]
    for i in range(1, len(cards)):
        c = cards[i]
        if c.suit is best_card.suit:
            if strength(c) > strength(best_card):
                best, best_card = i, c
        elif c.suit is trump and trump is not None:
            best, best_card = i, c
    return best
