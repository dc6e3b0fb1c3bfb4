"""The Alembic migrations: a fresh database, repeated and concurrent runs, the way back,
and agreement with the SQLAlchemy description in kozyr.eventstore.schema."""

from __future__ import annotations

import asyncio
from typing import Any

import asyncpg
import pytest
from alembic.autogenerate import compare_metadata
from alembic.migration import MigrationContext
from sqlalchemy.engine import Connection
from sqlalchemy.ext.asyncio import create_async_engine
from sqlalchemy.pool import NullPool

from kozyr.eventstore import NewEvent, PostgresEventStore, downgrade, migrate
from kozyr.eventstore.schema import ALEMBIC_VERSION_TABLE, metadata
from kozyr.eventstore.urls import asyncpg_dsn

pytestmark = pytest.mark.integration

TABLES = {"streams", "events", "stream_requests", "outbox", "snapshots"}


async def tables(database_url: str) -> set[str]:
    connection = await asyncpg.connect(asyncpg_dsn(database_url))
    try:
        rows = await connection.fetch("SELECT tablename FROM pg_tables WHERE schemaname = 'public'")
    finally:
        await connection.close()
    return {row["tablename"] for row in rows}


async def test_migrate_builds_a_fresh_database(database_url: str) -> None:
    assert await tables(database_url) == set()
    await migrate(database_url)
    assert await tables(database_url) == TABLES | {ALEMBIC_VERSION_TABLE}


async def test_migrate_twice_and_concurrently_is_harmless(database_url: str) -> None:
    await asyncio.gather(*(migrate(database_url) for _ in range(4)))
    await migrate(database_url)
    async with PostgresEventStore(database_url) as store:
        result = await store.append("table-1", 0, [NewEvent("Opened", {})], request_id="r")
    assert result.version == 1


async def test_downgrade_to_base_removes_everything_and_upgrade_restores_it(
    database_url: str,
) -> None:
    await migrate(database_url)
    await downgrade(database_url, "base")
    assert await tables(database_url) == {ALEMBIC_VERSION_TABLE}
    await migrate(database_url)
    assert await tables(database_url) >= TABLES


async def test_plain_libpq_urls_are_accepted(database_url: str) -> None:
    await migrate(asyncpg_dsn(database_url))
    assert await tables(database_url) >= TABLES


def _differences(connection: Connection) -> list[Any]:
    context = MigrationContext.configure(connection, opts={"version_table": ALEMBIC_VERSION_TABLE})
    return list(compare_metadata(context, metadata))


async def test_the_migrated_schema_matches_the_schema_module(database_url: str) -> None:
    await migrate(database_url)
    engine = create_async_engine(database_url, poolclass=NullPool)
    try:
        async with engine.connect() as connection:
            differences = await connection.run_sync(_differences)
    finally:
        await engine.dispose()
    assert differences == []
