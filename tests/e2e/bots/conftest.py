"""The bots service as processes beside a table service process (real PostgreSQL, NATS),
and beside the clock service too (`covered_stack`: its NATS keeps message schedules)."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar

import pytest

from kozyr.infra import free_port
from tests.e2e.clock.conftest import ClockStack
from tests.e2e.conftest import Deployment, TableServiceProcess, deployed, service_env
from tests.support.clock import delete_clock_streams


class BotsServiceProcess(TableServiceProcess):
    """`python -m kozyr.bots` on a fixed port (it serves health only)."""

    module: ClassVar[str] = "kozyr.bots"
    health_service: ClassVar[str] = ""


@dataclass
class BotsStack:
    """A table service process and any number of bots replicas sharing its NATS root."""

    table: Deployment
    log_dir: Path
    bots: list[BotsServiceProcess] = field(default_factory=list)

    async def start_bots(self, **settings: object) -> BotsServiceProcess:
        """One more bots replica (think_seconds 0, JSON log at INFO); `settings` are
        Settings fields (bots_level…)."""
        port = free_port()
        env = service_env(
            self.table.database_url, self.table.nats_url, self.table.subject_root, port
        )
        env.update(
            KOZYR_TABLE_TARGET=self.table.target,
            KOZYR_LOG_LEVEL="INFO",
            KOZYR_LOG_FORMAT="json",
            KOZYR_BOTS_THINK_SECONDS="0",
        )
        env.update({f"KOZYR_{name.upper()}": str(value) for name, value in settings.items()})
        bots = BotsServiceProcess(env, port, self.log_dir / f"bots{len(self.bots)}.log")
        self.bots.append(bots)  # before the await: replicas started at once get their own log
        await bots.start()
        return bots

    def moves(self) -> list[dict[str, Any]]:
        """Every "bot moved" line of every replica's log."""
        found = []
        for bots in self.bots:
            for line in bots.log_path.read_text().splitlines():
                if '"bot moved"' in line:
                    found.append(json.loads(line))
        return found

    def stop(self) -> None:
        for bots in self.bots:
            bots.stop()


@pytest.fixture
async def bots_stack(
    database_url: str, nats_url: str, subject_root: str, tmp_path: Path
) -> AsyncIterator[BotsStack]:
    """A table service process; start bots with `await bots_stack.start_bots()`."""
    async with deployed(database_url, nats_url, subject_root, tmp_path) as table:
        stack = BotsStack(table, tmp_path)
        try:
            yield stack
        finally:
            stack.stop()


@pytest.fixture
async def covered_stack(
    database_url: str,
    clock_nats_url: str,
    subject_root: str,
    tmp_path: Path,
) -> AsyncIterator[tuple[BotsStack, ClockStack]]:
    """One table service; start bots and clocks on it (`start_bots`, `start_clock`)."""
    async with deployed(database_url, clock_nats_url, subject_root, tmp_path) as table:
        bots, clocks = BotsStack(table, tmp_path), ClockStack(table, tmp_path)
        try:
            yield bots, clocks
        finally:
            bots.stop()
            clocks.stop()
            await delete_clock_streams(clock_nats_url, subject_root)
