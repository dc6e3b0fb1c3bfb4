"""Every player-facing refusal of the services names its own subject, in each language.

Each public builder of a service's texts module (and the shared client texts) is called
with sample arguments; each of its texts (en, ro, it) must hold the words of its reason
below, and none of the words that belong to another field (`AVOID`). A swapped text —
the page-size refusal speaking of tokens — fails here.

To add a reason: add one line to `KEYWORDS` (and a builder needing special arguments to
`CALLS`). A builder whose reason has no line fails `test_every_reason_has_keywords`.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Iterator
from datetime import UTC, datetime
from types import ModuleType
from typing import Any, get_type_hints

import pytest

from kozyr.bots import texts as bots_texts
from kozyr.client import texts as client_texts
from kozyr.clock import texts as clock_texts
from kozyr.matchmaking import texts as matchmaking_texts
from kozyr.runtime.errors import KozyrError
from kozyr.table import texts as table_texts
from kozyr.tablewire import refusals as table_refusals
from kozyr.texts import LANGUAGES

MODULES: tuple[ModuleType, ...] = (
    bots_texts,
    clock_texts,
    matchmaking_texts,
    table_texts,
    client_texts,
    table_refusals,
)


Words = dict[str, tuple[str, ...]]


def _w(en: str, ro: str, it: str) -> Words:
    """One word (or "a|b" alternatives) per language."""
    return {"en": (en,), "ro": (ro,), "it": (it,)}


_TABLE = _w("table", "mas|mes", "tavol")
_SEAT = _w("seat", "loc", "post")
_TICKET = _w("ticket", "tichet", "bigliett")
_PARTY = _w("party", "grup", "grupp")
_QUEUE = _w("queue", "coad", "coda")


def _same(*words: str) -> Words:
    """Words every language uses as they are (field names, variables)."""
    return dict.fromkeys(LANGUAGES, words)


def _both(*parts: Words) -> Words:
    return {lang: tuple(w for part in parts for w in part[lang]) for lang in LANGUAGES}


KEYWORDS: dict[str, Words] = {
    # reason: words each language's text must hold (lowercase; "a|b": either)
    "INVALID_REQUEST_ID": _same("request_id"),
    "INVALID_GAME": _same("game_three_five_eight", "game_khozor_teams"),
    "OPTIONS_GAME_MISMATCH": _w("option", "opțiun", "opzion"),
    "INVALID_TURN_SECONDS": _same("turn_seconds"),
    "INVALID_GAME_OPTION": _same("must_be_big"),
    "INVALID_COVER_AFTER": _same("cover_after_seconds"),
    "INVALID_TICKET_ID": _same("ticket_id"),
    "INVALID_PARTY_ID": _same("party_id"),
    "INVALID_CODE": _same("code"),
    "INVALID_PLAYER_ID": _w(
        "player_id|player id", "player_id|id-ul de jucător", "player_id|id giocatore"
    ),
    "INVALID_PAGE_SIZE": _same("page_size"),
    "INVALID_PAGE_TOKEN": _same("page_token", "next_page_token"),
    "PLAYER_ID_REQUIRED": _same("player_id"),
    "INVALID_COMPUTER_LEVEL": _same("computer_level"),
    "ALREADY_QUEUED": _QUEUE,
    "ALREADY_SEATED": _TABLE,
    "ALREADY_PLACING": _TABLE,
    "TICKET_NOT_FOUND": _TICKET,
    "NOT_YOUR_TICKET": _TICKET,
    "TICKET_PLACING": _TICKET,
    "TICKET_OVER": _TICKET,
    "ALREADY_IN_PARTY": _PARTY,
    "ALREADY_IN_THIS_PARTY": _PARTY,
    "NOT_YOUR_PLAYER": _both(_same("player_id"), _TABLE),
    "PARTY_NOT_FOUND": _PARTY,
    "NOT_IN_PARTY": _PARTY,
    "NOT_PARTY_LEADER": _both(_PARTY, _w("leader", "lider", "capo")),
    "PARTY_FULL": _PARTY,
    "PARTY_TOO_BIG": _PARTY,
    "PARTY_IN_QUEUE": _both(_PARTY, _QUEUE),
    "TABLE_NOT_FULL": _both(_same("fill_with_computers"), _SEAT),
    "LOBBY_BUSY": _QUEUE,
    "ABANDON_COOLDOWN": _both(_QUEUE, _w("left", "părăsit", "lasciato")),
    "INVALID_LIFT_REASON": _both(_same("reason"), _w("penalty", "penaliz", "penalit")),
    "TABLE_OPENING": _both(_same("request_id"), _TABLE),
    "TABLE_NOT_FOUND": _TABLE,
    "STALE_VERSION": _w("version", "versiun", "version"),
    "TOO_MUCH_CONTENTION": _TABLE,
    "TOO_MANY_SIGNALS": _w("signals", "semnale", "segnali"),
    "DEAL_ALREADY_STARTED": _both(_w("deal", "mâna", "mano"), _w("seed", "sămânț", "seme")),
    "DEAL_NOT_OPEN": _both(_w("deal", "mâna", "mano"), _w("seed", "sămânț", "seme")),
    "INVALID_CLIENT_SEED": _both(_w("seed", "sămânț", "seme"), _same("64", "ASCII")),
    "REQUEST_ID_REUSED": _same("request_id"),
    "INVALID_SEAT": _SEAT,
    "COMPUTER_SEAT": _both(_SEAT, _w("computer", "calculator", "computer")),
    "NOT_SEATED": _SEAT,
    "NOT_YOUR_SEAT": _SEAT,
    "SEAT_NOT_COMPUTER": _both(_SEAT, _w("person", "persoan", "persona")),
    "SEAT_REQUIRED": _SEAT,
    "TABLE_FINISHED": _TABLE,
    "NOT_YOUR_TURN": _w("turn", "rândul", "turno"),
    "HINTS_NOT_ALLOWED": _w("hints", "sugestii", "suggeriment"),
    "OPEN_HAND_OFF": _both(_w("hand", "mân", "man"), _w("spectator", "spectator", "spettator")),
    "OPEN_HAND_SEATED": _both(
        _w("play", "joci", "giochi"), _w("spectator", "spectator", "spettator")
    ),
    "OPEN_HAND_WITH_SEAT": _both(_SEAT, _w("spectator", "spectator", "spettator")),
    "TOO_MANY_HINTS": _w("hints", "sugestii", "suggeriment"),
    "INVALID_TABLE_ID": _same("table_id"),
    "INVALID_PLAYER_IDS": _w("player ids", "id-uri de jucători", "id di giocatori"),
    "VOICE_NOT_CONFIGURED": _both(_same("kozyr_livekit_url"), _w("voice", "voc", "voce")),
    "TABLE_SERVICE_UNAVAILABLE": _TABLE,
}

AVOID: Words = {
    # reason: words no language's text may hold (another field's subject)
    "INVALID_PAGE_SIZE": ("token", "jeton"),
    "INVALID_PAGE_TOKEN": ("page_size",),
}

CALLS: dict[str, list[tuple[Any, ...]]] = {
    # builder: its argument lists, when the sample ones would not do
    "invalid_id": [("ticket_id",), ("party_id",), ("code",)],
    "abandon_cooldown": [("x-1", datetime(2030, 5, 6, 7, 8, 9, tzinfo=UTC))],
    "invalid_option": [("turn_seconds", 7, 10, 3600), ("must_be_big", 7, 10, 20)],
    "invalid_game": [(["three_five_eight", "khozor_teams"],)],
}


def _sample(parameter: inspect.Parameter) -> Any:
    """A value of the parameter's type that no keyword could come from by accident."""
    annotation = str(parameter.annotation)
    if "int" in annotation:
        return 7
    if "float" in annotation:
        return 1.5
    return "x-1"


