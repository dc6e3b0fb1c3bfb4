"""Leavers: who abandoned a finished table, and what it costs him next. No I/O.

The facts come from the table's public `TableFinished` (per player seat: its turns, those
a computer or nobody took for him, those from his first cover on, whether he was away at
the end), the rules are here, the decisions are events of the lobby (docs/leavers.md):

- **abandoned**: away when the table finished, or covered for more than half of his
  turns counted from his first cover. Counting from the first cover means a long first
  half buys no long absence; "more than half" means a player back for at least as long
  as he was away (a crash, a reconnect) is clean.
- **the schedule**: the first abandonment is a warning; the next ones cost a cooldown
  of `COOLDOWNS` (5 min, 15 min, 1 h, then 24 h each time); every `CLEAN_PER_STEP`
  clean tables take one step back (a warned player back to a clean record).
- **who counts**: only tables with at least two persons: a player who leaves computers
  keeps them waiting for nobody, and clean games against computers only do not wash a
  record either. His rating falls as last at any rated table (ratings.py).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta

COVERED_SHARE = 0.5
"""Abandoned when covered for more than this share of his turns since his first cover."""
COOLDOWNS = (
    timedelta(0),
    timedelta(minutes=5),
    timedelta(minutes=15),
    timedelta(hours=1),
    timedelta(hours=24),
)
"""The cooldown of a player's 1st, 2nd, … strike (the 1st: a warning); the last repeats."""
CLEAN_PER_STEP = 10
"""Clean tables (of two persons or more) that take one strike back."""


@dataclass(frozen=True, slots=True)
class SeatFacts:
    """One seat's facts from `TableFinished` (all 0 / False for a computer seat)."""

    player_id: str
    turns: int = 0
    covered_turns: int = 0
    turns_since_cover: int = 0
    covered_at_end: bool = False


def abandoned(facts: SeatFacts) -> bool:
    """Whether a player's seat was abandoned (a computer seat never is)."""
    if not facts.player_id:
        return False
    return facts.covered_at_end or facts.covered_turns > COVERED_SHARE * facts.turns_since_cover


def leavers_of(seats: Sequence[SeatFacts]) -> frozenset[str]:
    return frozenset(s.player_id for s in seats if abandoned(s))


def counts_for_record(seats: Sequence[SeatFacts]) -> bool:
    """Whether a table judges its players' records: two persons or more at it."""
    return len({s.player_id for s in seats if s.player_id}) >= 2


def cooldown(strikes: int) -> timedelta:
    """The cooldown of a player's `strikes`-th strike (none for the first: a warning)."""
    if strikes <= 0:
        return timedelta(0)
    return COOLDOWNS[min(strikes, len(COOLDOWNS)) - 1]


def cooldown_end(strikes: int, now: datetime) -> datetime | None:
    """When the cooldown of a new `strikes`-th strike decided `now` ends; None: a warning."""
    length = cooldown(strikes)
    return now + length if length else None


@dataclass(frozen=True, slots=True)
class Record:
    """A player's leaver record: strikes, clean tables since the last change, and the end
    of his cooldown (None: none)."""

    strikes: int = 0
    clean: int = 0
    until: datetime | None = None

    def blocks(self, now: datetime) -> bool:
        return self.until is not None and now < self.until

    def forgiven_by_one_more(self) -> bool:
        """Whether one more clean table takes a strike back."""
        return self.strikes > 0 and self.clean + 1 >= CLEAN_PER_STEP
