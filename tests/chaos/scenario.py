"""One HA scenario, whatever its fault: the stack, the load, the checks (`survives`).

A scenario of test_chaos_cluster.py or test_failover.py is its fault alone, a callable
given the running `Scenario`. Around it, `survives`:

1. starts the stack (`cluster_stack` or `failover_stack`: a table service, a clock, a
   bots process and matchmaking) and the load (the template's tables played by
   stubborn scripted clients), opens the computer tables through matchmaking
   (tests.chaos.computers) and waits until WARM_UP_MOVES moves are acknowledged;
2. sets TIMERS probe timers due 1-10 s ahead (tests.chaos.timers) and notes each
   computer table's open turn: deadlines pending across the fault;
3. runs the fault; then makes a ticket (matched, listed, played);
4. checks: every game over; every probe timer fired once; every deadline pending at the
   fault expired, no turn ended twice; the ticket after the fault
   played; the clock's, bots' and matchmaking's consumers caught up; presence works;
   every service still the process it started as; then, with the bots and the clock
   stopped (nothing appends any more), the suite's invariants (tests.chaos.invariants).

It prints (`-s`) what it counted and how long the recovery took: docs/testing.md.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path

from kozyr.bus.schedules import MessageScheduler
from tests.chaos.computers import ComputerTables
from tests.chaos.invariants import assert_nothing_lost_or_invented
from tests.chaos.load import Load, load_on
from tests.chaos.stack import Stack
from tests.chaos.template import SUBJECT_ROOT, Template
from tests.chaos.timers import (
    TimerProbe,
    assert_presence_works,
    timer_probe,
    until_consumers_caught_up,
)

WARM_UP_MOVES = 40
"""Moves acknowledged before the fault: it strikes in full play."""
TIMERS = 10
TIMER_EVERY = timedelta(seconds=1)
"""Ten timers due 1 to 10 s after they are set, just before the fault: across it."""
GAMES_LIMIT_SECONDS = 70.0
"""The games' guard: a 30 s outage and a loaded machine's slower play fit in it."""


@dataclass
class Scenario:
    """What a fault acts on and measures with."""

    stack: Stack
    load: Load
    probe: TimerProbe
    computers: ComputerTables


Fault = Callable[[Scenario], Awaitable[None]]
StackOf = Callable[[Template, Path], AbstractAsyncContextManager[Stack]]


async def survives(
    stack_of: StackOf,
    template: Template,
    root: Path,
    fault: Fault,
    *,
    games_limit: float = GAMES_LIMIT_SECONDS,
) -> None:
    """Run `fault` under the load on a stack of `stack_of`; check that everything held."""
    async with (
        stack_of(template, root) as stack,
        load_on(stack, games_limit) as load,
        timer_probe(stack) as probe,
    ):
        scenario = Scenario(stack, load, probe, ComputerTables(stack))
        await asyncio.gather(load.until_acknowledged(WARM_UP_MOVES), scenario.computers.open())
        await probe.set_timers(TIMERS, TIMER_EVERY)
        await scenario.computers.note_pending()
        struck = time.monotonic()
        await fault(scenario)
        scheduler = MessageScheduler(probe.nc.jetstream(), SUBJECT_ROOT)
        async with _running(scenario.computers.ticket_after_fault(struck, scheduler)) as late:
            await _everything_held(scenario, late)


@contextlib.asynccontextmanager
async def _running(work: Awaitable[str]) -> AsyncIterator[asyncio.Future[str]]:
    """`work` as a task beside the block; cancelled if the block fails first."""
    task = asyncio.ensure_future(work)
    try:
        yield task
    finally:
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)


async def _everything_held(scenario: Scenario, late: asyncio.Future[str]) -> None:
    stack, load, probe = scenario.stack, scenario.load, scenario.probe
    computers = scenario.computers
    started = time.monotonic()
    await load.finish()
    print(f"\ngames over after {time.monotonic() - started:.1f}s")
    await probe.until_all_fired()
    probe.assert_each_fired_once()
    await computers.until_deadlines_fired()
    await late
    await until_consumers_caught_up(probe)
    await assert_presence_works(stack, "p-after")
    _rode_it_out(stack)
    print(f"timers, deadlines, consumers checked after {time.monotonic() - started:.1f}s")
    stopping = [*stack.clocks, *stack.bots]  # then nothing appends at the computer tables
    await asyncio.gather(*(asyncio.to_thread(process.stop) for process in stopping))
    await computers.assert_turns_ended_once()
    checked = await assert_nothing_lost_or_invented(load, computers.table_ids)
    expired, since, played = await computers.counts()
    figures = ", ".join(f"{k} {v:.1f}s" for k, v in computers.figures.items())
    print(
        f"invariants checked after {time.monotonic() - started:.1f}s: "
        f"{load.acknowledged} moves acknowledged, {checked} events in the log, "
        f"{len(probe.keys)} timers fired once, {len(computers.table_ids)} computer tables: "
        f"{expired} deadlines expired ({since} pending across the fault or after), "
        f"{played} computer moves; the ticket after the fault: {figures}"
    )


def _rode_it_out(stack: Stack) -> None:
    """Every service rode out the fault: still the process it started as."""
    for service in [*stack.services, *stack.companions]:
        assert service.running, stack.log_tails()
        assert service.starts == 1, stack.log_tails()
