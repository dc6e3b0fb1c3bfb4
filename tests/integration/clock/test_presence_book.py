"""The presence bucket under contention, on a real NATS KV bucket: heartbeats of one
player sent at once through several clock replicas (a `PresenceBook` each, on its own
connection) race on his key's compare-and-set. However hard they race, every heartbeat
is recorded (a lost race is retried, never given up), and a returning player is brought
online by exactly one of them — whether his key was never written, was expired by the
server (its MaxAge marker) or was deleted (a delete marker, as `nats kv del` leaves).
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Awaitable, Callable

import nats
import pytest

from kozyr.clock.presence import PresenceBook
from kozyr.runtime.errors import Unavailable
from kozyr.runtime.outages import BUS_UNAVAILABLE
from tests.integration.bus.test_bus_relay import wait_until
from tests.support.clock import delete_clock_streams

pytestmark = pytest.mark.integration

REPLICAS = 3
HEARTBEATS = 30
"""Heartbeats sent at once: far more than a few rounds of lost races for most of them."""
PLAYER = "ana"


@contextlib.asynccontextmanager
async def replicas(url: str, root: str, offline_after: float) -> AsyncIterator[list[PresenceBook]]:
    """`REPLICAS` presence books on one bucket, each on a connection of its own."""
    connections = [await nats.connect(url) for _ in range(REPLICAS)]
    try:
        books = [PresenceBook(nc, nc.jetstream(), root, offline_after) for nc in connections]
        for book in books:
            await book.open()
        yield books
    finally:
        for nc in connections:
            await nc.close()
        await delete_clock_streams(url, root)


async def last_sequence(url: str, book: PresenceBook) -> int:
    """The bucket's stream's last sequence: one more for every write to it."""
    nc = await nats.connect(url)
    try:
        return int((await nc.jetstream().stream_info(book.stream)).state.last_seq)
    finally:
        await nc.close()


async def _race(books: list[PresenceBook]) -> list[bool]:
    """`HEARTBEATS` heartbeats of one player at once, spread over the replicas."""
    return await asyncio.gather(
        *(books[i % len(books)].heartbeat(PLAYER) for i in range(HEARTBEATS))
    )


async def _never_seen(book: PresenceBook) -> None:
    """His key was never written."""


async def _expired(book: PresenceBook) -> None:
    """He was online; the server expired his key (max age `offline_after`) and left its
    MaxAge marker."""
    assert await book.heartbeat(PLAYER)

    async def offline() -> bool:
        return not await book.is_online(PLAYER)

    await wait_until(offline, "the server expires his key", limit=30)


async def _deleted(book: PresenceBook) -> None:
    """He was online; his key was deleted (its last message is the delete marker)."""
    assert await book.heartbeat(PLAYER)
    await book.kv.delete(PLAYER)
    assert not await book.is_online(PLAYER)


@pytest.mark.parametrize(
    ("offline_after", "gone"),
    [(60.0, _never_seen), (2.0, _expired), (60.0, _deleted)],  # 2 s: 20 times a race
    ids=["never-seen", "expired", "deleted"],
)
async def test_racing_heartbeats_bring_a_returning_player_online_exactly_once(
    clock_nats_url: str,
    subject_root: str,
    offline_after: float,
    gone: Callable[[PresenceBook], Awaitable[None]],
) -> None:
    async with replicas(clock_nats_url, subject_root, offline_after) as books:
        await gone(books[0])
        before = await last_sequence(clock_nats_url, books[0])
        came_online = await _race(books)
        written = await last_sequence(clock_nats_url, books[0]) - before
        assert came_online.count(True) == 1, f"{came_online.count(True)} announced his return"
        assert written == HEARTBEATS, "every heartbeat is recorded, none given up"
        assert await books[1].is_online(PLAYER)


async def test_a_heartbeat_that_cannot_be_recorded_in_time_is_a_bus_outage(
    clock_nats_url: str, subject_root: str
) -> None:
    """A heartbeat whose compare-and-set does not succeed within its limit (only a bus
    that stopped answering does that; a zero limit stands for it here) is refused as
    `UNAVAILABLE BUS_UNAVAILABLE`, which clients retry — not an internal error."""
    nc = await nats.connect(clock_nats_url)
    try:
        book = PresenceBook(nc, nc.jetstream(), subject_root, 60.0, heartbeat_seconds=0.0)
        await book.open()
        with pytest.raises(Unavailable) as refused:
            await book.heartbeat(PLAYER)
        assert refused.value.reason == BUS_UNAVAILABLE
        assert not await book.is_online(PLAYER), "nothing was recorded"
    finally:
        await nc.close()
        await delete_clock_streams(clock_nats_url, subject_root)
