"""Alembic environment for the event store (online, offline, and shared-connection runs).

`kozyr.eventstore.migrations.migrate(url)` passes its own connection in
`config.attributes["connection"]` (already inside a transaction holding the migration
advisory lock); the `alembic` command line gets a URL and runs through an async engine.
"""

from __future__ import annotations

import asyncio

from alembic import context
from sqlalchemy.engine import Connection
from sqlalchemy.ext.asyncio import create_async_engine
from sqlalchemy.pool import NullPool

from kozyr.eventstore.schema import ALEMBIC_VERSION_TABLE, metadata


def _run_on(connection: Connection) -> None:
    context.configure(
        connection=connection,
        target_metadata=metadata,
        version_table=ALEMBIC_VERSION_TABLE,
    )
    with context.begin_transaction():
        context.run_migrations()


async def _run_with_url(url: str) -> None:
    engine = create_async_engine(url, poolclass=NullPool)
    try:
        async with engine.begin() as connection:
            await connection.run_sync(_run_on)
    finally:
        await engine.dispose()


def _run_offline(url: str) -> None:
    context.configure(
        url=url,
        target_metadata=metadata,
        version_table=ALEMBIC_VERSION_TABLE,
        literal_binds=True,
    )
    with context.begin_transaction():
        context.run_migrations()


def _main() -> None:
    shared = context.config.attributes.get("connection")
    url = context.config.get_main_option("sqlalchemy.url") or ""
    if context.is_offline_mode():
        _run_offline(url)
    elif isinstance(shared, Connection):
        _run_on(shared)
    else:
        asyncio.run(_run_with_url(url))


_main()
