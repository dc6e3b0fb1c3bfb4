"""The card model shared by every game: suits, ranks, jokers, parsing and printing.

Cards are small immutable values, interned so that equal cards are the same object
(cheap hashing and comparison in the hot paths of the rules). A card's *strength* is
not a property of the card: each game defines its own rank order (see `RankOrder`).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from enum import StrEnum


class Suit(StrEnum):
    """The four suits, declared lowest first: ♣ ♦ ♥ ♠ breaks ties (RULES.md)."""

    CLUBS = "C"
    DIAMONDS = "D"
    HEARTS = "H"
    SPADES = "S"

    @property
    def order(self) -> int:
        """Position in the tie-breaking order, 0 = lowest (clubs)."""
        return _SUIT_ORDER[self]

    @property
    def symbol(self) -> str:
        return _SUIT_SYMBOL[self]


_SUIT_ORDER = {suit: i for i, suit in enumerate(Suit)}
_SUIT_SYMBOL = {Suit.CLUBS: "♣", Suit.DIAMONDS: "♦", Suit.HEARTS: "♥", Suit.SPADES: "♠"}


class Rank(StrEnum):
    """Ordinary ranks. Their strength order is per game, never implied by this enum."""

    TWO = "2"
    THREE = "3"
    FOUR = "4"
    FIVE = "5"
    SIX = "6"
    SEVEN = "7"
    EIGHT = "8"
    NINE = "9"
    TEN = "10"
    JACK = "J"
    QUEEN = "Q"
    KING = "K"
    ACE = "A"


class JokerColor(StrEnum):
    """Joker colours, declared weakest first (gray < black < red)."""

    GRAY = "gray"
    BLACK = "black"
    RED = "red"


@dataclass(frozen=True, slots=True)
class Card:
    """One card: an ordinary card (rank and suit) or a joker (colour only).

    Build cards with `card()`, `joker()` or `parse_card()`; they return interned
    instances. Text form: "AS", "10H", "JK-red".
    """

    rank: Rank | None
    suit: Suit | None
    joker: JokerColor | None = None

    @property
    def is_joker(self) -> bool:
        return self.joker is not None

    def __str__(self) -> str:
        interned = _TEXTS.get(id(self))
        if interned is not None:
            return interned
        if self.joker is not None:
            return f"JK-{self.joker.value}"
        assert self.rank is not None
        assert self.suit is not None
        return f"{self.rank.value}{self.suit.value}"

    def __repr__(self) -> str:
        if is_card(self):
            return f"Card({self})"
        # a look-alike built by hand (a test's malformed command): repr never raises
        return f"Card(rank={self.rank!r}, suit={self.suit!r}, joker={self.joker!r})"


_INTERNED: dict[str, Card] = {}
_TEXTS: dict[int, str] = {}
"""Each interned card's text by its `id`: `str` is on every hot path (views, events,
fingerprints), and building it reads two enum values (a Python-level property each).
An interned card lives as long as the process, so no other card can take its id."""


def _intern(c: Card) -> Card:
    text = str(c)
    found = _INTERNED.setdefault(text, c)
    _TEXTS.setdefault(id(found), text)
    return found


def card(rank: Rank, suit: Suit) -> Card:
    """The interned ordinary card of this rank and suit."""
    return _intern(Card(rank, suit))


def joker(color: JokerColor) -> Card:
    """The interned joker of this colour."""
    return _intern(Card(None, None, color))


class CardParseError(ValueError):
    """A card text that names no card."""


def parse_card(text: str) -> Card:
    """Parse "AS", "10H", "jk-red" (case-insensitive) into the interned card."""
    found = _INTERNED.get(text) or _INTERNED.get(_normalise(text))
    if found is None:
        raise CardParseError(f"not a card: {text!r}")
    return found


def is_card(value: object) -> bool:
    """Whether `value` is one of the 55 cards (not a look-alike with other field values).

    Interned cards are recognised by identity (commands are checked at every move); a
    `Card` built by hand counts when its fields name a real card.
    """
    if id(value) in _INTERNED_IDS:
        return True
    return (
        isinstance(value, Card)
        and type(value.rank) in (Rank, type(None))
        and type(value.suit) in (Suit, type(None))
        and type(value.joker) in (JokerColor, type(None))
        and value in _ALL_CARDS
    )


def _normalise(text: str) -> str:
    t = text.strip()
    if t.upper().startswith("JK-"):
        return "JK-" + t[3:].lower()
    return t.upper()


def parse_cards(texts: Iterable[str]) -> tuple[Card, ...]:
    return tuple(parse_card(t) for t in texts)


def format_cards(cards: Iterable[Card]) -> list[str]:
    return [str(c) for c in cards]


@dataclass(frozen=True, slots=True)
class RankOrder:
    """A game's strength order of ranks, weakest first (jokers are ranked separately)."""

    ranks: tuple[Rank, ...]

    def strength(self, rank: Rank) -> int:
        return self.ranks.index(rank)

    def deck(self, jokers: Sequence[JokerColor] = ()) -> tuple[Card, ...]:
        """The canonical, unshuffled deck: suits ♣ ♦ ♥ ♠, ranks weakest first, then jokers.

        This order is the input of the fair-deal shuffle (docs/fair-deal.md).
        """
        ordinary = tuple(card(r, s) for s in Suit for r in self.ranks)
        return ordinary + tuple(joker(j) for j in jokers)


# Pre-intern every card so parse_card() knows them all.
for _s in Suit:
    for _r in Rank:
        card(_r, _s)
for _j in JokerColor:
    joker(_j)
_ALL_CARDS = frozenset(_INTERNED.values())
_INTERNED_IDS = frozenset(id(c) for c in _ALL_CARDS)
"""Ids of the interned cards, which live as long as the process (ids never reused)."""
