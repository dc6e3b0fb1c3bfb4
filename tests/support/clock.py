"""What every test of the clock needs, wherever the clock runs (in the test's process, or
as a service process): a NATS server that keeps message schedules, removing the clock's
streams of a test's subject root afterwards (the session's server is shared by every
test of the run), and players whose app heartbeats while it is open."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator

import nats
from nats.js.errors import NotFoundError

from kozyr.bus.schedules import schedule_stream_name
from kozyr.bus.streams import jetstream_name
from kozyr.client import ClockClient
from kozyr.clock.presence import presence_bucket
from kozyr.runtime.auth import Role
from tests.support.tables import token

SCHEDULES_SINCE = (2, 12)
"""The nats-server version that keeps JetStream message schedules (the clock's timers)."""


async def server_version(url: str) -> tuple[int, ...]:
    """(major, minor) of the NATS server at `url`."""
    nc = await nats.connect(url)
    try:
        version = str(nc._server_info.get("version", "0.0.0"))
    finally:
        await nc.close()
    return tuple(int(part) for part in version.split("-")[0].split(".")[:2])


async def delete_clock_streams(nats_url: str, root: str) -> None:
    """The clock's timers, presence and seat index of subject root `root`, gone."""
    nc = await nats.connect(nats_url)
    try:
        js = nc.jetstream()
        names = (
            schedule_stream_name(root),
            f"KV_{presence_bucket(root)}",
            f"KV_{jetstream_name('clock_seats', root)}",
        )
        for name in names:
            with contextlib.suppress(NotFoundError):
                await js.delete_stream(name)
    finally:
        await nc.close()


HEARTBEAT_EVERY = 0.25
"""Seconds between the heartbeats of `beating`: well within the shortest offline_after
the tests set (1 s)."""


@contextlib.asynccontextmanager
async def beating(clock_target: str, player: str) -> AsyncIterator[None]:
    """The player's app is open: he heartbeats every `HEARTBEAT_EVERY` until the block
    ends (then he falls silent, and goes offline after offline_after)."""

    async def beat() -> None:
        async with ClockClient(clock_target, token(player)) as me:
            while True:
                await me.heartbeat()
                await asyncio.sleep(HEARTBEAT_EVERY)

    task = asyncio.create_task(beat())
    try:
        yield
    finally:
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task


async def until_presence(clock_target: str, online: dict[str, bool], limit: float = 30) -> None:
    """Wait (at most `limit` seconds) until GetPresence answers `online`."""
    async with ClockClient(clock_target, token("presence-check", Role.SERVICE)) as asker:
        async with asyncio.timeout(limit):
            while True:
                if await asker.presence(list(online)) == online:
                    return
                await asyncio.sleep(0.05)
