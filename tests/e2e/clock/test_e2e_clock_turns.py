"""Turn clocks end to end: the table service and clock replicas as processes.

Turns last the minimum 10 s; the clocks run `OFFSET` seconds ahead of the wall clock
(KOZYR_CLOCK_TIME_OFFSET_SECONDS), so each deadline fires a fraction of a second after
its turn starts: whole games run out by expiries in minutes, not hours.
"""

from __future__ import annotations

import asyncio
import statistics
from collections.abc import AsyncIterator

import pytest

from kozyr.api.common.v1 import games_pb2
from kozyr.api.table.v1 import table_service_pb2 as pb
from kozyr.client import TableClient
from kozyr.runtime.auth import Role
from tests.e2e.clock.conftest import ClockStack
from tests.e2e.clock.tap import PublicTap
from tests.e2e.moderation import kozyr_cli
from tests.support.tables import token

pytestmark = [pytest.mark.e2e]

TURN_SECONDS = 10
OFFSET = 9.95
"""Each turn runs out 0.05 s after it starts (for the clock)."""
PLAYERS = ["ana", "bogdan", "chiara"]
QUIET = {"clock_cover_after_seconds": 3600}
"""Nobody heartbeats in these tests: no seat must be covered while they run."""


async def _open_tables(
    stack: ClockStack, count: int, turn_seconds: int = TURN_SECONDS
) -> list[str]:
    options = pb.ThreeFiveEightOptions(turn_seconds=turn_seconds)
    async with TableClient(stack.table.target, token("matchmaker", Role.SERVICE)) as mm:
        created = await asyncio.gather(
            *(
                mm.create_table(games_pb2.GAME_THREE_FIVE_EIGHT, PLAYERS, three_five_eight=options)
                for _ in range(count)
            )
        )
    return [c.table_id for c in created]


@pytest.fixture
async def tap(clock_stack: ClockStack) -> AsyncIterator[PublicTap]:
    tapped = PublicTap(clock_stack.table.nats_url, clock_stack.root)
    await tapped.start()
    yield tapped
    await tapped.close()


@pytest.mark.timeout(900)
async def test_a_table_nobody_plays_ends_by_expiries_and_verifies(
    clock_stack: ClockStack, tap: PublicTap
) -> None:
    await clock_stack.start_clock(clock_time_offset_seconds=OFFSET, **QUIET)
    (table_id,) = await _open_tables(clock_stack, 1)
    started = asyncio.get_running_loop().time()
    await tap.wait_for(lambda: tap.finished(table_id), seconds=800)
    took = asyncio.get_running_loop().time() - started
    ends, expired = tap.ends(table_id), tap.expired(table_id)
    assert ends == expired, "every turn ended by its expiry"
    assert set(expired.values()) == {1}, "and each once"
    late = tap.lateness(table_id, OFFSET)
    print(
        f"\n{len(expired)} turns expired in {took:.0f} s; lateness (to the relay's publish) "
        f"p50 {statistics.median(late):.3f} s, max {max(late):.3f} s"
    )
    verified = await kozyr_cli(clock_stack.table.database_url, "verify", table_id)
    assert verified.exit_code == 0, verified.stdout + verified.stderr
