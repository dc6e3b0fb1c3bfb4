"""A real table service in-process: real gRPC on a free port, real PostgreSQL and NATS."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any

import pytest

from kozyr.eventstore import migrate
from kozyr.table.service import TableService
from kozyr.table.settings import TableSettings
from tests.support.tables import JWT_KEY


@dataclass
class RunningTableService:
    service: TableService
    target: str


def in_process_values(nats_url: str, subject_root: str) -> dict[str, Any]:
    """The settings every in-process service of the integration tests starts from (the
    table here; bots and clock beside it): a free port, a short grace, quiet logs."""
    return {
        "nats_url": nats_url,
        "subject_root": subject_root,
        "jwt_key": JWT_KEY,
        "grpc_host": "127.0.0.1",
        "grpc_port": 0,
        "shutdown_grace_seconds": 1,
        "log_level": "WARNING",
    }


def table_settings(
    database_url: str, nats_url: str, subject_root: str, **overrides: Any
) -> TableSettings:
    """The settings every in-process table service of these tests starts from."""
    values = {"database_url": database_url, **in_process_values(nats_url, subject_root)}
    return TableSettings.load(**(values | overrides))


@contextlib.asynccontextmanager
async def running_table_service(
    database_url: str, nats_url: str, subject_root: str, **overrides: Any
) -> AsyncIterator[RunningTableService]:
    """Migrate the database, start the service on a free port; always stop it."""
    await migrate(database_url)
    service = TableService(table_settings(database_url, nats_url, subject_root, **overrides))
    port = await service.start()
    try:
        yield RunningTableService(service, f"127.0.0.1:{port}")
    finally:
        await service.stop(0)


@pytest.fixture
async def table_service(
    database_url: str, nats_url: str, subject_root: str
) -> AsyncIterator[RunningTableService]:
    async with running_table_service(
        database_url, nats_url, subject_root, metrics_host="127.0.0.1", metrics_port=0
    ) as running:
        yield running
