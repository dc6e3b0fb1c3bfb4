"""What every test of the clock needs of NATS, wherever the clock runs (in the test's
process, or as a service process): a server that keeps message schedules, and removing
the clock's streams of a test's subject root afterwards (the session's server is shared
by every test of the run)."""

from __future__ import annotations

import contextlib

import nats
from nats.js.errors import NotFoundError

from kozyr.bus.schedules import schedule_stream_name
from kozyr.bus.streams import jetstream_name
from kozyr.clock.presence import presence_bucket

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
