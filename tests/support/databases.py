"""Databases of their own for tests that run more than one service, each service on a
database of its own as deployed (the table's is the `database_url` fixture)."""

from __future__ import annotations

import contextlib
import uuid
from collections.abc import AsyncIterator

import asyncpg

from kozyr.infra import Infrastructure, libpq_dsn


@contextlib.asynccontextmanager
async def fresh_database(infra: Infrastructure) -> AsyncIterator[str]:
    """A new empty database (for module-scoped games, which cannot use `database_url`,
    and for a second service beside the table's); dropped after."""
    name = f"e2e_{uuid.uuid4().hex[:16]}"
    admin = await asyncpg.connect(libpq_dsn(infra.database_url))
    try:
        await admin.execute(f'CREATE DATABASE "{name}"')
    finally:
        await admin.close()
    try:
        yield infra.database_url_for(name)
    finally:
        admin = await asyncpg.connect(libpq_dsn(infra.database_url))
        try:
            await admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        finally:
            await admin.close()
