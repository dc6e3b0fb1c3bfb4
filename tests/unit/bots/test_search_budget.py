"""The search's budget: a world cap and the caller's clock (`Decision.out_of_time`), the
games reading no clock of their own; the bots' `Budget.clock` is that clock."""

from __future__ import annotations

import random

from kozyr.bots.search import Budget
from kozyr.games.info import Decision
from kozyr.games.search import pimc


def _decision(worlds: int, ticks_left: int | None) -> Decision:
    """A decision whose clock runs out after `ticks_left` questions (None: never)."""
    asked = [0]

    def out_of_time() -> bool:
        asked[0] += 1
        return ticks_left is not None and asked[0] >= ticks_left

    return Decision({}, [], 0, (), seed=1, worlds=worlds, out_of_time=out_of_time)


def _search(decision: Decision) -> int:
    found = pimc([0, 1], lambda r: r.random(), lambda w, m: w * m, decision, random.Random(1))
    return found.worlds


def test_the_search_stops_at_its_world_cap_or_when_the_caller_s_clock_runs_out() -> None:
    assert _search(_decision(worlds=7, ticks_left=None)) == 7
    assert _search(_decision(worlds=1_000, ticks_left=3)) == 3
    assert _search(_decision(worlds=1_000, ticks_left=1)) == 1  # one world at least


def test_the_bots_clock_runs_out_after_its_milliseconds() -> None:
    assert Budget(milliseconds=0).clock()() is True
    assert Budget(milliseconds=60_000).clock()() is False
