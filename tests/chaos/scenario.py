"""One HA scenario, whatever its fault: the stack, the load, the checks (`survives`).

A scenario of test_chaos_cluster.py or test_failover.py is its fault alone, a callable
given the running `Scenario`. Around it, `survives`:

1. starts the stack (`cluster_stack` or `failover_stack`: a table service, a clock, a
   bots process and matchmaking) and the load (the template's tables played by
   stubborn scripted clients), opens the computer tables through matchmaking
   (tests.chaos.computers) and waits until WARM_UP_MOVES moves are acknowledged;
2. sets TIMERS probe timers due 1-10 s ahead (tests.chaos.timers) and notes each
   computer table's open turn: deadlines pending across the fault;
3. runs the fault; then makes a ticket (matched, listed, played), or while the fault
   lasts if the fault asks for it (`Scenario.ticket_now`: a node down for 30 s);
4. checks, waiting for all of these at once (each bounded): every game over; every
   probe timer fired once; every deadline pending at the fault expired, no turn ended
   twice; the ticket after the fault played; then the clock's, bots' and
   matchmaking's consumers caught up; presence works;
   every service still the process it started as; then, with the bots and the clock
   stopped (nothing appends any more), the suite's invariants (tests.chaos.invariants).

It prints (`-s`) what it counted, how long the recovery took and each phase's time
(stack up, warm-up, fault, checks): docs/testing.md.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path

from kozyr.bus.schedules import MessageScheduler
from tests.chaos.computers import ComputerTables
from tests.chaos.invariants import assert_nothing_lost_or_invented
from tests.chaos.load import Load, load_on
from tests.chaos.stack import Stack, together
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
    struck: float = 0.0
    """When the fault struck (time.monotonic())."""
    late: asyncio.Future[str] | None = None
    """The ticket made after the fault (its table id), once `ticket_now` started it."""

    def ticket_now(self) -> None:
        """Make the ticket after the fault from now on, beside the rest: a fault that
        lasts (a node down 30 s) calls it while it lasts; else it starts once the fault
        returns."""
        if self.late is None:
            scheduler = MessageScheduler(self.probe.nc.jetstream(), SUBJECT_ROOT)
            work = self.computers.ticket_after_fault(self.struck, scheduler)
            self.late = asyncio.ensure_future(work)


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
    began = time.monotonic()
    async with (
        stack_of(template, root) as stack,
        load_on(stack, games_limit) as load,
        timer_probe(stack) as probe,
    ):
        scenario = Scenario(stack, load, probe, ComputerTables(stack))
        up = time.monotonic()
        await together(load.until_acknowledged(WARM_UP_MOVES), scenario.computers.open())
        await probe.set_timers(TIMERS, TIMER_EVERY)
        await scenario.computers.note_pending()
        scenario.struck = time.monotonic()
        try:
            await fault(scenario)
            recovered = time.monotonic()
            scenario.ticket_now()
            await _everything_held(scenario)
        finally:
            if scenario.late is not None:
                scenario.late.cancel()
                await asyncio.gather(scenario.late, return_exceptions=True)
        print(
            f"phases: stack up {up - began:.1f}s, warm-up {scenario.struck - up:.1f}s, "
            f"fault {recovered - scenario.struck:.1f}s, "
            f"checks {time.monotonic() - recovered:.1f}s"
        )


async def _everything_held(scenario: Scenario) -> None:
    stack, load, probe = scenario.stack, scenario.load, scenario.probe
    computers = scenario.computers
    assert scenario.late is not None
    started = time.monotonic()
    # Each waits for its own condition (bounded): at once, not one after the other.
    await together(
        load.finish(), probe.until_all_fired(), computers.until_deadlines_fired(), scenario.late
    )
    probe.assert_each_fired_once()
    await until_consumers_caught_up(probe)
    await assert_presence_works(stack, "p-after")
    _rode_it_out(stack)
    print(f"\ngames, timers, deadlines, consumers checked after {time.monotonic() - started:.1f}s")
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
