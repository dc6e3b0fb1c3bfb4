"""The signal tap limit's answer (docs/api.md, "Signal taps are limited per seat"): a
tap beyond the limit is refused with `retryAfterSeconds`, the time until the OLDEST
tap counted in the window leaves it — not the newest tap, not the seat's first tap
ever (long out of the window). Checked for every seat, on the real TableApp over the
in-memory store, with one clock for the log's recorded times and the limit's "now",
so the seconds are exact.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from kozyr.games.khozor_teams import ToggleSignal
from kozyr.runtime.errors import ResourceExhausted
from kozyr.table.app import Actor, Outcome, TableApp, TapLimit
from kozyr.table.domain.model import Table
from tests.support.tables import khozor_tables, signal_taps

LIMIT = TapLimit(taps=4, window=timedelta(seconds=60))
IN_THE_WINDOW = (0.0, 10.0, 20.0, 30.0)
"""Seconds after the oldest counted tap at which the seat taps: the limit, reached."""
REFUSED_AT = 45.5
"""When the next tap comes: the oldest counted tap leaves the window 14.5 s later."""


class Clock:
    """A clock the test moves by hand."""

    def __init__(self) -> None:
        self.now = datetime(2030, 1, 1, tzinfo=UTC)

    def __call__(self) -> datetime:
        return self.now


async def _signalling(seat: int, clock: Clock) -> tuple[TableApp, Table, ToggleSignal]:
    """The first seeded table whose deal gives `seat` a set, and that seat's tap."""
    deals = 0
    async for app, table in khozor_tables(clock, tap_limit=LIMIT):
        taps = signal_taps(table, seat)
        if taps:
            return app, table, taps[0]
        deals += 1
        if deals == 100:  # a seat holds a set in most deals: the first few do
            break
    raise AssertionError(f"a hundred deals without a set for seat {seat}")


@pytest.mark.parametrize("seat", range(8))
async def test_retry_after_counts_from_the_oldest_tap_in_the_window(seat: int) -> None:
    clock = Clock()
    app, table, tap = await _signalling(seat, clock)
    taps = 0

    async def tapping() -> Outcome:
        nonlocal taps
        taps += 1
        actor = Actor(table.seats[seat], "player")
        return await app.submit(table.table_id, tap, request_id=f"tap-{taps}", actor=actor)

    async def refused() -> int:
        with pytest.raises(ResourceExhausted) as caught:
            await tapping()
        assert caught.value.reason == "TOO_MANY_SIGNALS"
        return int(caught.value.metadata["retryAfterSeconds"])

    await tapping()  # the seat's first taps ever, long before: out of the window now
    clock.now += timedelta(seconds=1)
    await tapping()
    oldest = clock.now + timedelta(seconds=1000)
    for offset in IN_THE_WINDOW:
        clock.now = oldest + timedelta(seconds=offset)
        await tapping()

    clock.now = oldest + timedelta(seconds=REFUSED_AT)
    retry = await refused()
    assert retry == 15, "the oldest counted tap leaves the window in 14.5 s (rounded up)"

    # The answer holds: a second short of it the seat is still refused, then it may tap.
    clock.now += timedelta(seconds=retry - 1)
    assert await refused() == 1
    clock.now += timedelta(seconds=1)
    done = await tapping()
    assert len([t for t in done.table.taps_of(seat) if t is not None and t > oldest]) == 4
