"""Lead shapes (1 card; 3 with a pair; 5 with two pairs) and the sets that signals name.

A 3-card play is three ordinary cards with two of one rank (a triple counts). A
5-card play is five ordinary cards holding two pairs: two pairs and an odd card,
four of a kind and a fifth card, or a full house. Jokers only ever play singly.
Ranks are read from the card's deck index (`index % 10`), since ordinary cards
sit suit by suit, ten ranks each, in `DECK`.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from itertools import combinations

from kozyr.games.cards import Card
from kozyr.games.khozor_teams.beating import index_of
from kozyr.games.khozor_teams.model import SignalKind

ORDINARY_CARDS = 40
LEAD_SIZES = (1, 3, 5)
PAIRS_NEEDED = {3: 1, 5: 2}
SIGNAL_SIZE = {SignalKind.THREE_SET: 3, SignalKind.FIVE_SET: 5}


def has_joker(cards: Sequence[Card]) -> bool:
    return any(c.joker is not None for c in cards)


def pair_count(cards: Sequence[Card]) -> int:
    """How many disjoint pairs of equal rank the ordinary cards make (jokers ignored)."""
    counts = [0] * 10
    for c in cards:
        i = index_of(c)
        if i < ORDINARY_CARDS:
            counts[i % 10] += 1
    return sum(n // 2 for n in counts)


def is_set_play(cards: Sequence[Card]) -> bool:
    """A 3- or 5-card play of the right shape (no jokers, enough pairs)."""
    need = PAIRS_NEEDED.get(len(cards))
    return need is not None and not has_joker(cards) and pair_count(cards) >= need


def holds_set(hand: Sequence[Card], kind: SignalKind) -> bool:
    """Whether the hand contains a 3-set or 5-set, ignoring the hand-size timing limits."""
    return kind in sets_held(hand)


def sets_held(hand: Sequence[Card]) -> frozenset[SignalKind]:
    """The sets (3 and 5) the hand contains, from one count of its pairs: every seat's
    legal moves list its true signals at every version (`moves.legal_commands`).

    Enough ordinary cards for the play and enough pairs among them suffice: the
    odd card(s) can be any other ordinary card.
    """
    ordinary = [c for c in hand if c.joker is None]
    pairs = pair_count(ordinary)
    return frozenset(
        kind
        for kind, size in SIGNAL_SIZE.items()
        if len(ordinary) >= size and pairs >= PAIRS_NEEDED[size]
    )


def _pairs(ordinary: Sequence[Card]) -> list[tuple[Card, Card]]:
    by_rank: dict[int, list[Card]] = {}
    for c in ordinary:
        by_rank.setdefault(index_of(c) % 10, []).append(c)
    return [pair for group in by_rank.values() for pair in combinations(group, 2)]


def set_plays(hand: Sequence[Card], size: int, limit: int) -> list[tuple[Card, ...]]:
    """Up to `limit` distinct 3- or 5-card plays from the hand, in a stable order.

    Built from pairs rather than by filtering all combinations, so a big hand
    (after pickups) costs in proportion to what is found.
    """
    ordinary = sorted((c for c in hand if c.joker is None), key=index_of)
    found: list[tuple[Card, ...]] = []
    seen: set[frozenset[int]] = set()
    for core in _cores(ordinary, size):
        used = {index_of(c) for c in core}
        for extra in ordinary:
            ix = index_of(extra)
            if ix in used:
                continue
            key = frozenset((*used, ix))
            if key in seen:
                continue
            seen.add(key)
            found.append(tuple(sorted((*core, extra), key=index_of)))
            if len(found) >= limit:
                return found
    return found


def _cores(ordinary: Sequence[Card], size: int) -> Iterator[tuple[Card, ...]]:
    """The paired part of a set play: one pair (3 cards) or two disjoint pairs (5)."""
    pairs = _pairs(ordinary)
    if size == 3:
        yield from pairs
        return
    for first, second in combinations(pairs, 2):
        if all(a is not b for a in first for b in second):
            yield (*first, *second)
