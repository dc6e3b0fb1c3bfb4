"""The clock service as processes beside a table service process, on real PostgreSQL and NATS.

The clock needs JetStream message schedules (nats-server 2.12+): the table service of
each test uses the NATS of `clock_nats_url` (tests/conftest.py) too.
"""

from __future__ import annotations

import os
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import ClassVar

import pytest

from kozyr.clock.service import SERVICE_NAME as CLOCK_SERVICE
from kozyr.infra import free_port
from tests.e2e.conftest import Deployment, TableServiceProcess, deployed, service_env
from tests.support.clock import delete_clock_streams


class ClockServiceProcess(TableServiceProcess):
    """`python -m kozyr.clock` on a fixed port: start, SIGKILL, start again, stop."""

    module: ClassVar[str] = "kozyr.clock"
    health_service: ClassVar[str] = CLOCK_SERVICE


@dataclass
class ClockStack:
    """A table service process and any number of clock processes sharing its NATS root."""

    table: Deployment
    log_dir: Path
    clocks: list[ClockServiceProcess] = field(default_factory=list)

    @property
    def root(self) -> str:
        return self.table.subject_root

    def clock_env(self, port: int, **settings: object) -> dict[str, str]:
        env = service_env(self.table.database_url, self.table.nats_url, self.root, port)
        env["KOZYR_TABLE_TARGET"] = self.table.target
        env["KOZYR_LOG_LEVEL"] = os.environ.get("E2E_DEBUG_LOG_LEVEL", "INFO")
        for name, value in settings.items():
            env[f"KOZYR_{name.upper()}"] = str(value)
        return env

    async def start_clock(self, **settings: object) -> ClockServiceProcess:
        """One more clock replica; `settings` are Settings fields (clock_cover_after_seconds…)."""
        port = free_port()
        index = len(self.clocks)
        clock = ClockServiceProcess(
            self.clock_env(port, **settings), port, self.log_dir / f"clock{index}.log"
        )
        await clock.start()
        self.clocks.append(clock)
        return clock

    def stop(self) -> None:
        for clock in self.clocks:
            clock.stop()


@pytest.fixture
async def clock_stack(
    database_url: str, clock_nats_url: str, subject_root: str, tmp_path: Path
) -> AsyncIterator[ClockStack]:
    """A table service process; start clocks with `await clock_stack.start_clock(...)`."""
    async with deployed(database_url, clock_nats_url, subject_root, tmp_path) as table:
        stack = ClockStack(table, tmp_path)
        try:
            yield stack
        finally:
            stack.stop()
            await delete_clock_streams(clock_nats_url, subject_root)