def _errors() -> Iterator[tuple[str, KozyrError]]:
    for module in MODULES:
        for name, builder in inspect.getmembers(module, inspect.isfunction):
            if name.startswith("_") or builder.__module__ != module.__name__:
                continue
            if not _builds_an_error(builder):  # a check beside its builders (table_id)
                continue
            for args in CALLS.get(name) or [_arguments(builder)]:
                error = builder(*args)
                assert isinstance(error, KozyrError), f"{module.__name__}.{name}"
                yield f"{module.__name__}.{name}{args}", error


def _builds_an_error(function: Callable[..., Any]) -> bool:
    returns = get_type_hints(function).get("return")
    return isinstance(returns, type) and issubclass(returns, KozyrError)


def _arguments(builder: Callable[..., Any]) -> tuple[Any, ...]:
    return tuple(_sample(p) for p in inspect.signature(builder).parameters.values())


ERRORS = list(_errors())


def test_every_reason_has_keywords() -> None:
    missing = sorted({e.reason for _, e in ERRORS} - KEYWORDS.keys())
    assert not missing, f"add these reasons to KEYWORDS: {missing}"


@pytest.mark.parametrize(("where", "error"), ERRORS, ids=[w for w, _ in ERRORS])
def test_each_text_names_its_own_subject(where: str, error: KozyrError) -> None:
    assert set(error.messages) == set(LANGUAGES), f"{where}: a text in each language"
    for language in LANGUAGES:
        text = error.messages[language].lower()
        for word in KEYWORDS.get(error.reason, {}).get(language, ()):
            assert any(w in text for w in word.split("|")), (
                f"{where} [{language}] {text!r} does not name {word!r}"
            )
        for word in AVOID.get(error.reason, ()):
            assert word not in text, f"{where} [{language}] {text!r} speaks of {word!r}"
