"""How a card, and a rule error's params, read in each language of player texts.

The languages and the `Texts` type are `kozyr.texts`'s (one catalogue type for the
whole platform); here are the card-specific parts: cards in a text are named by
`card_name` (the language's rank letter and the suit symbol), never by their wire form.
Rule errors (`kozyr.games.errors`) fill their templates through `text_param`.
"""

from __future__ import annotations

from collections.abc import Mapping

from kozyr.games.cards import Card, JokerColor, Rank, is_card
from kozyr.texts import Lang, Texts

_COURT_LETTERS: Mapping[Rank, Texts] = {
    Rank.JACK: Texts(en="J", ro="V", it="F"),  # valet, fante
    Rank.QUEEN: Texts(en="Q", ro="D", it="D"),  # damă, donna
    Rank.KING: Texts(en="K", ro="R", it="R"),  # rege, re
}
"""Court-card letters per language; every other rank keeps its own figure or letter."""

_JOKER_NAME = Texts(en="{} joker", ro="joker {}", it="jolly {}")
_JOKER_COLOURS: Mapping[JokerColor, Texts] = {
    JokerColor.GRAY: Texts(en="gray", ro="gri", it="grigio"),
    JokerColor.BLACK: Texts(en="black", ro="negru", it="nero"),
    JokerColor.RED: Texts(en="red", ro="roșu", it="rosso"),
}
_OR = Texts(en="or", ro="sau", it="o")


def card_name(card: Card, lang: Lang) -> str:
    """A card as a player reads it in `lang`: localised rank letter and suit symbol.

    "Q♠" in English is "D♠" in Romanian and Italian, "J♥" is "V♥" and "F♥"; jokers
    are named by colour ("red joker", "joker roșu", "jolly rosso"). Every card in a
    player-facing text goes through here, never through `str(card)` ("QS").
    """
    if card.joker is not None:
        return _JOKER_NAME[lang].format(_JOKER_COLOURS[card.joker][lang])
    assert card.rank is not None
    assert card.suit is not None
    court = _COURT_LETTERS.get(card.rank)
    return (court[lang] if court else card.rank.value) + card.suit.symbol


def text_param(value: object, lang: Lang) -> object:
    """A RuleError param as it reads in `lang`: cards by `card_name`; a tuple of
    values as alternatives ("1, 3 or 5", "1, 3 sau 5"); anything else as it is."""
    if isinstance(value, Card) and is_card(value):  # not a look-alike
        return card_name(value, lang)
    if isinstance(value, tuple) and len(value) > 1:
        items = [str(text_param(v, lang)) for v in value]
        return f"{', '.join(items[:-1])} {_OR[lang]} {items[-1]}"
    if isinstance(value, tuple):
        return ", ".join(str(text_param(v, lang)) for v in value)
    return value
