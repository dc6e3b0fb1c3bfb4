"""What every game decider shares: turns, rule errors, localised texts, the event codec.

A game is a module exposing the decider functions of DESIGN.md §3 (see `Decider`).
Commands and events are frozen dataclasses; events are stored as JSON through
`encode_event`/`decode_event`, which know cards, card tuples, seeds and enums.
"""

from __future__ import annotations

import dataclasses
import enum
import functools
import types
import typing
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import Annotated, Any, Protocol, TypeVar

from kozyr.games.cards import Card, JokerColor, Rank, is_card, parse_card
from kozyr.games.standing import Standing


class Lang(StrEnum):
    """Languages of player-facing texts (the languages of the rule texts)."""

    EN = "en"
    RO = "ro"
    IT = "it"


Texts = Mapping[Lang, str]
"""One message in every language; `str.format` placeholders filled from error params."""


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


def _text_param(value: object, lang: Lang) -> object:
    """A RuleError param as it reads in `lang`: cards by `card_name`; a tuple of
    values as alternatives ("1, 3 or 5", "1, 3 sau 5"); anything else as it is."""
    if isinstance(value, Card) and is_card(value):  # not a look-alike
        return card_name(value, lang)
    if isinstance(value, tuple) and len(value) > 1:
        items = [str(_text_param(v, lang)) for v in value]
        return f"{', '.join(items[:-1])} {_OR[lang]} {items[-1]}"
    if isinstance(value, tuple):
        return ", ".join(str(_text_param(v, lang)) for v in value)
    return value


class GameError(Exception):
    """Base of the rules' typed errors; the service maps them to gRPC statuses."""

    reason: str = "GAME_ERROR"


class OptionsError(GameError):
    """Table options that are unknown or out of range (the table cannot be created)."""

    reason = "INVALID_OPTIONS"


class RuleError(GameError):
    """An illegal command: a stable reason code plus a message in every language.

    `reason` is what clients and tests match on (never the text). `texts` are
    templates; `message(lang)` fills them with `params`, each written for the
    language: a `Card` by `card_name`, a tuple as alternatives joined by the
    language's "or" — so no English word or card letter ends up in another language.
    """

    def __init__(self, reason: str, texts: Texts, **params: object) -> None:
        self.reason = reason
        self.texts = texts
        self.params = params
        super().__init__(f"{reason}: {self.message(Lang.EN)}")

    def message(self, lang: Lang | str = Lang.EN) -> str:
        lang = lang if isinstance(lang, Lang) else parse_lang(lang)
        template = self.texts.get(lang) or self.texts[Lang.EN]
        return template.format(**{k: _text_param(v, lang) for k, v in self.params.items()})


# Reasons common to both games. Game modules add their own catalogues.
COMMON_TEXTS: Mapping[str, Texts] = {
    "NOT_YOUR_TURN": {
        Lang.EN: "It is not your turn.",
        Lang.RO: "Nu este rândul tău.",
        Lang.IT: "Non è il tuo turno.",
    },
    "GAME_OVER": {
        Lang.EN: "The game is over.",
        Lang.RO: "Jocul s-a terminat.",
        Lang.IT: "La partita è finita.",
    },
    "WRONG_PHASE": {
        Lang.EN: "This move is not possible now.",
        Lang.RO: "Această mutare nu este posibilă acum.",
        Lang.IT: "Questa mossa non è possibile ora.",
    },
    "CARD_NOT_IN_HAND": {
        Lang.EN: "You do not hold {card}.",
        Lang.RO: "Nu ai cartea {card}.",
        Lang.IT: "Non hai la carta {card}.",
    },
    "INVALID_SEAT": {
        Lang.EN: "There is no seat {seat} at this table.",
        Lang.RO: "Nu există locul {seat} la această masă.",
        Lang.IT: "Non c'è il posto {seat} a questo tavolo.",
    },
    "NOT_A_PLAYER_MOVE": {
        Lang.EN: "Only the table itself makes this move.",
        Lang.RO: "Doar masa face această mutare.",
        Lang.IT: "Solo il tavolo fa questa mossa.",
    },
    "UNKNOWN_COMMAND": {
        Lang.EN: "This game has no such move.",
        Lang.RO: "Acest joc nu are o asemenea mutare.",
        Lang.IT: "Questo gioco non prevede questa mossa.",
    },
    "MALFORMED_COMMAND": {
        Lang.EN: "This move is malformed.",
        Lang.RO: "Această mutare este formulată greșit.",
        Lang.IT: "Questa mossa è formulata male.",
    },
}


