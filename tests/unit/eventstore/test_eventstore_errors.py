"""Database failures become typed errors by SQLSTATE (kozyr.eventstore.dberrors), and
database URLs are accepted in both spellings (kozyr.eventstore.urls)."""

from __future__ import annotations

from typing import Any

import asyncpg
import pytest
from asyncpg.connect_utils import SessionAttribute, _parse_connect_dsn_and_args
from sqlalchemy.dialects.postgresql.asyncpg import dialect as asyncpg_dialect
from sqlalchemy.engine import make_url

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


@pytest.mark.parametrize(
    "url",
    [
        "postgresql://kozyr@pg-1:5432,pg-2:5433/kozyr?target_session_attrs=read-write",
        "postgresql+asyncpg://kozyr@/kozyr?host=pg-1:5432&host=pg-2:5433"
        "&target_session_attrs=read-write",
    ],
)
def test_several_hosts_reach_asyncpg_with_target_session_attrs(url: str) -> None:
    """A primary and its standby, in libpq's or SQLAlchemy's spelling: asyncpg gets
    both hosts (its own parser keeps only the last `?host=`) and connects to the
    writable one; SQLAlchemy's dialect gets both as well."""
    dsn = asyncpg_dsn(url)
    assert dsn == "postgresql://kozyr@pg-1:5432,pg-2:5433/kozyr?target_session_attrs=read-write"
    addresses, params = _parse_connect_dsn_and_args(dsn=dsn, **_NO_ARGUMENTS)
    assert addresses == [("pg-1", 5432), ("pg-2", 5433)]
    assert params.target_session_attrs == SessionAttribute.read_write
    dialect = asyncpg_dialect()  # type: ignore[no-untyped-call]
    _, arguments = dialect.create_connect_args(make_url(sqlalchemy_url(url)))  # type: ignore[no-untyped-call]
    assert arguments["host"] == ["pg-1", "pg-2"]
    assert arguments["port"] == [5432, 5433]
    assert arguments["target_session_attrs"] == "read-write"


_NO_ARGUMENTS: dict[str, Any] = dict.fromkeys(
    ["host", "port", "user", "password", "passfile", "database", "ssl", "service",
     "servicefile", "direct_tls", "server_settings", "target_session_attrs", "krbsrvname",
     "gsslib"]
)  # fmt: skip
