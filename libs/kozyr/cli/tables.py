"""Reading one table's stream from the event store, for `kozyr replay` and `kozyr verify`
(and writing the dispute viewer's page of it).

Every failure a moderator can meet here (no configured database, a wrong URL, a
database that is down or not migrated, a table id that names nothing) becomes a
`CliError` that says what to do about it.
"""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path

import asyncpg
from sqlalchemy.engine import make_url

from kozyr.cli.problems import CliError
from kozyr.eventstore import (
    EventStoreError,
    PostgresEventStore,
    RecordedEvent,
    SchemaNotMigrated,
    StoreUnavailable,
    VerifyReport,
)
from kozyr.runtime.settings import SettingsError, load_settings
from kozyr.table.adapters.repository import STREAM_PREFIX, stream_of


@dataclass(frozen=True, slots=True)
class TableStream:
    """A table's events as read, with the store's hash-chain report of the same stream."""

    table_id: str
    events: list[RecordedEvent]
    chain: VerifyReport


def parse_table_id(text: str) -> str:
    """A table id as printed anywhere: the UUID, or its stream name "table-<uuid>"."""
    raw = text.strip().removeprefix(STREAM_PREFIX)
    try:
        return str(uuid.UUID(raw))
    except ValueError:
        raise CliError(
            f"{text!r} is not a table id (expected a UUID such as "
            "5cf7ccbf-4359-5af3-99f0-274947348cd8, or table-<uuid>)"
        ) from None


def database_url() -> str:
    """KOZYR_DATABASE_URL, validated (CliError naming the variable and the problem)."""
    try:
        url = load_settings(required={"database_url"}).database_url
    except SettingsError as err:
        raise CliError(str(err)) from None
    assert url is not None
    return url


def safe_url(url: str) -> str:
    """The URL without its password, for messages."""
    return make_url(url).render_as_string(hide_password=True)


@asynccontextmanager
async def opened_store(url: str) -> AsyncIterator[PostgresEventStore]:
    """A store with a one-connection pool; store errors turned into clear CliErrors."""
    store = PostgresEventStore(url, max_pool_size=1, application_name="kozyr-cli")
    try:
        yield store
    except StoreUnavailable as err:
        raise CliError(f"cannot use the database at {safe_url(url)}: {err}") from None
    except SchemaNotMigrated:
        raise CliError(
            f"the database at {safe_url(url)} has no event store tables: run `kozyr migrate`"
        ) from None
    except (EventStoreError, asyncpg.PostgresError) as err:
        # e.g. a database that does not exist, or a refused login
        raise CliError(f"the database at {safe_url(url)} refused: {err}") from None
    finally:
        await store.close()


async def read_table(url: str, table_id: str) -> TableStream:
    """The table's whole stream; CliError when no such table exists."""
    stream = stream_of(table_id)
    async with opened_store(url) as store:
        chain = await store.verify(stream)
        # The events the chain walked (an append landing in between is left out).
        events = await store.read(stream, limit=chain.checked) if chain.checked else []
    if not events and chain.version == 0:
        raise CliError(f"there is no table {table_id} in the database at {safe_url(url)}")
    return TableStream(table_id, events, chain)


def write_page(path: Path, page: str) -> str:
    """Write the dispute viewer's page to `path`; CliError when it cannot be written."""
    try:
        path.write_text(page, encoding="utf-8")
    except OSError as err:
        raise CliError(f"cannot write the page to {path}: {err.strerror or err}") from None
    return f"wrote {path} ({len(page.encode()):,} bytes)"
