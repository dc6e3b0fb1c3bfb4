"""SIGTERM/SIGINT on a real service process: NOT_SERVING first, calls in flight finish, exit 0."""

from __future__ import annotations

import asyncio
import os
import signal
import sys
from collections.abc import AsyncIterator
from pathlib import Path

import grpc
import pytest
from grpc_health.v1 import health_pb2, health_pb2_grpc

from kozyr.api.common.v1 import cards_pb2

SCRIPT = Path(__file__).with_name("shutdown_probe_server.py")
GRACE_SECONDS = 5
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
            sys.executable, str(SCRIPT), env=env, stdout=asyncio.subprocess.PIPE, stderr=err
        )
    try:
        yield ProbeProcess(process, stderr)
    finally:
        if process.returncode is None:
            process.kill()
            await process.wait()


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
    assert f'"signal": "{sig.name}"' in logs
    assert '"event": "grpc server stopped"' in logs
