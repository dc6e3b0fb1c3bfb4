"""A real table service in-process (real gRPC on a free port, real PostgreSQL and
NATS) for the web edge to forward to."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from tests.integration.table.conftest import RunningTableService, running_table_service


@pytest.fixture
async def table_service(
    database_url: str, nats_url: str, subject_root: str
) -> AsyncIterator[RunningTableService]:
    async with running_table_service(database_url, nats_url, subject_root) as running:
        yield running
