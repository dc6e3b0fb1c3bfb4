"""Matchmaking's notion of time, injectable so that tests skip the wait for computers.

Every time the lobby records (a ticket's opening, a match's decision) and every wait it
measures (the search window, `fill_after`, a ticket's expiry) is read from one `Clock`.
Production runs the wall clock. Tests move it: `KOZYR_MATCHMAKING_CLOCK_OFFSET_FILE`
names a file holding a number of seconds that the clock runs ahead of the wall clock,
read at every tick — a test writes 50 and then 61 into it to see a ticket not yet, and
then, filled with computers after `fill_after` 60 s, without sleeping a minute.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path

from kozyr.runtime.clocks import Clock, SystemClock

__all__ = ["Clock", "FileOffsetClock", "SystemClock"]


@dataclass(frozen=True, slots=True)
class FileOffsetClock:
    """The wall clock, ahead by the seconds written in `path` (tests only; a missing or
    unreadable file counts as 0)."""

    path: Path

    def now(self) -> datetime:
        try:
            offset = float(self.path.read_text().strip() or 0)
        except (OSError, ValueError):
            offset = 0.0
        return datetime.now(UTC) + timedelta(seconds=offset)