def rule_error(catalogue: Mapping[str, Texts], reason: str, **params: object) -> RuleError:
    """Build the RuleError for `reason` from a game catalogue (falling back to common).

    Each game's `texts.error(reason, **params)` is this function over its own catalogue.
    """
    texts = catalogue.get(reason) or COMMON_TEXTS[reason]
    return RuleError(reason, texts, **params)


Seat = Annotated[int, "seat"]
"""A command field naming a seat: `command_check` wants an int (not a bool) in range."""

_Check = Callable[[object], bool]


def command_check(commands: Sequence[type], seats: int) -> Callable[[object], None]:
    """The check at the top of a game's `decide`, built once from its command types.

    Whoever calls a decider (the service, a bot, a test), a command that is not one of
    `commands` is refused with UNKNOWN_COMMAND, a `Seat` field that is not an int in
    0..seats-1 with INVALID_SEAT, and any other field not of its declared type (a raw
    string for an enum, a non-card in a card tuple, a list for a tuple) with
    MALFORMED_COMMAND — a RuleError, never a KeyError or TypeError from deep inside the
    rules. Counts, duplicates and membership stay the rules' own checks.
    """
    shapes = {cls: _field_checks(cls, seats) for cls in commands}

    def check(command: object) -> None:
        fields = shapes.get(type(command))
        if fields is None:
            raise rule_error(COMMON_TEXTS, "UNKNOWN_COMMAND", command=type(command).__name__)
        for name, is_seat, ok in fields:
            value = getattr(command, name)
            if not ok(value):
                if is_seat:  # any object may stand here: only a number goes in the text
                    seat = value if isinstance(value, int) else "?"
                    raise rule_error(COMMON_TEXTS, "INVALID_SEAT", seat=seat)
                raise rule_error(COMMON_TEXTS, "MALFORMED_COMMAND", field=name)

    return check


def _field_checks(cls: type, seats: int) -> tuple[tuple[str, bool, _Check], ...]:
    hints = typing.get_type_hints(cls, include_extras=True)
    checks = []
    for f in dataclasses.fields(cls):
        hint = hints[f.name]
        is_seat = hint == Seat
        checks.append((f.name, is_seat, _seat_check(seats) if is_seat else _value_check(hint)))
    return tuple(checks)


def _seat_check(seats: int) -> _Check:
    return lambda v: type(v) is int and 0 <= v < seats


def _value_check(hint: Any) -> _Check:
    """Whether a value has the type `hint` exactly (no bool for int, no str for an enum)."""
    origin = typing.get_origin(hint)
    args = typing.get_args(hint)
    if origin in (typing.Union, types.UnionType):
        arms = tuple(_value_check(a) for a in args)
        return lambda v: any(arm(v) for arm in arms)
    if origin is tuple and len(args) == 2 and args[1] is Ellipsis:
        item = _value_check(args[0])
        return lambda v: type(v) is tuple and all(item(x) for x in v)
    if origin is tuple:
        items = tuple(_value_check(a) for a in args)
        return lambda v: (
            type(v) is tuple
            and len(v) == len(items)
            and all(c(x) for c, x in zip(items, v, strict=True))
        )
    if hint is Card:
        return is_card
    if hint is type(None) or hint in (int, bool, str, bytes) or issubclass(hint, enum.Enum):
        return lambda v: type(v) is hint
    raise TypeError(f"command fields of type {hint!r} cannot be checked")


CHANCE = "chance"
"""Turn kind meaning the table itself must act: supply a seed (shuffle, draw)."""


@dataclass(frozen=True, slots=True)
class Turn:
    """Who must act next and what kind of decision it is.

    `number` grows by one at every new decision: the clock keys its timers and the
    table's ExpireTurn its idempotency on it. `seats` are the seats that may act —
    one seat, or a whole team when any of them may confirm (Khözör's opener).
    `kind` is a game-specific decision name, or CHANCE when the table must supply
    a seed, or "over" when the game has ended. `seconds` is the time the seats have
    for this decision (the game's option), None when nobody is on the clock.
    """

    number: int
    kind: str
    seats: tuple[int, ...] = ()
    seconds: int | None = None

    @property
    def is_chance(self) -> bool:
        return self.kind == CHANCE


