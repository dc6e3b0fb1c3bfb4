"""Dependency outages at the edge (kozyr.runtime.outages): which errors are a store
outage (UNAVAILABLE, the same in every service), and how health follows one."""

from __future__ import annotations

import asyncio

import asyncpg
import grpc
import pytest
from sqlalchemy.exc import InterfaceError, OperationalError

from kozyr.eventstore.errors import (
    ConcurrencyConflict,
    SchemaNotMigrated,
    StoreUnavailable,
)
from kozyr.runtime.outages import (
    SCHEMA_NOT_MIGRATED,
    STORE_UNAVAILABLE,
    OutageWatch,
    dependency_outage,
    store_unavailable,
)
from kozyr.texts import LANGUAGES

_LOST = asyncpg.ConnectionDoesNotExistError("connection was closed in the middle of operation")


@pytest.mark.parametrize(
    "error",
    [
        StoreUnavailable("database unreachable"),
        _LOST,  # a raw driver error the store did not translate
        asyncpg.CannotConnectNowError("the database system is starting up"),
        asyncpg.QueryCanceledError("canceling statement due to statement timeout"),
        ConnectionRefusedError(111, "Connection refused"),
        TimeoutError(),  # a pool's or a connection's timeout
        OperationalError("SELECT 1", None, _LOST),
        InterfaceError("SELECT 1", None, asyncpg.InterfaceError("connection is closed")),
    ],
    ids=lambda error: type(error).__name__,
)
def test_store_outages_are_unavailable_with_texts_in_every_language(error: Exception) -> None:
    outage = dependency_outage(error)
    assert outage is not None
    assert outage.code == grpc.StatusCode.UNAVAILABLE
    assert outage.reason == STORE_UNAVAILABLE
    assert set(outage.messages) == set(LANGUAGES)


def test_a_missing_schema_is_unavailable_too() -> None:
    outage = dependency_outage(SchemaNotMigrated("tables missing"))
    assert outage is not None
    assert outage.reason == SCHEMA_NOT_MIGRATED
    assert set(outage.messages) == set(LANGUAGES)


@pytest.mark.parametrize(
    "error",
    [ValueError("a bug"), KeyError("x"), ConcurrencyConflict("s", 1, 2)],
    ids=lambda error: type(error).__name__,
)
def test_other_errors_are_no_outage(error: Exception) -> None:
    """A bug stays a bug (INTERNAL at the edge); a typed store error is the handler's."""
    assert dependency_outage(error) is None


async def test_health_turns_not_serving_until_the_probe_passes() -> None:
    reports: list[bool] = []
    serving_again = asyncio.Event()
    attempts = 0

    async def probe() -> None:
        nonlocal attempts
        attempts += 1
        if attempts < 3:
            raise StoreUnavailable("still down")

    async def report(serving: bool) -> None:
        reports.append(serving)
        if serving:
            serving_again.set()

    watch = OutageWatch(probe, report, first_delay=0.001, last_delay=0.002)
    watch.outage(store_unavailable())
    watch.outage(store_unavailable())  # the same outage met by another call
    assert watch.recovering
    async with asyncio.timeout(10):
        await serving_again.wait()
    assert reports == [False, True]
    assert attempts == 3
    await watch.stop()
