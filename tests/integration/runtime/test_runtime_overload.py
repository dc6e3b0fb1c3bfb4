"""A burst of new calls from other processes: refused with codes clients retry, never
CANCELLED, and the Python client's retry policy turns the refusals into successes.
And the admission limits count server streams (a WatchTable) and unary calls apart:
either limit reached refuses its own kind only.

Issue 8, defect 5. grpc core cancels (CANCELLED, which clients do not retry) the calls
of a burst that outgrow its queue of calls not yet taken by the application; the
server now keeps a queue large enough for Python to answer each call, and answers
what it cannot take with RESOURCE_EXHAUSTED. The server here holds its whole
concurrency limit with calls that wait until the test releases them, so every call of
the burst meets a full server — deterministically, whatever the machine's speed.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import sys
from collections import Counter
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import grpc
import pytest
from prometheus_client import REGISTRY

from kozyr.api.table.v1 import table_service_pb2
from kozyr.runtime.errors import error_details
from kozyr.runtime.interceptors import AuthPolicy
from kozyr.runtime.server import GrpcServer, ServiceSpec
from kozyr.runtime.settings import load_settings

BURST_CLIENT = Path(__file__).with_name("burst_client.py")
PROBE_SERVICE = "kozyr.testing.v1.OverloadProbe"
HELD_CALLS = 8
"""The server's concurrency limit, all taken by Hold calls during a burst."""
HELD_STREAMS = 2
"""The server's limit of streams at once (another number than HELD_CALLS: limits that
were mixed up would show)."""
PROCESSES = 2
CALLS_PER_PROCESS = 1_500
HANG_GUARD_SECONDS = 120
"""Only protects the suite from a hung process; nothing here is about speed."""


@dataclass
class Probe:
    """Hold: waits until released (takes a slot); Echo: answers at once; Watch: a server
    stream like WatchTable, which sends one message, then waits until released."""

    release: asyncio.Event = field(default_factory=asyncio.Event)
    all_held: asyncio.Event = field(default_factory=asyncio.Event)
    held: int = 0

    async def hold(self, request: bytes, context: Any) -> bytes:
        self.held += 1
        if self.held == HELD_CALLS:
            self.all_held.set()
        await self.release.wait()
        return b"held"

    async def echo(self, request: bytes, context: Any) -> bytes:
        return b"echo"

    async def watch(self, request: bytes, context: Any) -> AsyncIterator[bytes]:
        yield b"watching"
        await self.release.wait()

    def spec(self) -> ServiceSpec:
        def register(server: grpc.aio.Server) -> None:
            handlers = {
                "Hold": grpc.unary_unary_rpc_method_handler(self.hold),
                "Echo": grpc.unary_unary_rpc_method_handler(self.echo),
                "Watch": grpc.unary_stream_rpc_method_handler(self.watch),
            }
            server.add_generic_rpc_handlers(
                [grpc.method_handlers_generic_handler(PROBE_SERVICE, handlers)]
            )

        return ServiceSpec(PROBE_SERVICE, register)


@dataclass
class Running:
    server: GrpcServer
    probe: Probe
    target: str


@pytest.fixture
async def running() -> AsyncIterator[Running]:
    settings = load_settings(
        grpc_host="127.0.0.1",
        grpc_port=0,
        grpc_max_concurrent_calls=HELD_CALLS,
        grpc_max_concurrent_streams=HELD_STREAMS,
        log_level="WARNING",
    )
    probe = Probe()
    server = GrpcServer(settings, [probe.spec()], auth=AuthPolicy(everything_public=True))
    port = await server.start()
    yield Running(server, probe, f"127.0.0.1:{port}")
    probe.release.set()
    await server.stop(0)


async def hold_every_slot(running: Running, channel: grpc.aio.Channel) -> list[Any]:
    """Start HELD_CALLS Hold calls and return once the server is running all of them."""
    running.probe.release = asyncio.Event()
    running.probe.all_held = asyncio.Event()
    running.probe.held = 0
    hold = channel.unary_unary(f"/{PROBE_SERVICE}/Hold")
    calls = [asyncio.ensure_future(hold(b"")) for _ in range(HELD_CALLS)]
    async with asyncio.timeout(HANG_GUARD_SECONDS):
        await running.probe.all_held.wait()
    return calls


async def burst(target: str, *, retry: bool) -> Counter[str]:
    """PROCESSES client processes, each firing CALLS_PER_PROCESS Echo calls at once."""
    args = [str(BURST_CLIENT), target, f"/{PROBE_SERVICE}/Echo", str(CALLS_PER_PROCESS)]
    if retry:
        args += ["--retry", PROBE_SERVICE]
    processes = [
        await asyncio.create_subprocess_exec(sys.executable, *args, stdout=asyncio.subprocess.PIPE)
        for _ in range(PROCESSES)
    ]
    codes: Counter[str] = Counter()
    async with asyncio.timeout(HANG_GUARD_SECONDS):
        for process in processes:
            out, _ = await process.communicate()
            assert process.returncode == 0
            codes.update(json.loads(out))
    return codes


