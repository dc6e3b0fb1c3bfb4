"""Commands (imperative) and events (past tense) of Khözör: small frozen records.

Every field is an int, str, bool, bytes, Card, enum or a tuple of these, so that
`kozyr.games.codec.encode_event`/`decode_event` round-trip each of them as JSON.
Player commands carry `seat`; the chance commands carry the table's 32-byte seed.
"""

from __future__ import annotations

from dataclasses import dataclass

from kozyr.games.cards import Card, Suit
from kozyr.games.decider import Seat
from kozyr.games.khozor_teams.model import ClearReason, SignalKind, Team

# ------------------------------------------------------------------ commands


@dataclass(frozen=True, slots=True)
class DrawOpeningTeam:
    """Chance (table only): draw round 1's opening team from a seed."""

    seed: bytes


@dataclass(frozen=True, slots=True)
class DealRound:
    """Chance (table only): shuffle and deal the next round from a seed."""

    seed: bytes


@dataclass(frozen=True, slots=True)
class ConfirmOpener:
    """A player of the opening team names the seat (of that team) that leads first."""

    seat: Seat
    opener: Seat


@dataclass(frozen=True, slots=True)
class Lead:
    seat: Seat
    cards: tuple[Card, ...]


@dataclass(frozen=True, slots=True)
class Beat:
    seat: Seat
    cards: tuple[Card, ...]


@dataclass(frozen=True, slots=True)
class PickUp:
    seat: Seat


@dataclass(frozen=True, slots=True)
class ToggleSignal:
    """Set a signal the hand makes true, or clear it if set ("tap again")."""

    seat: Seat
    kind: SignalKind


Command = DrawOpeningTeam | DealRound | ConfirmOpener | Lead | Beat | PickUp | ToggleSignal
COMMANDS: tuple[type, ...] = (
    DrawOpeningTeam,
    DealRound,
    ConfirmOpener,
    Lead,
    Beat,
    PickUp,
    ToggleSignal,
)
PLAYER_COMMANDS: tuple[type, ...] = (ConfirmOpener, Lead, Beat, PickUp, ToggleSignal)

# ------------------------------------------------------------------ events


@dataclass(frozen=True, slots=True)
class OpeningTeamDrawn:
    """Round 1's opening team: `team` = A if draw_index(seed, 2) == 0 else B.

    The seed decides nothing else, so it is public at once.
    """

    seed: bytes
    commitment: str
    team: Team


@dataclass(frozen=True, slots=True)
class RoundDealt:
    """A round's deal. With d = fair_deal.shuffle(DECK, seed): seat s holds
    d[5s:5s+5] and the reserve is d[40:43], drawn from d[40] on. The seed stays
    hidden from players until `DealSeedRevealed`."""

    round_no: int
    trump: Suit
    opening_team: Team
    commitment: str
    seed: bytes
    hands: tuple[tuple[Card, ...], ...]
    reserve: tuple[Card, ...]


@dataclass(frozen=True, slots=True)
class OpenerConfirmed:
    seat: int
    opener: int


@dataclass(frozen=True, slots=True)
class CardsLed:
    seat: int
    cards: tuple[Card, ...]


@dataclass(frozen=True, slots=True)
class CardsBeaten:
    seat: int
    cards: tuple[Card, ...]


@dataclass(frozen=True, slots=True)
class PilePickedUp:
    seat: int
    cards: tuple[Card, ...]


@dataclass(frozen=True, slots=True)
class ReserveDrawn:
    """The refill after a lead or beat: the first cards of the reserve, in order."""

    seat: int
    cards: tuple[Card, ...]


@dataclass(frozen=True, slots=True)
class CycleSlept:
    """Унтана: the cycle's pile leaves play; `seat` (the eighth player) leads next."""

    seat: int
    card_count: int


@dataclass(frozen=True, slots=True)
class SignalSet:
    seat: int
    kind: SignalKind


@dataclass(frozen=True, slots=True)
class SignalCleared:
    seat: int
    kind: SignalKind
    reason: ClearReason


@dataclass(frozen=True, slots=True)
class RoundWon:
    round_no: int
    team: Team
    seat: int


@dataclass(frozen=True, slots=True)
class DealSeedRevealed:
    round_no: int
    seed: bytes


@dataclass(frozen=True, slots=True)
class MatchWon:
    team: Team
    wins_a: int
    wins_b: int


Event = (
    OpeningTeamDrawn
    | RoundDealt
    | OpenerConfirmed
    | CardsLed
    | CardsBeaten
    | PilePickedUp
    | ReserveDrawn
    | CycleSlept
    | SignalSet
    | SignalCleared
    | RoundWon
    | DealSeedRevealed
    | MatchWon
)
EVENTS: tuple[type, ...] = (
    OpeningTeamDrawn,
    RoundDealt,
    OpenerConfirmed,
    CardsLed,
    CardsBeaten,
    PilePickedUp,
    ReserveDrawn,
    CycleSlept,
    SignalSet,
    SignalCleared,
    RoundWon,
    DealSeedRevealed,
    MatchWon,
)
