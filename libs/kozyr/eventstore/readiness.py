"""Is a database migrated? The event store's tables, looked up without touching them.

A service started before its migration has run (an empty database, a new table not yet
created) would answer every call with a failed statement. It asks `missing_tables(url)`
at start-up and reports NOT_SERVING until the answer is empty; a call that reaches the
store meanwhile fails with `SchemaNotMigrated` (SQLSTATE 42P01).
"""

from __future__ import annotations

import asyncio
from typing import Final

import structlog
from asyncpg import connect

from kozyr.eventstore.dberrors import translate_errors
from kozyr.eventstore.errors import StoreUnavailable
from kozyr.eventstore.schema import metadata
from kozyr.eventstore.urls import asyncpg_dsn

EXPECTED_TABLES: Final = tuple(sorted(metadata.tables))
"""Every table `kozyr.eventstore.schema` describes (the migrations create them)."""

_MISSING: Final = """
SELECT coalesce(array_agg(name ORDER BY name), '{}')
  FROM unnest($1::text[]) AS expected(name)
 WHERE to_regclass(quote_ident(name)) IS NULL
"""
"""$1 table names: those that the connection's search_path does not find."""


async def missing_tables(database_url: str, *, wait_seconds: float = 5.0) -> tuple[str, ...]:
    """The event store tables `database_url` lacks (empty: migrated).

    One short connection of its own, so that a check never waits for (or holds) a
    connection of the store's pool. Raises `StoreUnavailable` when the database cannot
    be reached: that is not an answer to the question.
    """
    with translate_errors():
        connection = await connect(
            asyncpg_dsn(database_url),
            timeout=wait_seconds,
            server_settings={"application_name": "kozyr-schema-check"},
        )
        try:
            missing = await connection.fetchval(
                _MISSING, list(EXPECTED_TABLES), timeout=wait_seconds
            )
        finally:
            await connection.close()
    return tuple(missing)


async def until_migrated(database_url: str, *, interval: float = 2.0) -> None:
    """Return once `database_url` is reachable and migrated, saying once that it waits.

    For a service that cannot serve anything before its state is read (matchmaking
    folds its lobby at start): started before its migration job, or before PostgreSQL,
    it waits instead of crashing and being restarted in a loop."""
    said = False
    while True:
        try:
            missing: tuple[str, ...] | None = await missing_tables(database_url)
        except StoreUnavailable:
            missing = None
        if missing == ():
            return
        if not said:
            structlog.get_logger(__name__).warning(
                "waiting for the database to be reachable and migrated (kozyr migrate)",
                missing_tables=list(missing) if missing is not None else "unreachable",
            )
            said = True
        await asyncio.sleep(interval)
