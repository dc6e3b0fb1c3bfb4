"""The languages of player-facing texts and how a value reads in each of them.

Every text a player reads exists in English, Romanian and Italian (`Texts`); cards in a
text are named by `card_name` (the language's rank letter and the suit symbol), never by
their wire form. Rule errors (`kozyr.games.errors`) fill their templates through here.
"""

from __future__ import annotations

from collections.abc import Mapping
from enum import StrEnum

from kozyr.games.cards import Card, JokerColor, Rank, is_card


class Lang(StrEnum):
    """Languages of player-facing texts (the languages of the rule texts)."""

    EN = "en"
    RO = "ro"
    IT = "it"


Texts = Mapping[Lang, str]
"""One message in every language; `str.format` placeholders filled from error params."""


def in_language(texts: Texts, lang: Lang) -> str:
    """One text in `lang`; English where a catalogue lacks it (English is never missing)."""
    return texts.get(lang) or texts[Lang.EN]


def parse_lang(value: str | None) -> Lang:
    """A language tag like "ro", "it-IT" or "en_GB" → Lang; English when unknown."""
    if value:
        prefix = value.strip().lower()[:2]
        for lang in Lang:
            if lang.value == prefix:
                return lang
    return Lang.EN


_RANK_LETTERS: Mapping[Lang, Mapping[Rank, str]] = {
    Lang.EN: {},
    Lang.RO: {Rank.JACK: "V", Rank.QUEEN: "D", Rank.KING: "R"},  # valet, damă, rege
    Lang.IT: {Rank.JACK: "F", Rank.QUEEN: "D", Rank.KING: "R"},  # fante, donna, re
}
"""Court-card letters per language; every other rank keeps its own figure or letter."""

_JOKER_NAMES: Mapping[Lang, str] = {Lang.EN: "{} joker", Lang.RO: "joker {}", Lang.IT: "jolly {}"}
_JOKER_COLOURS: Mapping[Lang, Mapping[JokerColor, str]] = {
    Lang.EN: {JokerColor.GRAY: "gray", JokerColor.BLACK: "black", JokerColor.RED: "red"},
    Lang.RO: {JokerColor.GRAY: "gri", JokerColor.BLACK: "negru", JokerColor.RED: "roșu"},
    Lang.IT: {JokerColor.GRAY: "grigio", JokerColor.BLACK: "nero", JokerColor.RED: "rosso"},
}
_OR: Mapping[Lang, str] = {Lang.EN: "or", Lang.RO: "sau", Lang.IT: "o"}


def card_name(card: Card, lang: Lang) -> str:
    """A card as a player reads it in `lang`: localised rank letter and suit symbol.

    "Q♠" in English is "D♠" in Romanian and Italian, "J♥" is "V♥" and "F♥"; jokers
    are named by colour ("red joker", "joker roșu", "jolly rosso"). Every card in a
    player-facing text goes through here, never through `str(card)` ("QS").
    """
    if card.joker is not None:
        return _JOKER_NAMES[lang].format(_JOKER_COLOURS[lang][card.joker])
    assert card.rank is not None
    assert card.suit is not None
    return _RANK_LETTERS[lang].get(card.rank, card.rank.value) + card.suit.symbol


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
