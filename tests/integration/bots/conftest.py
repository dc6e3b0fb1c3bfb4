"""The bots service in-process beside an in-process table service: real gRPC on free
ports, real PostgreSQL and NATS."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any

from kozyr.bots.service import REQUIRED_SETTINGS, BotsService
from kozyr.bots.settings import BotsSettings
from tests.integration.table.conftest import RunningTableService, in_process_values


@dataclass
class RunningBots:
    service: BotsService
    target: str


@contextlib.asynccontextmanager
async def running_bots(
    table: RunningTableService, nats_url: str, subject_root: str, **overrides: Any
) -> AsyncIterator[RunningBots]:
    """A bots service (think 0, metrics on a free port) on a free port."""
    values: dict[str, Any] = {
        **in_process_values(nats_url, subject_root),
        "table_target": table.target,
        "bots_think_seconds": 0,
        "metrics_host": "127.0.0.1",
        "metrics_port": 0,
    }
    service = BotsService(BotsSettings.load(required=REQUIRED_SETTINGS, **(values | overrides)))
    port = await service.start()
    try:
        yield RunningBots(service, f"127.0.0.1:{port}")
    finally:
        await service.stop()
