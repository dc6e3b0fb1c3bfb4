"""`kozyr migrate`: bring the event store schema of KOZYR_DATABASE_URL up to date."""

from __future__ import annotations

import asyncio

import asyncpg
from sqlalchemy.exc import SQLAlchemyError

from kozyr.cli.problems import CliError
from kozyr.cli.tables import database_url, safe_url
from kozyr.eventstore import EventStoreError, PostgresEventStore, migrate
from kozyr.table.adapters.directory import TableDirectory


def apply_migrations() -> str:
    """Run the migrations, then make sure the table directory (the read model of
    ListTables, kozyr.table.adapters.directory) exists; the sentence to print, or CliError when
    the database refuses."""
    url = database_url()
    try:
        asyncio.run(migrate(url))
        rebuilt = asyncio.run(_ensure_directory(url))
    except (OSError, SQLAlchemyError, EventStoreError, asyncpg.PostgresError) as err:
        reason = str(getattr(err, "orig", None) or err).splitlines()[0]
        raise CliError(f"cannot migrate the database at {safe_url(url)}: {reason}") from None
    done = f"The event store schema of {safe_url(url)} is up to date"
    if rebuilt:
        return f"{done}; the table directory was made from the log ({rebuilt} tables)."
    return f"{done}, and so is its table directory."


async def _ensure_directory(url: str) -> int:
    store = PostgresEventStore(url, max_pool_size=1, application_name="kozyr-cli")
    directory = TableDirectory(url, store, pool_size=1)
    try:
        return await directory.ensure()
    finally:
        await directory.close()
        await store.close()
