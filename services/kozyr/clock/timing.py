"""The clock service's notion of time, injectable so that tests skip time instead of sleeping.

Deadlines (`TurnStarted.deadline`) and presence times are instants of the clock's own
time; NATS fires timers on the wall clock. `SystemClock(offset)` runs `offset` ahead of
the wall clock: a deadline d fires at wall time d - offset. Production uses offset 0;
an end-to-end test of turns of the minimum 10 s sets 9.8 s and each turn runs out
0.2 s after it starts (`KOZYR_CLOCK_TIME_OFFSET_SECONDS`). Unit tests pass a
`ManualClock` and move it by hand.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Protocol


class Clock(Protocol):
    def now(self) -> datetime:
        """The current instant of the clock's time (timezone-aware, UTC)."""
        ...

    def wall_time_of(self, instant: datetime) -> datetime:
        """When, on the wall clock (which NATS fires timers by), `instant` comes."""
        ...


@dataclass(frozen=True, slots=True)
class SystemClock:
    """The wall clock, or a clock running `offset` ahead of it (tests: time skipping)."""

    offset: timedelta = timedelta(0)

    def now(self) -> datetime:
        return datetime.now(UTC) + self.offset

    def wall_time_of(self, instant: datetime) -> datetime:
        return instant - self.offset


@dataclass(slots=True)
class ManualClock:
    """A clock that moves only when told to (unit tests)."""

    current: datetime

    def now(self) -> datetime:
        return self.current

    def advance(self, seconds: float) -> None:
        self.current += timedelta(seconds=seconds)

    def wall_time_of(self, instant: datetime) -> datetime:
        return instant
