"""The `hard` level's budget in the bots service: time (`KOZYR_BOTS_HARD_BUDGET_MS`) and a
cap on sampled worlds. The search itself is the game's (`GameInfo.levels`' `Searcher`,
PIMC in `kozyr.games.search`), pure and clockless: this service gives it the clock
(`Decision.out_of_time`) and reads the seat's history it searches on.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass

DEFAULT_BUDGET_MS = 200.0


@dataclass(frozen=True, slots=True)
class Budget:
    """How long one decision may search: milliseconds and a cap on sampled worlds."""

    milliseconds: float = DEFAULT_BUDGET_MS
    worlds: int = 1_000

    def clock(self) -> Callable[[], bool]:
        """Whether the time of a decision starting now has run out (asked between worlds)."""
        deadline = time.perf_counter() + self.milliseconds / 1000
        return lambda: time.perf_counter() >= deadline
