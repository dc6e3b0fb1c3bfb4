"""NATS as a 3-node cluster (R3 streams): a node's fault loses and doubles nothing.

Each scenario runs `cluster_stack` (a table service, a clock and a bots process on a fresh
3-node cluster, KOZYR_STREAM_REPLICAS=3) under the common load, sets timers due across
the fault (`timers.TimerProbe`), strikes one or every node, and checks the suite's
invariants (every acknowledged move in the log once, JetStream = the log, every table
verifies), that every timer fired exactly once, that the clock's and the bots'
consumers resumed and caught up, and that presence works afterwards.
Each prints what it measured (`-s`): the time until the table stream has a leader
again and until the next acknowledged move. Bounded by 90 s (pytest-timeout).
"""

from __future__ import annotations

import asyncio
import time
from datetime import timedelta
from pathlib import Path

import pytest

from kozyr.bus.streams import jetstream_name
from tests.chaos.invariants import assert_nothing_lost_or_invented
from tests.chaos.load import Load, load_on
from tests.chaos.stack import Stack, cluster_stack
from tests.chaos.template import SUBJECT_ROOT, Template
from tests.chaos.timers import (
    TimerProbe,
    assert_presence_works,
    timer_probe,
    until_consumers_caught_up,
)
from tests.support.nats_cluster import NatsCluster, Node

pytestmark = pytest.mark.timeout(90, func_only=True)

WARM_UP_MOVES = 40
TIMERS = 10
TIMER_EVERY = timedelta(seconds=1)
"""Ten timers due 1 to 10 s after they are set, just before the fault: across it."""
NODE_DOWN_SECONDS = 30.0
TABLE_STREAM = jetstream_name("table", SUBJECT_ROOT)
GAME_LIMIT_SECONDS = 70.0
"""The games' guard: a 30 s outage and a loaded machine's slower play fit in it."""


def cluster_of(stack: Stack) -> NatsCluster:
    assert stack.cluster is not None
    return stack.cluster


async def measured(load: Load, probe: TimerProbe, what: str, struck: Node | None) -> None:
    """Print how long, from now (just after the fault), until the table stream has a
    leader other than `struck` and, apart, until the next move is acknowledged."""
    started = time.monotonic()
    cluster = cluster_of(load.stack)

    async def leader_back() -> float:
        await cluster.stream_leader(probe.nc, TABLE_STREAM, not_this=struck)
        return time.monotonic() - started

    async def next_move() -> float | None:
        moves = load.acknowledged
        while load.acknowledged == moves:
            if load.games.done():
                return None  # the games ended meanwhile
            await asyncio.sleep(0.01)
        return time.monotonic() - started

    led, moved = await asyncio.gather(leader_back(), next_move())
    move = "none (the games were over)" if moved is None else f"{moved:.2f}s"
    print(f"\n{what}: table stream led again after {led:.2f}s, next move {move}")


async def _all_held(load: Load, probe: TimerProbe) -> None:
    started = time.monotonic()
    await load.finish()
    print(f"games over after {time.monotonic() - started:.1f}s")
    await probe.until_all_fired()
    probe.assert_each_fired_once()
    print(f"timers checked after {time.monotonic() - started:.1f}s")
    await until_consumers_caught_up(probe)
    await assert_presence_works(load.stack, "p-after")
    await assert_nothing_lost_or_invented(load)
    print(f"invariants checked after {time.monotonic() - started:.1f}s")


async def _warmed_up(load: Load, probe: TimerProbe) -> None:
    await load.until_acknowledged(WARM_UP_MOVES)
    await probe.set_timers(TIMERS, TIMER_EVERY)


async def test_the_table_streams_leader_killed(template: Template, tmp_path: Path) -> None:
    async with (
        cluster_stack(template, tmp_path) as stack,
        load_on(stack, GAME_LIMIT_SECONDS) as load,
        timer_probe(stack) as probe,
    ):
        cluster = cluster_of(stack)
        await _warmed_up(load, probe)
        leader = await cluster.stream_leader(probe.nc, TABLE_STREAM)
        await cluster.kill(leader)
        await measured(load, probe, "leader SIGKILL", leader)
        await _all_held(load, probe)


async def test_a_non_leader_killed(template: Template, tmp_path: Path) -> None:
    async with (
        cluster_stack(template, tmp_path) as stack,
        load_on(stack, GAME_LIMIT_SECONDS) as load,
        timer_probe(stack) as probe,
    ):
        cluster = cluster_of(stack)
        await _warmed_up(load, probe)
        leader = await cluster.stream_leader(probe.nc, TABLE_STREAM)
        await cluster.kill(cluster.other_than(leader))
        await measured(load, probe, "non-leader SIGKILL", None)
        await _all_held(load, probe)


async def test_a_node_stopped_for_30s_then_back(template: Template, tmp_path: Path) -> None:
    async with (
        cluster_stack(template, tmp_path) as stack,
        load_on(stack, GAME_LIMIT_SECONDS) as load,
        timer_probe(stack) as probe,
    ):
        cluster = cluster_of(stack)
        await _warmed_up(load, probe)
        leader = await cluster.stream_leader(probe.nc, TABLE_STREAM)
        await cluster.stop(leader)
        await measured(load, probe, "leader stopped", leader)
        await asyncio.sleep(NODE_DOWN_SECONDS)  # the outage's length is the scenario
        await cluster.restart(leader)
        await cluster.stream_leader(probe.nc, TABLE_STREAM)  # every replica current again
        await _all_held(load, probe)


async def test_a_rolling_restart_of_every_node(template: Template, tmp_path: Path) -> None:
    async with (
        cluster_stack(template, tmp_path) as stack,
        load_on(stack, GAME_LIMIT_SECONDS) as load,
        timer_probe(stack) as probe,
    ):
        cluster = cluster_of(stack)
        await _warmed_up(load, probe)
        for node in cluster.nodes:
            await cluster.stop(node)
            await measured(load, probe, f"rolling: {node.name} stopped", node)
            await cluster.restart(node)
            await cluster.stream_leader(probe.nc, TABLE_STREAM)  # replicas current: next
        await _all_held(load, probe)
