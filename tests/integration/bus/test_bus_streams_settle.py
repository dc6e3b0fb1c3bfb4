"""A service's start outlives a JetStream that does not answer for a while
(`kozyr.bus.settling`): the bots service once failed to start on one `stream_info`
timeout while a loaded 3-node cluster elected a new stream's leader. Here the server is
frozen (SIGSTOP) longer than a JetStream API call waits, then thawed: making a stream
and a consumer (what every service's start does), and the clock's key-value buckets,
waits, then succeeds; past its settle time it gives up with the error."""

from __future__ import annotations

import asyncio
import os
import signal
import traceback
from collections.abc import AsyncIterator, Callable, Coroutine
from typing import Any

import nats
import pytest
from nats.aio.client import Client
from nats.js import JetStreamContext

from kozyr.bus.consumers import DurableConsumer, ensure_consumer
from kozyr.bus.streams import EventStreamSpec, ensure_stream
from kozyr.clock.presence import PresenceBook
from kozyr.clock.seating import SeatIndex
from kozyr.infra import EmbeddedNats
from tests.support.logs import every_log

pytestmark = pytest.mark.integration

API_SECONDS = 0.5
"""The JetStream context's wait for each API call (nats-py's default is 5 s)."""

Making = Callable[[Client, JetStreamContext, str, float], Coroutine[Any, Any, bool]]


async def a_stream(_: Client, js: JetStreamContext, root: str, settle: float) -> bool:
    spec = EventStreamSpec("table", root)
    await ensure_stream(js, spec, settle_seconds=settle)
    return (await js.stream_info(spec.name)).config.subjects == spec.subjects


async def a_consumer(_: Client, js: JetStreamContext, root: str, settle: float) -> bool:
    spec = DurableConsumer(stream=EventStreamSpec("table", root).name, durable="settling")
    await ensure_consumer(js, spec, settle_seconds=settle)
    return bool((await js.consumer_info(spec.stream, spec.durable)).name == "settling")


async def a_presence_bucket(nc: Client, js: JetStreamContext, root: str, settle: float) -> bool:
    book = PresenceBook(nc, js, root, offline_after=30)
    await book.open(settle_seconds=settle)
    return (await js.stream_info(book.stream)).config.max_age == 30


async def a_seat_index(_: Client, js: JetStreamContext, root: str, settle: float) -> bool:
    index = SeatIndex(js, root)
    await index.open(settle_seconds=settle)
    return index.kv is not None


MAKINGS = pytest.mark.parametrize(
    "make",
    [a_stream, a_consumer, a_presence_bucket, a_seat_index],
    ids=["stream", "consumer", "presence-bucket", "seat-index"],
)


@pytest.fixture
async def frozen(
    nats_factory: Callable[[], EmbeddedNats], subject_root: str
) -> AsyncIterator[tuple[EmbeddedNats, Client, JetStreamContext]]:
    """A server of this test's own, its stream made (for the consumer), then frozen;
    thawed at the end whatever happened."""
    server = nats_factory()
    nc = await nats.connect(server.url)
    js = nc.jetstream(timeout=API_SECONDS)
    await ensure_stream(js, EventStreamSpec("table", subject_root))
    os.kill(server.pid, signal.SIGSTOP)
    assert server.running  # frozen, not gone: the client talks to this very process
    await _until_stopped(server.pid)
    try:
        yield server, nc, js
    finally:
        os.kill(server.pid, signal.SIGCONT)
        await nc.close()


@MAKINGS
async def test_made_once_a_frozen_server_answers_again(
    frozen: tuple[EmbeddedNats, Client, JetStreamContext], subject_root: str, make: Making
) -> None:
    server, nc, js = frozen
    with every_log() as logs:
        making = asyncio.create_task(make(nc, js, subject_root, 30))
        async with asyncio.timeout(30):  # until a call has gone unanswered
            while not any("did not answer" in e["event"] for e in logs):
                assert not making.done(), (
                    f"done while JetStream was silent: {making!r}; the server running: "
                    f"{server.running}; logged: {[e['event'] for e in logs]}; "
                    f"{_raised(making)}"
                )
                await asyncio.sleep(0.05)
    os.kill(server.pid, signal.SIGCONT)
    assert await asyncio.wait_for(making, 30)


@MAKINGS
async def test_it_gives_up_after_its_settle_time(
    frozen: tuple[EmbeddedNats, Client, JetStreamContext], subject_root: str, make: Making
) -> None:
    _, nc, js = frozen
    with pytest.raises(nats.errors.TimeoutError):
        await make(nc, js, subject_root, 1)


def _raised(task: asyncio.Task[bool]) -> str:
    """Where a finished task's error was raised (which call went unanswered)."""
    error = None if task.cancelled() else task.exception()
    return "".join(traceback.format_exception(error)) if error is not None else ""


async def _until_stopped(pid: int) -> None:
    """Until every thread of `pid` is stopped: SIGSTOP is only sent by `kill`, and on a
    loaded machine a server thread already running may still answer one request."""
    async with asyncio.timeout(10):  # polled: /proc tells no one when it changes
        while True:
            if all(_state(pid, thread) in "tT" for thread in os.listdir(f"/proc/{pid}/task")):
                return
            await asyncio.sleep(0.01)


def _state(pid: int, thread: str) -> str:
    """A thread's state letter in /proc (T: stopped by a signal)."""
    with open(f"/proc/{pid}/task/{thread}/stat") as stat:
        return stat.read().rsplit(")", 1)[1].split()[0]
