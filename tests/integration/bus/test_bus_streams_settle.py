"""A service's start outlives a JetStream that does not answer for a while
(`kozyr.bus.streams.ensure_stream`): the bots service once failed to start on one
`stream_info` timeout while a loaded 3-node cluster elected a new stream's leader. Here
the server is frozen (SIGSTOP) longer than a JetStream API call waits, then thawed."""

from __future__ import annotations

import asyncio
import os
import signal
from collections.abc import Callable

import nats
import pytest
from structlog.testing import capture_logs

from kozyr.bus.streams import EventStreamSpec, ensure_stream
from kozyr.infra import EmbeddedNats

pytestmark = pytest.mark.integration

API_SECONDS = 0.5
"""The JetStream context's wait for each API call (nats-py's default is 5 s)."""


async def test_a_stream_is_made_once_a_frozen_server_answers_again(
    nats_factory: Callable[[], EmbeddedNats], subject_root: str
) -> None:
    server = nats_factory()
    nc = await nats.connect(server.url)
    try:
        js = nc.jetstream(timeout=API_SECONDS)
        spec = EventStreamSpec("table", subject_root)
        os.kill(server.pid, signal.SIGSTOP)
        try:
            with capture_logs() as logs:
                making = asyncio.create_task(ensure_stream(js, spec, settle_seconds=30))
                async with asyncio.timeout(30):  # until a call has gone unanswered
                    while not any("did not answer" in e["event"] for e in logs):
                        assert not making.done(), "gave up while JetStream was silent"
                        await asyncio.sleep(0.05)
        finally:
            os.kill(server.pid, signal.SIGCONT)
        await asyncio.wait_for(making, 30)
        assert (await js.stream_info(spec.name)).config.subjects == spec.subjects
    finally:
        await nc.close()


async def test_it_gives_up_after_its_settle_time(
    nats_factory: Callable[[], EmbeddedNats], subject_root: str
) -> None:
    server = nats_factory()
    nc = await nats.connect(server.url)
    try:
        js = nc.jetstream(timeout=API_SECONDS)
        os.kill(server.pid, signal.SIGSTOP)
        try:
            with pytest.raises(nats.errors.TimeoutError):
                await ensure_stream(js, EventStreamSpec("table", subject_root), settle_seconds=1)
        finally:
            os.kill(server.pid, signal.SIGCONT)
    finally:
        await nc.close()
