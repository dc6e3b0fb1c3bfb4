"""`kozyr migrate`: bring the event store schema of KOZYR_DATABASE_URL up to date."""

from __future__ import annotations

import asyncio

import asyncpg
from sqlalchemy.exc import SQLAlchemyError

from kozyr.cli.problems import CliError
from kozyr.cli.tables import database_url, safe_url
from kozyr.eventstore import EventStoreError, migrate


def apply_migrations() -> str:
    """Run the migrations; the sentence to print, or CliError when the database refuses."""
    url = database_url()
    try:
        asyncio.run(migrate(url))
    except (OSError, SQLAlchemyError, EventStoreError, asyncpg.PostgresError) as err:
        reason = str(getattr(err, "orig", None) or err).splitlines()[0]
        raise CliError(f"cannot migrate the database at {safe_url(url)}: {reason}") from None
    return f"The event store schema of {safe_url(url)} is up to date."