S = TypeVar("S")
C = TypeVar("C")
E = TypeVar("E")


class Decider(Protocol[S, C, E]):
    """The shape of a game module (DESIGN.md §3) over its state, command and event types.

    A game module satisfies it as it is (`Decider[State, Command, Event] = module`): mypy
    checks every function against the game's own types, so nothing is `Any` at the seam.
    """

    GAME_ID: str
    SEATS: int
    COMMANDS: tuple[type, ...]
    EVENTS: tuple[type, ...]

    def initial_state(self, options: Mapping[str, Any]) -> S: ...
    def decide(self, state: S, command: C) -> list[E]: ...
    def evolve(self, state: S, event: E) -> S: ...
    def legal_commands(self, state: S, seat: int) -> list[C]: ...
    def view(self, state: S, seat: int | None) -> dict[str, Any]: ...
    def is_over(self, state: S) -> bool: ...
    def result(self, state: S) -> dict[str, Any]: ...
    def standing(self, state: S) -> Standing: ...
    def default_command(self, state: S, seat: int) -> C: ...
    def turn(self, state: S) -> Turn: ...
    def chance_command(self, state: S, seed: bytes) -> C: ...
    def redact(self, event: E, seat: int | None) -> dict[str, Any] | None: ...


# --------------------------------------------------------------------------- codec


def to_json(value: Any) -> Any:
    """A command/event field value → JSON: cards as text, bytes as hex, enums by value."""
    if isinstance(value, Card):
        return str(value)
    if isinstance(value, bytes):
        return value.hex()
    if isinstance(value, enum.Enum):
        return value.value
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: to_json(getattr(value, f.name)) for f in dataclasses.fields(value)}
    if isinstance(value, Mapping):
        return {str(k): to_json(v) for k, v in value.items()}
    if isinstance(value, (tuple, list, frozenset, set)):
        return [to_json(v) for v in value]
    return value


def from_json(tp: Any, value: Any) -> Any:
    """Inverse of `to_json` guided by a type annotation (a resolved type hint)."""
    origin = typing.get_origin(tp)
    if tp is Any:
        return value
    if origin in (typing.Union, types.UnionType):
        if value is None:
            return None
        arms = [a for a in typing.get_args(tp) if a is not type(None)]
        return from_json(arms[0], value)
    if origin is tuple:
        args = typing.get_args(tp)
        if len(args) == 2 and args[1] is Ellipsis:
            return tuple(from_json(args[0], v) for v in value)
        return tuple(from_json(a, v) for a, v in zip(args, value, strict=True))
    if origin is frozenset:
        (arg,) = typing.get_args(tp)
        return frozenset(from_json(arg, v) for v in value)
    if origin is list:
        (arg,) = typing.get_args(tp)
        return [from_json(arg, v) for v in value]
    if tp is Card:
        return parse_card(value)
    if tp is bytes:
        return bytes.fromhex(value)
    if isinstance(tp, type) and issubclass(tp, enum.Enum):
        return tp(value)
    if dataclasses.is_dataclass(tp):
        return decode_fields(tp, value)
    return value


@functools.cache
def _field_types(cls: Any) -> dict[str, Any]:
    """Resolved field annotations of a dataclass (resolving them is slow: done once)."""
    return typing.get_type_hints(cls)


def decode_fields(cls: Any, data: Mapping[str, Any]) -> Any:
    hints = _field_types(cls)
    kwargs = {f.name: from_json(hints[f.name], data[f.name]) for f in dataclasses.fields(cls)}
    return cls(**kwargs)


def encode_event(event: Any) -> tuple[str, dict[str, Any]]:
    """(type name, JSON data) of an event or command dataclass."""
    data = to_json(event)
    assert isinstance(data, dict)
    return type(event).__name__, data


def decode_event(registry: Mapping[str, type], type_name: str, data: Mapping[str, Any]) -> Any:
    """Rebuild an event or command from its type name and JSON data.

    Raises KeyError for an unknown type; TypeError/ValueError for malformed data.
    """
    return decode_fields(registry[type_name], data)


def registry_of(classes: Sequence[type]) -> dict[str, type]:
    """Name → class table for `decode_event`."""
    return {cls.__name__: cls for cls in classes}
