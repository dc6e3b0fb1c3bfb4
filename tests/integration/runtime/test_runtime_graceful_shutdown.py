"""SIGTERM/SIGINT on a real service process: NOT_SERVING first, calls in flight finish,
calls arriving meanwhile get UNAVAILABLE (never CANCELLED), exit 0."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import sys
from collections import Counter
from collections.abc import AsyncIterator
from pathlib import Path

import grpc
import pytest
from grpc_health.v1 import health_pb2, health_pb2_grpc

from kozyr.api.common.v1 import cards_pb2
from kozyr.runtime.errors import error_details

SCRIPT = Path(__file__).with_name("shutdown_probe_server.py")
PROBE_SERVICE = "kozyr.testing.v1.ShutdownProbe"
GRACE_SECONDS = 120
"""Far beyond what the tests take: no test waits for it (the calls held through shutdown
are released by the test, and the server then stops once quiet), and a grace that ended
during the racing calls would stop the server under them — grpc cancels what is in
flight then (CANCELLED), as it must. With 5 s, a loaded machine (load average 8–10)
spent longer than that on the 1,000 racing calls and saw 4–5 of them CANCELLED; a
0.3 s grace reproduces it on a quiet one."""
HANG_GUARD_SECONDS = GRACE_SECONDS + 60
"""Only protects the suite from a hung process; the assertions are about order, not speed."""


class ProbeProcess:
    def __init__(self, process: asyncio.subprocess.Process, stderr: Path) -> None:
        self.process = process
        self.stderr = stderr

    async def expect_line(self, expected_prefix: str) -> str:
        assert self.process.stdout is not None
        line = await asyncio.wait_for(self.process.stdout.readline(), HANG_GUARD_SECONDS)
        text = line.decode().strip()
        assert text.startswith(expected_prefix), (text, self.stderr.read_text())
        return text


@pytest.fixture
async def probe(tmp_path: Path) -> AsyncIterator[ProbeProcess]:
    env = {
        **os.environ,
        "KOZYR_GRPC_HOST": "127.0.0.1",
        "KOZYR_GRPC_PORT": "0",
        "KOZYR_JWT_KEY": "graceful-shutdown-test-secret-0123456789",
        "KOZYR_SHUTDOWN_GRACE_SECONDS": str(GRACE_SECONDS),
        "KOZYR_SERVICE_NAME": "shutdown-probe",
    }
    stderr = tmp_path / "stderr.log"
    with stderr.open("wb") as err:
        process = await asyncio.create_subprocess_exec(
            sys.executable,
            str(SCRIPT),
            env=env,
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=err,
        )
    try:
        yield ProbeProcess(process, stderr)
    finally:
        if process.returncode is None:
            process.kill()
            await process.wait()


def probe_method(channel: grpc.aio.Channel, name: str) -> grpc.aio.UnaryUnaryMultiCallable:
    return channel.unary_unary(
        f"/{PROBE_SERVICE}/{name}",
        request_serializer=cards_pb2.Card.SerializeToString,
        response_deserializer=cards_pb2.Card.FromString,
    )


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT])
async def test_a_signal_shuts_the_service_down_gracefully(
    probe: ProbeProcess, sig: signal.Signals
) -> None:
    port = int((await probe.expect_line("PORT ")).split()[1])
    async with grpc.aio.insecure_channel(f"127.0.0.1:{port}") as channel:
        watch = health_pb2_grpc.HealthStub(channel).Watch(health_pb2.HealthCheckRequest())
        first = await watch.read()
        assert first.status == health_pb2.HealthCheckResponse.SERVING

        in_flight = asyncio.ensure_future(
            channel.unary_unary(
                "/kozyr.testing.v1.ShutdownProbe/WaitForShutdown",
                request_serializer=cards_pb2.Card.SerializeToString,
                response_deserializer=cards_pb2.Card.FromString,
            )(cards_pb2.Card())
        )
        await probe.expect_line("WAITING")

        probe.process.send_signal(sig)

        second = await watch.read()
        assert second.status == health_pb2.HealthCheckResponse.NOT_SERVING
        watch.cancel()  # a watcher would otherwise hold the server for the whole grace
        assert (await in_flight).code == "finished"

    await probe.expect_line("HOOK before")
    await probe.expect_line("HOOK after")
    returncode = await asyncio.wait_for(probe.process.wait(), HANG_GUARD_SECONDS)
    logs = probe.stderr.read_text()
    assert returncode == 0, logs
    lines = [json.loads(line) for line in logs.splitlines() if line.startswith("{")]
    assert sig.name in [line.get("signal") for line in lines]
    assert "grpc server stopped" in [line["event"] for line in lines]


async def calls_racing_the_signal(channel: grpc.aio.Channel) -> Counter[str]:
    """Status codes of a wave of calls sent just after the signal, every 10 ms for
    half a second: before and while shutdown begins."""
    echo = probe_method(channel, "Echo")
    codes: Counter[str] = Counter()
    for _ in range(50):
        for result in await asyncio.gather(
            *(echo(cards_pb2.Card()) for _ in range(20)), return_exceptions=True
        ):
            codes[result.code().name if isinstance(result, grpc.aio.AioRpcError) else "OK"] += 1
        await asyncio.sleep(0.01)
    return codes


async def test_calls_arriving_during_the_grace_period_are_unavailable(probe: ProbeProcess) -> None:
    """While a call in flight holds the shutdown, new calls are refused with a code
    clients retry (elsewhere), not cancelled; the call in flight still finishes."""
    port = int((await probe.expect_line("PORT ")).split()[1])
    async with grpc.aio.insecure_channel(f"127.0.0.1:{port}") as channel:
        assert (await probe_method(channel, "Echo")(cards_pb2.Card(code="x"))).code == "x"
        watch = health_pb2_grpc.HealthStub(channel).Watch(health_pb2.HealthCheckRequest())
        assert (await watch.read()).status == health_pb2.HealthCheckResponse.SERVING
        in_flight = asyncio.ensure_future(
            probe_method(channel, "HoldThroughShutdown")(cards_pb2.Card())
        )
        await probe.expect_line("HOLDING")

        probe.process.send_signal(signal.SIGTERM)
        racing = await calls_racing_the_signal(channel)
        assert (await watch.read()).status == health_pb2.HealthCheckResponse.NOT_SERVING
        watch.cancel()
        assert set(racing) <= {"OK", "UNAVAILABLE"}, racing

        with pytest.raises(grpc.aio.AioRpcError) as refused:
            await probe_method(channel, "Echo")(cards_pb2.Card(code="late"))
        assert refused.value.code() == grpc.StatusCode.UNAVAILABLE, refused.value
        assert error_details(refused.value).reason == "SHUTTING_DOWN"

        assert probe.process.stdin is not None
        probe.process.stdin.write(b"release\n")
        await probe.process.stdin.drain()
        assert (await in_flight).code == "finished"

    returncode = await asyncio.wait_for(probe.process.wait(), HANG_GUARD_SECONDS)
    assert returncode == 0, probe.stderr.read_text()
