"""A real table service in-process: real gRPC on a free port, real PostgreSQL and NATS."""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import dataclass

import pytest

from kozyr.eventstore import migrate
from kozyr.runtime import load_settings
from kozyr.table.service import TableService
from tests.support.tables import JWT_KEY


@dataclass
class RunningTableService:
    service: TableService
    target: str


@pytest.fixture
async def table_service(
    database_url: str, nats_url: str, subject_root: str
) -> AsyncIterator[RunningTableService]:
    await migrate(database_url)
    settings = load_settings(
        database_url=database_url,
        nats_url=nats_url,
        subject_root=subject_root,
        jwt_key=JWT_KEY,
        grpc_host="127.0.0.1",
        grpc_port=0,
        shutdown_grace_seconds=1,
        log_level="WARNING",
        metrics_host="127.0.0.1",
        metrics_port=0,
    )
    service = TableService(settings)
    port = await service.start()
    yield RunningTableService(service, f"127.0.0.1:{port}")
    await service.stop(0)
