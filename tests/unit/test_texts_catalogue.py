"""One catalogue type for every player-facing text (`kozyr.texts.Texts`) and one reader
of the caller's language (`parse_lang`).

A text cannot lack a language: `Texts` takes en, ro and it (mypy checks each call; an
empty one is refused at once). The scan below keeps it the only way: no dict literal
keyed by a language is left in libs/, services/ or tests/support, every `Texts(...)`
names its three languages, and a template's placeholders are the same in each of them
(a translation that drops `{seat}` would show the player a hole).
"""

from __future__ import annotations

import ast
import string
from collections.abc import Iterator
from pathlib import Path

import pytest

from kozyr.texts import LANGUAGES, Lang, Texts, in_language, parse_lang

ROOT = Path(__file__).resolve().parents[2]
SOURCES = ("libs", "services", "tests/support")


def source_trees() -> Iterator[tuple[str, ast.AST]]:
    for root in SOURCES:
        for path in sorted((ROOT / root).rglob("*.py")):
            if not path.name.endswith(("_pb2.py", "_pb2_grpc.py")):
                yield str(path.relative_to(ROOT)), ast.parse(path.read_text(), str(path))


def is_language_key(node: ast.expr | None) -> bool:
    if isinstance(node, ast.Constant):
        return node.value in {lang.value for lang in Lang}
    return (
        isinstance(node, ast.Attribute)
        and isinstance(node.value, ast.Name)
        and node.value.id == "Lang"
    )


def texts_calls() -> Iterator[tuple[str, ast.Call]]:
    for where, tree in source_trees():
        for node in ast.walk(tree):
            if isinstance(node, ast.Call) and getattr(node.func, "id", None) == "Texts":
                yield f"{where}:{node.lineno}", node


def test_no_dict_keyed_by_language_is_left() -> None:
    found = [
        f"{where}:{node.lineno}"
        for where, tree in source_trees()
        for node in ast.walk(tree)
        if isinstance(node, ast.Dict) and any(is_language_key(k) for k in node.keys)
    ]
    assert found == [], "write a player-facing text as kozyr.texts.Texts(en=, ro=, it=)"


def test_every_texts_names_its_three_languages() -> None:
    calls = list(texts_calls())
    assert len(calls) > 250, "the scan finds the catalogues"
    for where, call in calls:
        assert not call.args, f"{where}: name each language (en=, ro=, it=)"
        assert sorted(k.arg or "**" for k in call.keywords) == ["en", "it", "ro"], where


def placeholders(template: str) -> list[str]:
    return sorted(name for _, name, _, _ in string.Formatter().parse(template) if name is not None)


def test_a_template_has_the_same_placeholders_in_every_language() -> None:
    templates = 0
    for where, call in texts_calls():
        values = {k.arg: k.value for k in call.keywords}
        if all(isinstance(v, ast.Constant) and isinstance(v.value, str) for v in values.values()):
            templates += 1
            names = {lang: placeholders(v.value) for lang, v in values.items()}  # type: ignore[attr-defined]
            assert names["ro"] == names["en"] == names["it"], f"{where}: {names}"
    assert templates > 150


def test_a_text_missing_a_language_is_refused() -> None:
    with pytest.raises(ValueError, match="no RO version"):
        Texts(en="Seat {seat}.", ro=" ", it="Posto {seat}.")
    with pytest.raises(TypeError):
        Texts(en="Seat.", ro="Loc.")  # type: ignore[call-arg]


def test_a_text_reads_as_a_mapping_of_languages() -> None:
    text = Texts(en="Seat", ro="Loc", it="Posto")
    assert dict(text) == {Lang.EN: "Seat", Lang.RO: "Loc", Lang.IT: "Posto"}
    assert text["ro"] == in_language(text, Lang.RO) == "Loc"
    assert "fr" not in text
    assert tuple(text) == LANGUAGES
    assert text == {"en": "Seat", "ro": "Loc", "it": "Posto"}


@pytest.mark.parametrize(
    ("value", "lang"),
    [
        ("ro", Lang.RO),
        ("it-IT", Lang.IT),
        ("en_GB", Lang.EN),
        ("ro_RO.UTF-8", Lang.RO),  # a LANG
        ("fr-FR, it;q=0.8", Lang.IT),  # accept-language: the first supported one
        ("RO, it", Lang.RO),
        ("de", Lang.EN),
        ("C.UTF-8", Lang.EN),
        (None, Lang.EN),
        ("", Lang.EN),
    ],
)
def test_the_callers_language(value: str | None, lang: Lang) -> None:
    assert parse_lang(value) is lang
