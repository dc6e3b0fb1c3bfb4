"""Card strength and the beating relation, and how a defence is matched to a play.

Card x beats card y when x is a joker and y is not, or a higher joker; or when both
are ordinary and either share a suit with x ranking higher, or x is a trump and y is
not (RULES.md "Beating"). A defence of k cards is legal when its cards can be assigned
one-to-one to the k cards of the previous play, each beating its own target: a
bipartite perfect matching, decided with augmenting paths (`assign_beats`).

Hot paths work on a card's index in `DECK` (looked up by identity, since cards are
interned) and on precomputed per-trump bit tables, because hashing enum-based cards is
the dominant cost of random play otherwise.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from kozyr.games.cards import Card, Suit
from kozyr.games.khozor_teams.model import DECK, JOKERS, RANK_ORDER, TRUMP_CYCLE

_INDEX_BY_ID = {id(c): i for i, c in enumerate(DECK)}
_INDEX_BY_VALUE = {c: i for i, c in enumerate(DECK)}
_TRUMP_POS = {suit: i for i, suit in enumerate(TRUMP_CYCLE)}


def index_of(card: Card) -> int:
    """Position of a card in the canonical deck; KeyError for a card not in Khözör."""
    try:
        return _INDEX_BY_ID[id(card)]
    except KeyError:  # an equal card built without interning
        return _INDEX_BY_VALUE[card]


def is_khozor_card(card: Card) -> bool:
    return id(card) in _INDEX_BY_ID or card in _INDEX_BY_VALUE


def _power(card: Card, trump: Suit) -> int:
    """Timeout strength: non-trumps by rank (0-9) < trumps by rank (10-19) < jokers (20-22)."""
    if card.joker is not None:
        return 20 + JOKERS.index(card.joker)
    assert card.rank is not None
    strength = RANK_ORDER.strength(card.rank)
    return strength + 10 if card.suit is trump else strength


def _beats_slow(x: Card, y: Card, trump: Suit) -> bool:
    """The rule as written; only used to build the tables below."""
    if x.joker is not None:
        return y.joker is None or JOKERS.index(x.joker) > JOKERS.index(y.joker)
    if y.joker is not None:
        return False
    assert x.rank is not None
    assert y.rank is not None
    if x.suit is y.suit:
        return RANK_ORDER.strength(x.rank) > RANK_ORDER.strength(y.rank)
    return x.suit is trump


def _suit_order(card: Card) -> int:
    return card.suit.order if card.suit is not None else 0


# Per trump (by TRUMP_CYCLE position) and per card index:
_POWER = tuple(tuple(_power(c, t) for c in DECK) for t in TRUMP_CYCLE)
_ORDER_KEY = tuple(tuple(_power(c, t) * 4 + _suit_order(c) for c in DECK) for t in TRUMP_CYCLE)
"""A total order, weakest first: power, then suit ♣ ♦ ♥ ♠ to break ties."""
_BEATEN_BITS = tuple(
    tuple(sum(1 << j for j, y in enumerate(DECK) if _beats_slow(x, y, t)) for x in DECK)
    for t in TRUMP_CYCLE
)
"""_BEATEN_BITS[trump][i] has bit j set when DECK[i] beats DECK[j]."""


def beats(x: Card, y: Card, trump: Suit) -> bool:
    """Whether card x beats card y with this trump suit."""
    return bool(_BEATEN_BITS[_TRUMP_POS[trump]][index_of(x)] >> index_of(y) & 1)


def power(card: Card, trump: Suit) -> int:
    """Strength for the timeout rule: non-trumps < trumps < jokers (0-22)."""
    return _POWER[_TRUMP_POS[trump]][index_of(card)]


def order_key(trump: Suit) -> tuple[int, ...]:
    """Per card index, a sort key weakest first (power, then suit order)."""
    return _ORDER_KEY[_TRUMP_POS[trump]]


def weakest_first(cards: Iterable[Card], trump: Suit) -> list[Card]:
    key = _ORDER_KEY[_TRUMP_POS[trump]]
    return sorted(cards, key=lambda c: key[index_of(c)])


def _target_masks(cards: Sequence[Card], attack: Sequence[Card], trump: Suit) -> list[int]:
    """For each card, the bit set of attack positions it beats."""
    beaten = _BEATEN_BITS[_TRUMP_POS[trump]]
    attack_ix = [index_of(a) for a in attack]
    masks = []
    for c in cards:
        bits = beaten[index_of(c)]
        masks.append(sum(1 << j for j, a in enumerate(attack_ix) if bits >> a & 1))
    return masks


def assign_beats(
    defence: Sequence[Card], attack: Sequence[Card], trump: Suit
) -> tuple[int, ...] | None:
    """A one-to-one assignment: result[i] is the attack position defence[i] beats.

    None when no perfect matching exists (or the sizes differ). Kuhn's algorithm:
    place each defence card on a target it beats; when every such target is taken,
    try to move the card holding it elsewhere (an augmenting path). Placing cards
    greedily is not enough: with ♠ trump, 7♠ 8♣ beat 7♣ 8♦ only as 7♠→8♦ and 8♣→7♣;
    putting 7♠ on 7♣ first would strand 8♣.
    """
    size = len(attack)
    if len(defence) != size:
        return None
    masks = _target_masks(defence, attack, trump)
    holder: list[int] = [-1] * size

    def place(i: int, seen: int) -> tuple[bool, int]:
        for j in range(size):
            if not masks[i] >> j & 1 or seen >> j & 1:
                continue
            seen |= 1 << j
            if holder[j] < 0:
                holder[j] = i
                return True, seen
            moved, seen = place(holder[j], seen)
            if moved:
                holder[j] = i
                return True, seen
        return False, seen

    for i in range(size):
        placed, _ = place(i, 0)
        if not placed:
            return None
    result = [0] * size
    for j, i in enumerate(holder):
        result[i] = j
    return tuple(result)


# Subset bit tricks for `beating_sets`: a set S of attack positions (k <= 5) is the
# integer r = sum(1 << t for t in S); a family of such sets is a 32-bit integer with
# bit r set for each member.
_HAS = tuple(sum(1 << r for r in range(32) if r >> t & 1) for t in range(5))
_LACKS = tuple(((1 << 32) - 1) ^ has for has in _HAS)


def _bits(mask: int) -> list[int]:
    return [t for t in range(5) if mask >> t & 1]


def beating_sets(
    hand: Sequence[Card], attack: Sequence[Card], trump: Suit, limit: int
) -> list[tuple[Card, ...]]:
    """Up to `limit` distinct legal defences against `attack` from `hand`, weakest first.

    The first one is the defence of least total strength (the timeout's default
    beat): the sets of hand cards that can be matched into the attack form a
    transversal matroid, so taking cards weakest first whenever the choice can
    still be completed — exactly what an include-first search over sorted cards
    does — yields a minimum-weight basis.

    Search with pruning, so that every visited node leads to an answer: `good[i]`
    is the family of target sets from which all targets can still be covered with
    cards i.. (each used at most once); a partial choice covering the family
    `reach` (every chosen card used) can be completed iff reach & good[i] != 0.
    """
    size = len(attack)
    pool = [c for c in hand if size == 1 or c.joker is None]
    masks_by_card = _target_masks(pool, attack, trump)
    key = order_key(trump)
    ranked = sorted(
        ((m, c) for m, c in zip(masks_by_card, pool, strict=True) if m),
        key=lambda mc: key[index_of(mc[1])],
    )
    cards = [c for _, c in ranked]
    masks = [m for m, _ in ranked]
    full = (1 << size) - 1
    good = [0] * (len(cards) + 1)
    good[-1] = 1 << full
    for i in range(len(cards) - 1, -1, -1):
        after = good[i + 1]
        acc = after
        for t in _bits(masks[i]):
            acc |= (after & _HAS[t]) >> (1 << t)
        good[i] = acc
    found: list[tuple[Card, ...]] = []
    if limit <= 0 or not good[0] & 1:
        return found

    def search(i: int, reach: int, chosen: tuple[Card, ...]) -> None:
        if len(chosen) == size:
            found.append(chosen)
            return
        taken = 0
        for t in _bits(masks[i]):
            taken |= (reach & _LACKS[t]) << (1 << t)
        if taken & good[i + 1]:
            search(i + 1, taken, (*chosen, cards[i]))
        if len(found) < limit and reach & good[i + 1]:
            search(i + 1, reach, chosen)

    search(0, 1, ())
    return found