def refused_echoes() -> float:
    labels = {"grpc_service": PROBE_SERVICE, "grpc_method": "Echo"}
    value = REGISTRY.get_sample_value(
        "kozyr_grpc_server_handled_total", {**labels, "grpc_code": "RESOURCE_EXHAUSTED"}
    )
    return value or 0.0


async def release_after_a_refusal(running: Running, refused_before: float) -> None:
    """Free the server's slots as soon as the burst has met the full server once."""
    while refused_echoes() <= refused_before:  # noqa: ASYNC110 — a counter has no event
        await asyncio.sleep(0.005)
    running.probe.release.set()


async def test_a_burst_on_a_full_server_is_refused_with_resource_exhausted(
    running: Running,
) -> None:
    async with grpc.aio.insecure_channel(running.target) as channel:
        held = await hold_every_slot(running, channel)
        codes = await burst(running.target, retry=False)
        running.probe.release.set()
        assert [await call for call in held] == [b"held"] * HELD_CALLS
    assert codes == {"RESOURCE_EXHAUSTED": PROCESSES * CALLS_PER_PROCESS}, codes


async def test_the_client_retry_policy_turns_refusals_into_successes(running: Running) -> None:
    async with grpc.aio.insecure_channel(running.target) as channel:
        held = await hold_every_slot(running, channel)
        refused_before = refused_echoes()
        releaser = asyncio.ensure_future(release_after_a_refusal(running, refused_before))
        codes = await burst(running.target, retry=True)
        releaser.cancel()
        running.probe.release.set()
        assert [await call for call in held] == [b"held"] * HELD_CALLS
    assert refused_echoes() > refused_before, "the burst met a full server"
    assert codes == {"OK": PROCESSES * CALLS_PER_PROCESS}, codes


async def test_a_burst_that_outgrows_grpc_default_queue_still_reaches_the_handlers(
    running: Running,
) -> None:
    """No slot held: each call of the burst is answered, none cancelled by grpc's queue."""
    async with grpc.aio.insecure_channel(running.target):
        codes = await burst(running.target, retry=False)
    assert set(codes) <= {"OK", "RESOURCE_EXHAUSTED"}, codes
    assert "CANCELLED" not in codes


async def server_busy(call: Any) -> None:
    """The call (a unary call's answer, or a stream's first message) is refused as
    RESOURCE_EXHAUSTED SERVER_BUSY."""
    with pytest.raises(grpc.aio.AioRpcError) as caught:
        async with asyncio.timeout(HANG_GUARD_SECONDS):
            await call
    assert caught.value.code() == grpc.StatusCode.RESOURCE_EXHAUSTED, caught.value
    assert error_details(caught.value).reason == "SERVER_BUSY"


@contextlib.contextmanager
def cancelled_at_the_end(streams: list[Any]) -> Iterator[list[Any]]:
    try:
        yield streams
    finally:
        for stream in streams:
            stream.cancel()


async def test_a_full_stream_limit_refuses_streams_and_still_admits_unary_calls(
    running: Running,
) -> None:
    watch_table = table_service_pb2.DESCRIPTOR.services_by_name["TableService"].methods_by_name[
        "WatchTable"
    ]
    assert (watch_table.client_streaming, watch_table.server_streaming) == (False, True), (
        "Watch has WatchTable's shape: one request, a stream of responses"
    )
    async with grpc.aio.insecure_channel(running.target) as channel:
        watch = channel.unary_stream(f"/{PROBE_SERVICE}/Watch")
        echo = channel.unary_unary(f"/{PROBE_SERVICE}/Echo")
        with cancelled_at_the_end([watch(b"") for _ in range(HELD_STREAMS)]) as streams:
            async with asyncio.timeout(HANG_GUARD_SECONDS):  # each admitted and running
                assert [await s.read() for s in streams] == [b"watching"] * HELD_STREAMS
            with cancelled_at_the_end([watch(b"")]) as [another]:
                await server_busy(another.read())
            assert await echo(b"") == b"echo", "a unary call is no stream"


async def test_a_full_unary_limit_refuses_unary_calls_and_still_admits_streams(
    running: Running,
) -> None:
    async with grpc.aio.insecure_channel(running.target) as channel:
        watch = channel.unary_stream(f"/{PROBE_SERVICE}/Watch")
        echo = channel.unary_unary(f"/{PROBE_SERVICE}/Echo")
        held = await hold_every_slot(running, channel)
        await server_busy(echo(b""))
        with cancelled_at_the_end([watch(b"") for _ in range(HELD_STREAMS)]) as streams:
            async with asyncio.timeout(HANG_GUARD_SECONDS):
                assert [await s.read() for s in streams] == [b"watching"] * HELD_STREAMS
        running.probe.release.set()
        assert [await call for call in held] == [b"held"] * HELD_CALLS
