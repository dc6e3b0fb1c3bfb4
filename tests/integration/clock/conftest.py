"""The clock service in-process beside an in-process table service: real gRPC on free
ports, real PostgreSQL, and a NATS that keeps message schedules (`clock_nats_url`)."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any

import pytest

from kozyr.clock.service import REQUIRED_SETTINGS, ClockService
from kozyr.clock.settings import ClockSettings
from tests.integration.table.conftest import (
    RunningTableService,
    in_process_values,
    running_table_service,
)
from tests.support.clock import delete_clock_streams


@dataclass
class RunningClock:
    service: ClockService
    target: str


@contextlib.asynccontextmanager
async def running_clock(
    table: RunningTableService, nats_url: str, subject_root: str, **overrides: Any
) -> AsyncIterator[RunningClock]:
    """A clock service on a free port for `table`; `overrides` are Settings fields
    (clock_offline_after_seconds…). Its streams and buckets are deleted after."""
    values = {**in_process_values(nats_url, subject_root), "table_target": table.target}
    service = ClockService(ClockSettings.load(required=REQUIRED_SETTINGS, **(values | overrides)))
    port = await service.start()
    try:
        yield RunningClock(service, f"127.0.0.1:{port}")
    finally:
        await service.stop(0)
        await delete_clock_streams(nats_url, subject_root)


@pytest.fixture
async def clock_table(
    database_url: str, clock_nats_url: str, subject_root: str
) -> AsyncIterator[RunningTableService]:
    """A table service publishing on the clock's NATS."""
    async with running_table_service(database_url, clock_nats_url, subject_root) as table:
        yield table
