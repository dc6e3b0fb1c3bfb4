"""The clock while its NATS is gone: Heartbeat and GetPresence fail fast with UNAVAILABLE.

Both read and write the presence bucket. During an outage they used to wait out
nats-py's 5 s timeout and answer DEADLINE_EXCEEDED or INTERNAL ("nats: timeout"); now
a stopped server is refused at once (the client knows it is reconnecting) and a hung
one after `CALL_TIMEOUT_SECONDS`, as UNAVAILABLE BUS_UNAVAILABLE, which clients retry.
The clock needs no table service for these calls: its target is a free port.
"""

from __future__ import annotations

import os
import signal
import time
from collections.abc import AsyncIterator, Callable, Coroutine
from typing import Any

import grpc
import pytest

from kozyr.client import ClockClient
from kozyr.clock.service import REQUIRED_SETTINGS, ClockService
from kozyr.clock.settings import ClockSettings
from kozyr.infra import EmbeddedNats, free_port
from kozyr.runtime import Role
from kozyr.runtime.errors import error_details
from tests.integration.table.conftest import in_process_values
from tests.support.tables import token

PROMPTLY = 1.5
"""Seconds an answer may take during the outage: the bus timeout (1 s) and some slack
for a loaded machine; nats-py's own timeout was 5 s."""


@pytest.fixture
def nats_server(nats_factory: Callable[[], EmbeddedNats]) -> EmbeddedNats:
    return nats_factory()


@pytest.fixture
async def clock(nats_server: EmbeddedNats, subject_root: str) -> AsyncIterator[str]:
    values = in_process_values(nats_server.url, subject_root) | {
        "table_target": f"127.0.0.1:{free_port()}"
    }
    service = ClockService(ClockSettings.load(required=REQUIRED_SETTINGS, **values))
    port = await service.start()
    yield f"127.0.0.1:{port}"
    await service.stop(0)


def stop(server: EmbeddedNats) -> None:
    server.stop()


def freeze(server: EmbeddedNats) -> None:
    os.kill(server.pid, signal.SIGSTOP)  # connections stay open, nothing answers


async def answered_in(call: Coroutine[Any, Any, Any]) -> tuple[grpc.aio.AioRpcError, float]:
    started = time.monotonic()
    with pytest.raises(grpc.aio.AioRpcError) as failed:
        await call
    return failed.value, time.monotonic() - started


@pytest.mark.parametrize("outage", [stop, freeze], ids=["stopped", "frozen"])
async def test_heartbeat_and_presence_answer_unavailable_promptly(
    clock: str, nats_server: EmbeddedNats, outage: Callable[[EmbeddedNats], None]
) -> None:
    async with (
        ClockClient(clock, token("p-1"), retry=False) as player,
        ClockClient(clock, token("watcher", Role.SERVICE), retry=False) as watcher,
    ):
        assert (await player.heartbeat()).came_online
        assert await watcher.presence(["p-1"]) == {"p-1": True}
        outage(nats_server)
        try:
            for call in (player.heartbeat(), watcher.presence(["p-1"])):
                error, seconds = await answered_in(call)
                assert error.code() == grpc.StatusCode.UNAVAILABLE, error
                assert error_details(error).reason == "BUS_UNAVAILABLE"
                assert seconds < PROMPTLY
        finally:
            if nats_server.running:  # frozen: thawed, so the clock stops without waiting
                os.kill(nats_server.pid, signal.SIGCONT)
