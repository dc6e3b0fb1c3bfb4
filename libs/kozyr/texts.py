"""Player-facing texts: the languages, one text in each of them, and the caller's language.

Every text a player reads — a rule's refusal, a service's error, a label of `kozyr play`
or of the dispute viewer — is a `Texts`: its English, Romanian and Italian, all three
required by the constructor (mypy checks the call; an empty one is refused when the
module loads), so no language can be missing from any catalogue. A catalogue is a
mapping of keys (a reason, a label) to `Texts`; a service's error builder makes one from
f-strings. `parse_lang` is the one reader of a caller's language (the `accept-language`
metadata, `LANG`, a request's language).

This module imports nothing of kozyr: the games (pure rules) and every layer above them
use it (pyproject.toml, contract "texts-alone").
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from enum import StrEnum


class Lang(StrEnum):
    """Languages of player-facing texts; English is the fallback and the developer text."""

    EN = "en"
    RO = "ro"
    IT = "it"


LANGUAGES: tuple[Lang, ...] = tuple(Lang)
DEFAULT_LANGUAGE = Lang.EN


@dataclass(frozen=True, slots=True, eq=False)
class Texts(Mapping[Lang, str]):
    """One text in every language: `Texts(en=..., ro=..., it=...)`.

    A `Mapping[Lang, str]` (keys may be looked up as "ro" too), so it goes wherever a
    text per language is taken (`KozyrError`, `RuleError`); templates keep their
    `str.format` placeholders, filled by whoever shows them.
    """

    en: str
    ro: str
    it: str

    def __post_init__(self) -> None:
        for lang in Lang:
            if not self[lang].strip():
                raise ValueError(f"a player-facing text has no {lang.name} version: {self!r}")

    def __getitem__(self, lang: str) -> str:
        match lang:
            case Lang.EN:
                return self.en
            case Lang.RO:
                return self.ro
            case Lang.IT:
                return self.it
        raise KeyError(lang)

    def __iter__(self) -> Iterator[Lang]:
        return iter(LANGUAGES)

    def __len__(self) -> int:
        return len(LANGUAGES)

    def __repr__(self) -> str:
        return f"Texts(en={self.en!r}, ro={self.ro!r}, it={self.it!r})"


Catalogue = Mapping[str, Texts]
"""Texts by key (a reason code, a label name)."""


def in_language(texts: Texts, lang: Lang) -> str:
    """One text in `lang`."""
    return texts[lang]


def parse_lang(value: str | None) -> Lang:
    """A language tag or an `accept-language` list → the first supported `Lang`.

    "ro", "it-IT", "en_GB", "ro_RO.UTF-8" (a `LANG`) and "fr, it;q=0.8" (→ it) are
    understood; English when no entry names a supported language.
    """
    for part in (value or "").split(","):
        prefix = part.strip().lower()[:2]
        for lang in LANGUAGES:
            if lang.value == prefix:
                return lang
    return DEFAULT_LANGUAGE
