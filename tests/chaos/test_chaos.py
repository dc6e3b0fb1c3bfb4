"""Fault scenarios under load: nothing acknowledged is lost, nothing is invented.

Each scenario starts its own servers from the template (six tables a few deals from
their end), puts every table in play with stubborn scripted players, waits until the
load is really running (moves acknowledged, not a time), injects one fault, lets the
games play to their end and checks `invariants`. Each is bounded by 60 s
(pytest-timeout, the session's template build excluded); nothing asserts a duration.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from tests.chaos.invariants import assert_nothing_lost_or_invented
from tests.chaos.load import Load, load_on
from tests.chaos.stack import Stack, chaos_stack
from tests.chaos.template import Template

pytestmark = pytest.mark.timeout(60, func_only=True)

WARM_UP_MOVES = 40
"""Moves acknowledged before the fault: it strikes a table service in full play."""
POSTGRES_DOWN_SECONDS = 5.0
NATS_DOWN_SECONDS = 10.0


async def _survives(load: Load) -> None:
    await load.finish()
    await assert_nothing_lost_or_invented(load)


def _single_unrestarted_service(stack: Stack) -> None:
    """The service rode out the fault: still the process it started as."""
    [service] = stack.services
    assert service.running, stack.log_tails()
    assert service.starts == 1, stack.log_tails()


async def test_postgres_stopped_then_restarted(template: Template, tmp_path: Path) -> None:
    async with chaos_stack(template, tmp_path) as stack, load_on(stack) as load:
        await load.until_acknowledged(WARM_UP_MOVES)
        await asyncio.to_thread(stack.postgres.stop)
        await asyncio.sleep(POSTGRES_DOWN_SECONDS)
        await asyncio.to_thread(stack.postgres.start)
        await _survives(load)
        _single_unrestarted_service(stack)


async def test_postgres_frozen_then_resumed(template: Template, tmp_path: Path) -> None:
    async with chaos_stack(template, tmp_path) as stack, load_on(stack) as load:
        await load.until_acknowledged(WARM_UP_MOVES)
        stack.postgres.freeze()
        await asyncio.sleep(POSTGRES_DOWN_SECONDS)
        stack.postgres.thaw()
        await _survives(load)
        _single_unrestarted_service(stack)


async def test_nats_stopped_then_restarted(template: Template, tmp_path: Path) -> None:
    async with chaos_stack(template, tmp_path) as stack, load_on(stack) as load:
        await load.until_acknowledged(WARM_UP_MOVES)
        await asyncio.to_thread(stack.single_nats.stop)
        await asyncio.sleep(NATS_DOWN_SECONDS)
        await asyncio.to_thread(stack.single_nats.start)
        await _survives(load)
        _single_unrestarted_service(stack)


async def test_service_killed_under_load_then_restarted(template: Template, tmp_path: Path) -> None:
    async with chaos_stack(template, tmp_path) as stack, load_on(stack) as load:
        [service] = stack.services
        await load.until_acknowledged(WARM_UP_MOVES)
        load.gate.open.clear()  # clients that lose the service wait until it is back
        service.kill()
        await service.start()
        load.gate.open.set()
        await _survives(load)
        assert service.starts == 2


async def test_service_terminated_under_load_then_restarted(
    template: Template, tmp_path: Path
) -> None:
    async with chaos_stack(template, tmp_path) as stack, load_on(stack) as load:
        [service] = stack.services
        await load.until_acknowledged(WARM_UP_MOVES)
        load.gate.open.clear()
        exit_code = await asyncio.to_thread(service.stop)
        await service.start()
        load.gate.open.set()
        await _survives(load)
        assert exit_code == 0, "SIGTERM is a graceful stop"
        assert service.starts == 2


async def test_relay_leader_killed_among_three_replicas(template: Template, tmp_path: Path) -> None:
    async with chaos_stack(template, tmp_path, replicas=3) as stack, load_on(stack) as load:
        await load.until_acknowledged(WARM_UP_MOVES)
        leader = await stack.new_relay_leader()
        leader.kill()  # its clients move on to the other replicas
        successor = await stack.new_relay_leader(not_this=leader)
        await _survives(load)
        assert successor.running
        assert not leader.running
