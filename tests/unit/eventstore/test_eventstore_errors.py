"""Database failures become typed errors by SQLSTATE (kozyr.eventstore.dberrors), and
database URLs are accepted in both spellings (kozyr.eventstore.urls)."""

from __future__ import annotations

import asyncpg
import pytest

from kozyr.eventstore.dberrors import translate, translate_errors
from kozyr.eventstore.errors import (
    ConcurrencyConflict,
    EventStoreError,
    SchemaNotMigrated,
    StoreUnavailable,
)
from kozyr.eventstore.urls import asyncpg_dsn, sqlalchemy_url


@pytest.mark.parametrize(
    "error",
    [
        asyncpg.AdminShutdownError("terminating connection due to administrator command"),
        asyncpg.CannotConnectNowError("the database system is starting up"),
        asyncpg.TooManyConnectionsError("too many clients"),
        asyncpg.ConnectionDoesNotExistError("closed"),
        asyncpg.InterfaceError("connection is closed"),
        asyncpg.InvalidPasswordError("password authentication failed"),
        asyncpg.InvalidCatalogNameError('database "kozyr" does not exist'),
        ConnectionRefusedError(111, "refused"),
        TimeoutError(),
    ],
)
def test_connection_failures_are_store_unavailable(error: Exception) -> None:
    assert isinstance(translate(error), StoreUnavailable)


def test_a_missing_table_means_the_schema_is_not_migrated() -> None:
    assert isinstance(translate(asyncpg.UndefinedTableError("no events")), SchemaNotMigrated)


def test_typed_errors_and_programming_errors_pass_through() -> None:
    assert translate(ConcurrencyConflict("table-1", 1, 2)) is None
    assert translate(ValueError("bug")) is None
    with pytest.raises(ValueError, match="bug"), translate_errors():
        raise ValueError("bug")


def test_translate_errors_chains_the_cause() -> None:
    with pytest.raises(StoreUnavailable) as raised, translate_errors():
        raise asyncpg.AdminShutdownError("bye")
    assert isinstance(raised.value.__cause__, asyncpg.AdminShutdownError)
    assert isinstance(raised.value, EventStoreError)


def test_database_urls_in_both_spellings() -> None:
    plain = "postgresql://kozyr:s%40cret@db:5432/kozyr"
    driver = "postgresql+asyncpg://kozyr:s%40cret@db:5432/kozyr"
    assert sqlalchemy_url(plain) == driver
    assert asyncpg_dsn(driver) == plain
    assert asyncpg_dsn(plain) == plain
    with pytest.raises(ValueError, match="PostgreSQL"):
        sqlalchemy_url("mysql://db/x")
