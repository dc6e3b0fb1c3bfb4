"""A hung PostgreSQL (SIGSTOPped): the store fails fast with StoreUnavailable, never
half-writes an append, and works again once the server resumes.

Issue 8, defect 6. The server here is this module's own (`EmbeddedPostgres`, frozen
and thawed by the tests), never the session's shared one. Assertions are about
outcomes; the only clock is a generous guard that fails a call still hanging long
after every timeout of the store should have ended it.
"""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import AsyncIterator, Awaitable, Iterator
from typing import TypeVar

import pytest

from kozyr.eventstore import NewEvent, PostgresEventStore, StoreUnavailable, migrate
from kozyr.infra import EmbeddedPostgres

T = TypeVar("T")
TIMEOUT_SECONDS = 1.0
"""Every timeout of the store under test (connect, pool acquire, statement)."""
HANG_GUARD_SECONDS = 30.0
"""Far beyond TIMEOUT_SECONDS: a call still waiting then is a call that hangs."""


@pytest.fixture(scope="module")
def postgres(tmp_path_factory: pytest.TempPathFactory) -> Iterator[EmbeddedPostgres]:
    server = EmbeddedPostgres(tmp_path_factory.mktemp("frozen-pg") / "data", durable=False)
    server.start()
    yield server
    server.stop()


@pytest.fixture
async def store(postgres: EmbeddedPostgres) -> AsyncIterator[PostgresEventStore]:
    url = postgres.url()
    await migrate(url)
    store = PostgresEventStore(
        url,
        max_pool_size=1,
        connect_timeout=TIMEOUT_SECONDS,
        acquire_timeout=TIMEOUT_SECONDS,
        statement_timeout=TIMEOUT_SECONDS,
    )
    await store.open()
    try:
        yield store
    finally:
        if not postgres.running:
            postgres.start()
        await store.close()


def events(*names: str) -> list[NewEvent]:
    return [NewEvent(type=name, data={"name": name}) for name in names]


async def unavailable(call: Awaitable[T]) -> StoreUnavailable:
    """The StoreUnavailable `call` ends with, well before the hang guard."""
    with pytest.raises(StoreUnavailable) as caught:
        async with asyncio.timeout(HANG_GUARD_SECONDS):
            await call
    return caught.value


async def until_back(store: PostgresEventStore, stream: str) -> None:
    """Wait for the thawed server to answer again (its first answers may be timeouts)."""
    async with asyncio.timeout(HANG_GUARD_SECONDS):
        while True:
            try:
                await store.head(stream)
                return
            except StoreUnavailable:
                await asyncio.sleep(0.1)


async def test_a_frozen_database_fails_calls_and_leaves_no_partial_append(
    postgres: EmbeddedPostgres, store: PostgresEventStore
) -> None:
    stream = f"table-{uuid.uuid4()}"
    await store.append(stream, 0, events("opened"), request_id="open")
    postgres.freeze()
    try:
        await unavailable(store.append(stream, 1, events("a", "b", "c"), request_id="move"))
        await unavailable(store.read(stream))
        # One connection in the pool: the second call waits for it, then gives up.
        both = await asyncio.gather(
            unavailable(store.read(stream)), unavailable(store.head(stream))
        )
        assert all(isinstance(error, StoreUnavailable) for error in both)
    finally:
        postgres.thaw()

    await until_back(store, stream)
    # The timed-out append is all or nothing in the log: either it reached the server
    # before the freeze and committed whole, or it left no row. Its retry settles it.
    logged = [event.type for event in await store.read(stream)]
    assert logged in (["opened"], ["opened", "a", "b", "c"])
    retried = await store.append(stream, 1, events("a", "b", "c"), request_id="move")
    assert [event.type for event in retried.events] == ["a", "b", "c"]
    assert [event.type for event in await store.read(stream)] == ["opened", "a", "b", "c"]
    report = await store.verify(stream)
    assert report.ok, report


async def test_a_cancelled_call_on_a_frozen_database_gives_its_connection_back(
    postgres: EmbeddedPostgres, store: PostgresEventStore
) -> None:
    """A caller that gives up (a gRPC deadline cancels its handler) must not leave the
    pool's only connection stuck in a statement the server will never answer."""
    stream = f"table-{uuid.uuid4()}"
    await store.append(stream, 0, events("opened"), request_id="open")
    postgres.freeze()
    try:
        abandoned = asyncio.ensure_future(
            store.append(stream, 1, events("a", "b"), request_id="move")
        )
        await asyncio.sleep(0.2)  # let it send its statement
        abandoned.cancel()
        with pytest.raises(asyncio.CancelledError):
            async with asyncio.timeout(HANG_GUARD_SECONDS):
                await abandoned
    finally:
        postgres.thaw()

    await until_back(store, stream)
    retried = await store.append(stream, 1, events("a", "b"), request_id="move")
    assert [event.type for event in retried.events] == ["a", "b"]
    assert [event.type for event in await store.read(stream)] == ["opened", "a", "b"]
    assert (await store.verify(stream)).ok
