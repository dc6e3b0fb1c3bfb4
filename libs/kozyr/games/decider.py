"""The shape of a game: the `Decider` protocol, its `Turn`, and the check that opens `decide`.

A game is a module exposing the decider functions of DESIGN.md §3 over its own state,
command and event types; `command_check` refuses, before any rule runs, a command that
is not one of the game's or has a field of the wrong type (docs/architecture.md, "One
convention for every game").
"""

from __future__ import annotations

import dataclasses
import enum
import types
import typing
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Annotated, Any, Protocol, TypeVar

from kozyr.games.cards import Card, is_card
from kozyr.games.errors import COMMON_TEXTS, rule_error
from kozyr.games.standing import Standing

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
CLIENT_SEED = "client_seed"
"""Turn kind of no game: the table's first deal waits for the players' client seeds
(SetClientSeed, docs/fair-deal.md §9); its seats are those still to set one, and at its
deadline the deal is dealt without them. No move is legal then."""


@dataclass(frozen=True, slots=True)
class Turn:
    """Who must act next and what kind of decision it is.

    `number` grows by one at every new decision, a chance step (a deal) included: the
    clock keys its timers and the table's ExpireTurn its idempotency on it, the table's
    own CLIENT_SEED turn too (it takes the number of the chance step it holds).
    `seats` are the seats that may act — one seat, or a whole team when any of them
    may confirm (Khözör's opener).
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
