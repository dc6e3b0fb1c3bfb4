"""Player texts read as the language they are written in (issue 9, item 7).

Every reason of every rule catalogue, filled with the kinds of params the engines
really pass (cards, suit symbols, seats, counts, lists of alternatives), and every
Romanian or Italian text literal in libs/ and services/ (the table service's and the
runtime's errors) holds no English connecting word; cards read with the language's rank
letters and suit symbols; Italian never calls a random seed "seme" (a suit).
"""

from __future__ import annotations

import ast
import itertools
import random
import re
import string
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import Any

import pytest

from kozyr.games import khozor_teams, three_five_eight
from kozyr.games.cards import Card, JokerColor, Rank, Suit, card, joker, parse_card
from kozyr.games.errors import COMMON_TEXTS, RuleError
from kozyr.games.khozor_teams.scenarios import cards, fill_hands, position
from kozyr.games.khozor_teams.texts import ERRORS as KHOZOR_ERRORS
from kozyr.games.three_five_eight.texts import ERRORS as THREE_FIVE_EIGHT_ERRORS
from kozyr.games.translations import card_name
from kozyr.runtime.auth import Role, role_not_allowed
from kozyr.texts import Lang, Texts

ROOT = Path(__file__).resolve().parents[3]
OTHER_LANGUAGES = (Lang.RO, Lang.IT)

ENGLISH_WORDS = frozenset([
    "or", "and", "the", "of", "with", "must", "card", "cards", "to", "for", "from", "by",
    "on", "at", "is", "not", "you", "your", "this", "that", "none", "play", "trump", "seat",
    "table", "turn", "only", "has", "have", "may", "can", "again", "please", "try", "an",
    "be", "it", "than", "more", "one",
])  # fmt: skip
"""English words that have no business in a Romanian or Italian sentence. Words that
are also Romanian or Italian ("a", "in", "are", "se", "do") are left out."""

CATALOGUES: Mapping[str, Mapping[str, Texts]] = {
    "common": COMMON_TEXTS,
    "three_five_eight": THREE_FIVE_EIGHT_ERRORS,
    "khozor_teams": KHOZOR_ERRORS,
}

CARDS = tuple(parse_card(t) for t in ("QS", "JH", "KD", "AC", "10H", "7C", "JK-red", "JK-gray"))
PARAMS: Mapping[str, tuple[object, ...]] = {
    "card": CARDS,  # a Card, as both engines pass it
    "suit": ("♠", "♦"),  # 3-5-8 passes `Suit.symbol`
    "trump": ("♥",),
    "seat": (0, 2),
    "opener": (1,),
    "expected": ((1, 3, 5), 3),  # khozor: the allowed lead sizes, or the count to match
}
"""Representative values of each placeholder, of the types the rules pass."""


def words(text: str) -> set[str]:
    # table_id and a field path (table.computer_level) stay one word
    return set(re.findall(r"[^\W\d]+(?:\.[^\W\d]+)*", text.lower()))


def placeholders(template: str) -> set[str]:
    return {name for _, name, _, _ in string.Formatter().parse(template) if name}


def filled(texts: Texts) -> Iterator[dict[str, object]]:
    """Every combination of representative params for the placeholders of `texts`."""
    names = sorted(set().union(*(placeholders(t) for t in texts.values())))
    missing = [n for n in names if n not in PARAMS]
    assert not missing, f"give PARAMS a representative value for {missing}"
    for values in itertools.product(*(PARAMS[n] for n in names)):
        yield dict(zip(names, values, strict=True))


def all_reasons() -> Iterator[tuple[str, str, Texts]]:
    for catalogue, reasons in CATALOGUES.items():
        for reason, texts in reasons.items():
            yield catalogue, reason, texts


@pytest.mark.parametrize(("catalogue", "reason", "texts"), list(all_reasons()))
def test_every_reason_reads_without_english_words_in_romanian_and_italian(
    catalogue: str, reason: str, texts: Texts
) -> None:
    assert set(texts) == set(Lang), f"{catalogue}.{reason} lacks a language"
    for params in filled(texts):
        error = RuleError(reason, texts, **params)
        for lang in OTHER_LANGUAGES:
            message = error.message(lang)
            english = words(message) & ENGLISH_WORDS
            assert not english, f"{catalogue}.{reason} in {lang}: {message!r} has {english}"
            for value in params.values():
                if isinstance(value, Card) and "{card}" in texts[lang]:
                    assert card_name(value, lang) in message
                    assert str(value) not in message, "a card in its wire form (QS)"


def test_italian_never_calls_a_seed_seme() -> None:
    for catalogue, reason, texts in all_reasons():
        if "SEED" in reason:
            assert "seme" not in words(texts[Lang.IT]), f"{catalogue}.{reason}"


