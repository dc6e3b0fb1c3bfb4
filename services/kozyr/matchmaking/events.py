"""The lobby's events, typed: frozen dataclasses written and read by the codec the games
use (`kozyr.games.codec`), under the type names and with the payload fields the log has
always held — so every stored lobby event still decodes, and old logs replay.

A field that older events may lack has a default (`decode_fields` gives it when the
field is missing). Nested values keep their stored JSON form (a ticket's `options`, its
`skills`, a match's `seats`) and are read through `kozyr.matchmaking.lobby`'s value
types. Times are ISO 8601 text, as stored. A type this code does not know is an error
(`UnknownLobbyEvent`), never skipped: a replica that skipped it would fold another
lobby than the one the log holds.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

from kozyr.games.codec import decode_event, encode_event, registry_of


@dataclass(frozen=True, slots=True)
class TicketOpened:
    ticket: str
    game: str
    players: tuple[str, ...]
    options: dict[str, Any]
    """`QueueOptions.encode()`: only the options chosen."""
    skills: dict[str, list[str]]
    """player → `Skill.encode()`."""
    at: str
    party: str | None = None
    fill_now: bool = False


@dataclass(frozen=True, slots=True)
class TicketCancelled:
    ticket: str
    by: str = ""


@dataclass(frozen=True, slots=True)
class TicketExpired:
    ticket: str


@dataclass(frozen=True, slots=True)
class MatchDecided:
    match: str
    game: str
    options: dict[str, Any]
    seats: tuple[dict[str, Any], ...]
    """`MatchSeat.encode()` of each seat."""
    tickets: tuple[str, ...]
    at: str


@dataclass(frozen=True, slots=True)
class MatchSeated:
    match: str
    table: str
    at: str


@dataclass(frozen=True, slots=True)
class MatchReleased:
    match: str
    reason: str = ""


@dataclass(frozen=True, slots=True)
class TableNoticed:
    table: str
    game: str
    seats: tuple[tuple[str, int], ...]
    at: str


@dataclass(frozen=True, slots=True)
class TableEnded:
    """A table finished; `clean` and `forgiven` only at a table that counts for the
    leaver records (two persons or more), absent from the stored event otherwise."""

    OMITTED_WHEN_NONE: ClassVar[tuple[str, ...]] = ("clean", "forgiven")

    table: str
    clean: tuple[str, ...] | None = None
    forgiven: tuple[str, ...] | None = None


@dataclass(frozen=True, slots=True)
class AbandonJudged:
    player: str
    strikes: int
    until: str | None = None
    table: str = ""
    at: str = ""


@dataclass(frozen=True, slots=True)
class PenaltyLifted:
    player: str
    strikes: int
    by: str = ""
    reason: str = ""
    at: str = ""


@dataclass(frozen=True, slots=True)
class PartyCreated:
    party: str
    code: str
    leader: str


@dataclass(frozen=True, slots=True)
class PartyJoined:
    party: str
    player: str


@dataclass(frozen=True, slots=True)
class PartyLeft:
    party: str
    player: str


@dataclass(frozen=True, slots=True)
class PartyDisbanded:
    party: str


LobbyEvent = (
    TicketOpened
    | TicketCancelled
    | TicketExpired
    | MatchDecided
    | MatchSeated
    | MatchReleased
    | TableNoticed
    | TableEnded
    | AbandonJudged
    | PenaltyLifted
    | PartyCreated
    | PartyJoined
    | PartyLeft
    | PartyDisbanded
)

REGISTRY = registry_of(
    [
        TicketOpened,
        TicketCancelled,
        TicketExpired,
        MatchDecided,
        MatchSeated,
        MatchReleased,
        TableNoticed,
        TableEnded,
        AbandonJudged,
        PenaltyLifted,
        PartyCreated,
        PartyJoined,
        PartyLeft,
        PartyDisbanded,
    ]
)


class UnknownLobbyEvent(ValueError):
    """The log holds a lobby event this code cannot read (a newer type, a malformed
    payload): folding stops there rather than guess."""

    def __init__(self, type_name: str, detail: str) -> None:
        super().__init__(f"lobby event {type_name!r} cannot be read: {detail}")
        self.type_name = type_name


def encode(event: LobbyEvent) -> tuple[str, dict[str, Any]]:
    """The event as the store keeps it: (type name, JSON data)."""
    type_name, data = encode_event(event)
    for name in getattr(event, "OMITTED_WHEN_NONE", ()):
        if data[name] is None:
            del data[name]
    return type_name, data


def decode(type_name: str, data: dict[str, Any]) -> LobbyEvent:
    """A stored event back (UnknownLobbyEvent when it is not one of ours)."""
    if type_name not in REGISTRY:
        raise UnknownLobbyEvent(type_name, "unknown type")
    try:
        event: LobbyEvent = decode_event(REGISTRY, type_name, data)
    except (KeyError, TypeError, ValueError) as error:
        raise UnknownLobbyEvent(type_name, repr(error)) from None
    return event
