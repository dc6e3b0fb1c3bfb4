"""A database that commits with `synchronous_commit=off` loses acknowledged moves when
it crashes (issue 24: a move acked 14 ms before the kill, gone from the log, already on
JetStream). The services refuse to start on one, unless KOZYR_ALLOW_ASYNC_COMMIT=1.

The setting is made on the test's own database (ALTER DATABASE), so the shared server
and every other test keep theirs.
"""

from __future__ import annotations

import asyncpg
import pytest

from kozyr.eventstore import migrate
from kozyr.eventstore.durability import CommitNotDurable
from kozyr.eventstore.urls import asyncpg_dsn
from kozyr.table.service import TableService
from tests.integration.table.conftest import table_settings

pytestmark = pytest.mark.integration


async def commit_asynchronously(database_url: str) -> None:
    """New sessions of this database commit with synchronous_commit=off."""
    connection = await asyncpg.connect(asyncpg_dsn(database_url))
    try:
        name = await connection.fetchval("SELECT current_database()")
        await connection.execute(f'ALTER DATABASE "{name}" SET synchronous_commit = off')
    finally:
        await connection.close()


async def test_the_table_service_refuses_a_database_that_commits_asynchronously(
    database_url: str, nats_url: str, subject_root: str
) -> None:
    await migrate(database_url)
    await commit_asynchronously(database_url)
    service = TableService(table_settings(database_url, nats_url, subject_root))
    try:
        with pytest.raises(CommitNotDurable, match="KOZYR_ALLOW_ASYNC_COMMIT"):
            await service.start()
        assert service.server.port is None, "it never served"
    finally:
        await service.store.close()


async def test_the_override_starts_it_anyway(
    database_url: str, nats_url: str, subject_root: str
) -> None:
    await migrate(database_url)
    await commit_asynchronously(database_url)
    settings = table_settings(database_url, nats_url, subject_root, allow_async_commit=True)
    service = TableService(settings)
    await service.start()
    try:
        assert await service.store.synchronous_commit() == "off"
        assert service.server.port is not None
    finally:
        await service.stop(0)
