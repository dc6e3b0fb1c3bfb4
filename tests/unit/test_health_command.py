"""`kozyr health` (the image's and compose's health check) as a process: exit 0 and
SERVING from a gRPC health server that serves, 1 when it does not serve or nobody
listens, and it asks 127.0.0.1:$KOZYR_GRPC_PORT when no target is given."""

from __future__ import annotations

import asyncio
import os
import sys
from collections.abc import AsyncIterator

import grpc
import pytest
from grpc_health.v1 import health, health_pb2, health_pb2_grpc

from kozyr.infra import free_port


async def kozyr_health(*args: str, port: str | None = None) -> tuple[int, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("KOZYR_")}
    if port is not None:
        env["KOZYR_GRPC_PORT"] = port
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "kozyr.cli.main",
        "health",
        *args,
        env=env,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.STDOUT,
    )
    async with asyncio.timeout(60):
        out, _ = await process.communicate()
    assert process.returncode is not None
    return process.returncode, out.decode()


@pytest.fixture
async def health_server() -> AsyncIterator[tuple[int, health.aio.HealthServicer]]:
    server = grpc.aio.server()
    servicer = health.aio.HealthServicer()
    health_pb2_grpc.add_HealthServicer_to_server(servicer, server)
    port = server.add_insecure_port("127.0.0.1:0")
    await server.start()
    await servicer.set("", health_pb2.HealthCheckResponse.SERVING)
    await servicer.set("kozyr.test.v1.Test", health_pb2.HealthCheckResponse.NOT_SERVING)
    try:
        yield port, servicer
    finally:
        await server.stop(None)


async def test_serving_exits_0(health_server: tuple[int, health.aio.HealthServicer]) -> None:
    port, _ = health_server
    code, out = await kozyr_health("--target", f"127.0.0.1:{port}")
    assert (code, out.strip()) == (0, "SERVING")


async def test_the_default_target_is_the_containers_own_port(
    health_server: tuple[int, health.aio.HealthServicer],
) -> None:
    port, _ = health_server
    code, out = await kozyr_health(port=str(port))
    assert (code, out.strip()) == (0, "SERVING")


async def test_not_serving_exits_1(health_server: tuple[int, health.aio.HealthServicer]) -> None:
    port, _ = health_server
    code, out = await kozyr_health(
        "--target", f"127.0.0.1:{port}", "--service", "kozyr.test.v1.Test"
    )
    assert code == 1
    assert "NOT_SERVING" in out


async def test_nobody_listening_exits_1() -> None:
    code, out = await kozyr_health("--target", f"127.0.0.1:{free_port()}", "--timeout", "1")
    assert code == 1
    assert "did not answer (UNAVAILABLE" in out
    assert "Traceback" not in out
