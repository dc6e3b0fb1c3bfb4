"""`kozyr health` (the image's and compose's health check) as a process: exit 0 and
SERVING from a gRPC health server that serves, 1 when it does not serve or nobody
listens, and it asks 127.0.0.1:$KOZYR_GRPC_PORT when no target is given."""

from __future__ import annotations

import asyncio
import os
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import grpc
import pytest
from grpc_health.v1 import health, health_pb2, health_pb2_grpc

from kozyr.cli.health import certificate_name
from kozyr.infra import free_port
from tests.support.tls import make_tls_files


async def kozyr_health(*args: str, port: str | None = None, **settings: str) -> tuple[int, str]:
    """Run `kozyr health` with no KOZYR_* but `port` and `settings` (KOZYR_<NAME>)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("KOZYR_")}
    if port is not None:
        env["KOZYR_GRPC_PORT"] = port
    env.update({f"KOZYR_{name.upper()}": value for name, value in settings.items()})
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


@asynccontextmanager
async def serving_health(
    credentials: grpc.ServerCredentials | None = None,
) -> AsyncIterator[tuple[int, health.aio.HealthServicer]]:
    """A gRPC health server on a free port: plain, or TLS only with `credentials`."""
    server = grpc.aio.server()
    servicer = health.aio.HealthServicer()
    health_pb2_grpc.add_HealthServicer_to_server(servicer, server)
    if credentials is None:
        port = server.add_insecure_port("127.0.0.1:0")
    else:
        port = server.add_secure_port("127.0.0.1:0", credentials)
    await server.start()
    await servicer.set("", health_pb2.HealthCheckResponse.SERVING)
    await servicer.set("kozyr.test.v1.Test", health_pb2.HealthCheckResponse.NOT_SERVING)
    try:
        yield port, servicer
    finally:
        await server.stop(None)


@pytest.fixture
async def health_server() -> AsyncIterator[tuple[int, health.aio.HealthServicer]]:
    async with serving_health() as served:
        yield served


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


async def test_a_tls_service_is_checked_over_tls(tmp_path: Path) -> None:
    """With the container's TLS settings the check speaks TLS (trusting the CA, naming
    the certificate's host while it dials 127.0.0.1); without them it is refused."""
    tls = make_tls_files(tmp_path)
    credentials = grpc.ssl_server_credentials([(tls.key.read_bytes(), tls.cert.read_bytes())])
    async with serving_health(credentials) as (port, _):
        plain = await kozyr_health("--timeout", "2", port=str(port))
        assert plain[0] == 1
        files = {"grpc_tls_cert_file": str(tls.cert), "grpc_tls_key_file": str(tls.key)}
        code, out = await kozyr_health(port=str(port), grpc_tls_ca_file=str(tls.ca), **files)
        assert (code, out.strip()) == (0, "SERVING")
        (tmp_path / "other").mkdir()
        stranger = make_tls_files(tmp_path / "other", "another CA")
        code, out = await kozyr_health(
            "--timeout", "2", port=str(port), grpc_tls_ca_file=str(stranger.ca), **files
        )
        assert code == 1
        assert "did not answer (UNAVAILABLE" in out


def test_the_name_checked_is_the_certificates_first_host(tmp_path: Path) -> None:
    tls = make_tls_files(tmp_path)
    assert certificate_name(tls.cert.read_bytes()) == "localhost"