@pytest.mark.parametrize(
    ("text", "en", "ro", "it"),
    [
        ("QS", "Q♠", "D♠", "D♠"),
        ("JH", "J♥", "V♥", "F♥"),
        ("KD", "K♦", "R♦", "R♦"),
        ("AC", "A♣", "A♣", "A♣"),
        ("10H", "10♥", "10♥", "10♥"),
        ("2S", "2♠", "2♠", "2♠"),
        ("JK-red", "red joker", "joker roșu", "jolly rosso"),
        ("JK-gray", "gray joker", "joker gri", "jolly grigio"),
    ],
)
def test_a_card_reads_with_the_languages_rank_letter_and_suit_symbol(
    text: str, en: str, ro: str, it: str
) -> None:
    assert [card_name(parse_card(text), lang) for lang in Lang] == [en, ro, it]


def test_every_card_has_its_own_name_in_every_language() -> None:
    deck = [card(r, s) for r in Rank for s in Suit] + [joker(j) for j in JokerColor]
    for lang in Lang:
        assert len({card_name(c, lang) for c in deck}) == len(deck)


# ------------------------------------------------ refusals as the engines make them


def refusal(decide: Callable[[Any, Any], object], state: object, command: object) -> RuleError:
    with pytest.raises(RuleError) as refused:
        decide(state, command)
    return refused.value


def test_a_khozor_lead_of_the_wrong_size_lists_the_sizes_in_the_language() -> None:
    state = position(fill_hands({0: "7H 7S 9D 9C AS"}), "", opener=0)
    error = refusal(khozor_teams.decide, state, khozor_teams.Lead(0, cards("7H 7S")))
    assert error.reason == "WRONG_CARD_COUNT"
    assert "1, 3 or 5" in error.message(Lang.EN)
    assert "1, 3 sau 5" in error.message(Lang.RO)
    assert "1, 3 o 5" in error.message(Lang.IT)


def test_a_khozor_card_not_held_is_named_in_the_language() -> None:
    state = position(fill_hands({0: "7H 7S 9D 9C AS"}), "", opener=0)
    error = refusal(khozor_teams.decide, state, khozor_teams.Lead(0, cards("QH")))
    assert error.reason == "CARD_NOT_IN_HAND"
    assert [error.message(lang) for lang in Lang] == [
        "You do not hold Q♥.",
        "Nu ai cartea D♥.",
        "Non hai la carta D♥.",
    ]


def test_a_three_five_eight_card_not_held_is_named_in_the_language() -> None:
    game, rng = three_five_eight, random.Random(3)
    state = game.initial_state({})
    while game.turn(state).kind != "play":
        turn = game.turn(state)
        if turn.is_chance:
            command = game.chance_command(state, rng.randbytes(32))
        else:
            command = game.default_command(state, turn.seats[0])
        for event in game.decide(state, command):
            state = game.evolve(state, event)
    seat = game.turn(state).seats[0]
    held = set(game.view(state, seat)["hand"])
    missing = next(c for c in game.DECK if str(c) not in held and c.rank == Rank.JACK)
    error = refusal(game.decide, state, game.PlayCard(seat, missing))
    assert error.reason == "CARD_NOT_IN_HAND"
    assert card_name(missing, Lang.RO) in error.message(Lang.RO)
    assert card_name(missing, Lang.RO).startswith("V")
    assert card_name(missing, Lang.IT) in error.message(Lang.IT)


# ---------------------------------------- every other Romanian and Italian literal


def literal_texts(node: ast.expr) -> str | None:
    """The text of a string literal; an f-string's holes become blanks."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    if isinstance(node, ast.JoinedStr):
        return "".join(literal_texts(v) or " " for v in node.values)
    return None


def source_texts(lang: Lang) -> Iterator[tuple[str, str]]:
    """Every `lang` text of a `Texts(en=..., ro=..., it=...)` in libs/ and services/."""
    for path in sorted([*(ROOT / "libs").rglob("*.py"), *(ROOT / "services").rglob("*.py")]):
        if path.name.endswith(("_pb2.py", "_pb2_grpc.py")):
            continue
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.Call) and getattr(node.func, "id", None) == "Texts":
                for keyword in node.keywords:
                    text = literal_texts(keyword.value)
                    if text is not None and keyword.arg == lang.value:
                        yield f"{path.relative_to(ROOT)}:{keyword.value.lineno}", text


@pytest.mark.parametrize("lang", OTHER_LANGUAGES)
def test_no_romanian_or_italian_text_in_the_code_holds_english_words(lang: Lang) -> None:
    found = [(where, re.sub(r"{\w*}", " ", text)) for where, text in source_texts(lang)]
    assert len(found) > 50, "the scan finds the catalogues"
    bad = {where: sorted(words(text) & ENGLISH_WORDS) for where, text in found}
    assert {where: w for where, w in bad.items() if w} == {}
    if lang is Lang.IT:
        assert not [w for w, t in found if "seed" in t.lower() and "seme" in words(t)]


@pytest.mark.parametrize("allowed", [(), (Role.ADMIN, Role.SERVICE)])
def test_the_roles_allowed_read_in_the_language(allowed: tuple[Role, ...]) -> None:
    error = role_not_allowed(Role.PLAYER, allowed)
    for lang in OTHER_LANGUAGES:
        assert not words(error.message_in(lang.value)) & ENGLISH_WORDS
