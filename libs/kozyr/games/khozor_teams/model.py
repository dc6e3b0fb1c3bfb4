"""The vocabulary and the state of a Khözör table (eight seats, two teams, three jokers).

The state is one frozen dataclass of tuples: cheap to copy with `dataclasses.replace`,
safe to share between versions, and comparable with `==` (fold == stepping is a test).
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

from kozyr.games.cards import Card, JokerColor, Rank, RankOrder, Suit

GAME_ID = "khozor_teams"
SEATS = 8
HAND_SIZE = 5
RESERVE_SIZE = 3
CYCLE_PLAYS = 8
"""A lead and seven successful beats: the whole table played once, the pile sleeps."""
ROUNDS_TO_WIN = 5
THREE_CARD_LEAD_MIN_HAND = 3
FIVE_CARD_LEAD_MIN_HAND = 5

TURN_SECONDS_DEFAULT = 180
TURN_SECONDS_MIN = 10
TURN_SECONDS_MAX = 3600

RANK_ORDER = RankOrder(
    (
        Rank.SEVEN,
        Rank.EIGHT,
        Rank.NINE,
        Rank.TEN,
        Rank.JACK,
        Rank.QUEEN,
        Rank.KING,
        Rank.THREE,
        Rank.TWO,
        Rank.ACE,
    )
)
JOKERS = (JokerColor.GRAY, JokerColor.BLACK, JokerColor.RED)
DECK: tuple[Card, ...] = RANK_ORDER.deck(jokers=JOKERS)
"""The canonical 43-card order fed to the fair-deal shuffle: ♣ ♦ ♥ ♠ × 7..A, then jokers."""

TRUMP_CYCLE = (Suit.HEARTS, Suit.DIAMONDS, Suit.SPADES, Suit.CLUBS)


def trump_of_round(round_no: int) -> Suit:
    """Round 1 ♥, 2 ♦, 3 ♠, 4 ♣, then the cycle repeats."""
    return TRUMP_CYCLE[(round_no - 1) % len(TRUMP_CYCLE)]


class Team(StrEnum):
    """Team A sits on the even seats, team B on the odd ones: teammates never touch."""

    A = "A"
    B = "B"

    @property
    def seats(self) -> tuple[int, ...]:
        return _TEAM_SEATS[self]

    @property
    def other(self) -> Team:
        return Team.B if self is Team.A else Team.A


_TEAM_SEATS = {Team.A: (0, 2, 4, 6), Team.B: (1, 3, 5, 7)}


def team_of(seat: int) -> Team:
    return Team.A if seat % 2 == 0 else Team.B


def next_seat(seat: int) -> int:
    """Play moves clockwise: the left of seat s is s + 1."""
    return (seat + 1) % SEATS


class Phase(StrEnum):
    """Where the match stands; the two `awaiting_*` phases wait for the table's seed."""

    AWAITING_DRAW = "awaiting_draw"
    AWAITING_DEAL = "awaiting_deal"
    CONFIRM_OPENER = "confirm_opener"
    PLAY = "play"
    OVER = "over"


class SignalKind(StrEnum):
    THREE_SET = "three_set"
    FIVE_SET = "five_set"


class ClearReason(StrEnum):
    """Why a signal went off: tapped again, broken by a move, or the round ended."""

    TAPPED = "tapped"
    BROKEN = "broken"
    ROUND_END = "round_end"


class PlayKind(StrEnum):
    LEAD = "lead"
    BEAT = "beat"


@dataclass(frozen=True, slots=True)
class Play:
    """One public play of the current cycle: who, lead or beat, which cards."""

    seat: int
    kind: PlayKind
    cards: tuple[Card, ...]


@dataclass(frozen=True, slots=True)
class RoundResult:
    round_no: int
    team: Team
    seat: int


NO_SIGNALS: frozenset[SignalKind] = frozenset()
EMPTY_HANDS: tuple[tuple[Card, ...], ...] = ((),) * SEATS
ALL_SIGNALS_OFF: tuple[frozenset[SignalKind], ...] = (NO_SIGNALS,) * SEATS


@dataclass(frozen=True, slots=True)
class State:
    """Everything the rules know. Hidden parts (hands, reserve, seed) never leave
    except through `view`/`redact`, which cut them per seat.

    `decisions` counts completed decisions (chance, confirmation, lead, beat, pickup):
    it is `turn().number`. `to_act` is the seat to lead or defend in the play phase.
    `opening_team` is the current round's (or, before round 1's deal, the drawn one).
    """

    turn_seconds: int = TURN_SECONDS_DEFAULT
    phase: Phase = Phase.AWAITING_DRAW
    decisions: int = 0
    round_no: int = 0
    trump: Suit | None = None
    opening_team: Team | None = None
    opener: int | None = None
    to_act: int | None = None
    hands: tuple[tuple[Card, ...], ...] = EMPTY_HANDS
    reserve: tuple[Card, ...] = ()
    pile: tuple[Play, ...] = ()
    sleeping: tuple[Card, ...] = ()
    signals: tuple[frozenset[SignalKind], ...] = ALL_SIGNALS_OFF
    commitment: str | None = None
    seed: bytes | None = None
    seed_revealed: bool = False
    opening_draw_seed: bytes | None = None
    results: tuple[RoundResult, ...] = ()
    winner: Team | None = None

    def wins(self, team: Team) -> int:
        return sum(1 for r in self.results if r.team is team)

    @property
    def round_in_progress(self) -> bool:
        return self.phase in (Phase.CONFIRM_OPENER, Phase.PLAY)

    @property
    def next_opening_team(self) -> Team | None:
        """Who opens the next deal: the last round's winners, else the round-1 draw."""
        return self.results[-1].team if self.results else self.opening_team
