"""Alembic migrations of the event store, runnable from code.

`await migrate(url)` brings a database (fresh or older) to the latest schema. It is safe
to call from every replica at start-up: a transaction-scoped advisory lock serialises
concurrent callers, and the whole upgrade is one transaction (PostgreSQL has
transactional DDL), so a crash leaves the previous schema intact.

Command line: `python -m kozyr.eventstore.migrations [upgrade|downgrade REVISION] [--url URL]`
(URL defaults to $KOZYR_DATABASE_URL).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from alembic import command
from alembic.config import Config
from sqlalchemy import text
from sqlalchemy.engine import Connection
from sqlalchemy.ext.asyncio import create_async_engine
from sqlalchemy.pool import NullPool

from kozyr.eventstore.urls import sqlalchemy_url

MIGRATION_LOCK_KEY = 0x6B6F7A79_72_6573  # "kozyr" "es": an arbitrary, fixed advisory lock id
"""The advisory lock id held while migrating (pg_advisory_xact_lock)."""

_AlembicCommand = Callable[[Config], None]

_SCRIPT_LOCATION = Path(__file__).resolve().parent


def alembic_config(url: str) -> Config:
    """An Alembic Config for the event store's scripts (no alembic.ini needed)."""
    config = Config()
    config.set_main_option("script_location", str(_SCRIPT_LOCATION))
    config.set_main_option("sqlalchemy.url", sqlalchemy_url(url).replace("%", "%%"))
    return config


async def migrate(database_url: str, revision: str = "head") -> None:
    """Upgrade the event store schema of `database_url` to `revision` (default: latest)."""
    await _run_locked(database_url, lambda config: command.upgrade(config, revision))


async def downgrade(database_url: str, revision: str = "base") -> None:
    """Downgrade the schema (tests and emergencies; `base` drops every event store table)."""
    await _run_locked(database_url, lambda config: command.downgrade(config, revision))


async def _run_locked(database_url: str, run: _AlembicCommand) -> None:
    engine = create_async_engine(sqlalchemy_url(database_url), poolclass=NullPool)
    try:
        async with engine.begin() as connection:
            await connection.execute(
                text("SELECT pg_advisory_xact_lock(:key)"), {"key": MIGRATION_LOCK_KEY}
            )
            await connection.run_sync(_run_with_connection, database_url, run)
    finally:
        await engine.dispose()


def _run_with_connection(connection: Connection, database_url: str, run: _AlembicCommand) -> None:
    config = alembic_config(database_url)
    config.attributes["connection"] = connection
    run(config)
