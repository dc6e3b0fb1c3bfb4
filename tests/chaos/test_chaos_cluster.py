"""NATS as a 3-node cluster (R3 streams): a node's fault loses and doubles nothing.

Each scenario is its fault, run by `tests.chaos.scenario.survives` on `cluster_stack` (a
table service, a clock, a bots process and matchmaking on a fresh 3-node cluster,
KOZYR_STREAM_REPLICAS=3) under the common load and the computer tables opened through
matchmaking; what is checked after it is in that module. Each prints what it measured
(`-s`): the time until the table stream has a leader again and until the next
acknowledged move. Bounded by 90 s (pytest-timeout).
"""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

import pytest

from kozyr.bus.streams import jetstream_name
from tests.chaos.scenario import Scenario, survives
from tests.chaos.stack import cluster_stack
from tests.chaos.template import SUBJECT_ROOT, Template
from tests.support.nats_cluster import NatsCluster, Node

pytestmark = pytest.mark.timeout(90, func_only=True)

NODE_DOWN_SECONDS = 30.0
TABLE_STREAM = jetstream_name("table", SUBJECT_ROOT)


def cluster_of(scenario: Scenario) -> NatsCluster:
    assert scenario.stack.cluster is not None
    return scenario.stack.cluster


async def table_stream_leader(scenario: Scenario, not_this: Node | None = None) -> Node:
    """The node leading the table stream (once every replica is current)."""
    return await cluster_of(scenario).stream_leader(
        scenario.probe.nc, TABLE_STREAM, not_this=not_this
    )


async def measured(scenario: Scenario, what: str, struck: Node | None) -> None:
    """Print how long, from now (just after the fault), until the table stream has a
    leader other than `struck` and, apart, until the next move is acknowledged."""
    started = time.monotonic()
    load = scenario.load

    async def leader_back() -> float:
        await table_stream_leader(scenario, not_this=struck)
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


async def test_the_table_streams_leader_killed(template: Template, tmp_path: Path) -> None:
    async def fault(scenario: Scenario) -> None:
        leader = await table_stream_leader(scenario)
        await cluster_of(scenario).kill(leader)
        await measured(scenario, "leader SIGKILL", leader)

    await survives(cluster_stack, template, tmp_path, fault)


async def test_a_non_leader_killed(template: Template, tmp_path: Path) -> None:
    async def fault(scenario: Scenario) -> None:
        cluster = cluster_of(scenario)
        await cluster.kill(cluster.other_than(await table_stream_leader(scenario)))
        await measured(scenario, "non-leader SIGKILL", None)

    await survives(cluster_stack, template, tmp_path, fault)


async def test_a_node_stopped_for_30s_then_back(template: Template, tmp_path: Path) -> None:
    """The ticket after the fault is made with the node down: matched, listed, its
    deadline set and its first move played on two nodes; the consumers' catching up,
    checked after, is with the node back."""

    async def fault(scenario: Scenario) -> None:
        cluster, leader = cluster_of(scenario), await table_stream_leader(scenario)
        await cluster.stop(leader)
        scenario.ticket_now()  # matched, timed and played with the node down
        await measured(scenario, "leader stopped", leader)
        await asyncio.sleep(NODE_DOWN_SECONDS)  # the outage's length is the scenario
        await cluster.restart(leader)
        await table_stream_leader(scenario)  # every replica current again

    await survives(cluster_stack, template, tmp_path, fault)


async def test_a_rolling_restart_of_every_node(template: Template, tmp_path: Path) -> None:
    async def fault(scenario: Scenario) -> None:
        cluster = cluster_of(scenario)
        for node in cluster.nodes:
            await cluster.stop(node)
            await measured(scenario, f"rolling: {node.name} stopped", node)
            await cluster.restart(node)
            await table_stream_leader(scenario)  # replicas current: the next one

    await survives(cluster_stack, template, tmp_path, fault)
