"""Injectable time for the services that measure waits (the clock, matchmaking).

Tests skip time instead of sleeping: a `SystemClock(offset)` runs `offset` ahead of the
wall clock (a process started by an end-to-end test), a `ManualClock` moves only when
told to (unit tests). Both also say when one of their instants comes on the wall clock
(`wall_time_of`), which NATS fires timers by. One definition, so the two services'
tests move time the same way.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Protocol


class Clock(Protocol):
    def now(self) -> datetime:
        """The current instant of this clock's time (timezone-aware, UTC)."""
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
