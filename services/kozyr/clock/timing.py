"""The clock service's notion of time, injectable so that tests skip time instead of sleeping.

Deadlines (`TurnStarted.deadline`) and presence times are instants of the clock's own
time; NATS fires timers on the wall clock. `SystemClock(offset)` runs `offset` ahead of
the wall clock: a deadline d fires at wall time d - offset. Production uses offset 0;
an end-to-end test of turns of the minimum 10 s sets 9.8 s and each turn runs out
0.2 s after it starts (`KOZYR_CLOCK_TIME_OFFSET_SECONDS`). Unit tests pass a
`ManualClock` and move it by hand (both from `kozyr.runtime.clocks`).
"""

from __future__ import annotations

from datetime import datetime
from typing import Protocol

from kozyr.runtime.clocks import SystemClock

__all__ = ["Clock", "SystemClock"]


class Clock(Protocol):
    def now(self) -> datetime:
        """The current instant of the clock's time (timezone-aware, UTC)."""
        ...

    def wall_time_of(self, instant: datetime) -> datetime:
        """When, on the wall clock (which NATS fires timers by), `instant` comes."""
        ...
