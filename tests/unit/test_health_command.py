"""The health probe as a process, both ways it is run: `python -m kozyr.health` (what
the image's HEALTHCHECK and compose run) and `kozyr health` (the same check behind the
command line). Exit 0 and SERVING from a gRPC health server that serves, 1 when it does
not serve or nobody listens; it asks 127.0.0.1:$KOZYR_GRPC_PORT when no target is given,
speaks TLS when the container's service does, and the probe imports nothing but grpc
(cryptography only for TLS): it runs every few seconds in every container."""

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

from kozyr.health import certificate_name
from kozyr.infra import free_port
from tests.support.imports import HEAVY, run_importing
from tests.support.tls import make_tls_files

PROBES = {
    "python -m kozyr.health": ["-m", "kozyr.health"],
    "kozyr health": ["-m", "kozyr.cli.main", "health"],
}

NOT_IN_THE_PROBE = (
    *HEAVY,
    "typer",
    "click",
    "rich",
    "pydantic",
    "pydantic_settings",
    "jwt",
    "kozyr.cli",
    "kozyr.runtime",
    "kozyr.games",
    "kozyr.infra",
)
"""Beyond what no light command loads: the CLI, the settings and the token stacks."""


@pytest.fixture(params=PROBES)
def probe(request: pytest.FixtureRequest) -> list[str]:
    """The probe's command line after `python`."""
    return PROBES[request.param]


def _env(port: str | None, settings: dict[str, str]) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("KOZYR_")}
    if port is not None:
        env["KOZYR_GRPC_PORT"] = port
    env.update({f"KOZYR_{name.upper()}": value for name, value in settings.items()})
    return env


async def kozyr_health(
    probe: list[str], *args: str, port: str | None = None, **settings: str
) -> tuple[int, str]:
    """Run the probe with no KOZYR_* but `port` and `settings` (KOZYR_<NAME>)."""
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        *probe,
        *args,
        env=_env(port, settings),
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


async def test_serving_exits_0(
    probe: list[str], health_server: tuple[int, health.aio.HealthServicer]
) -> None:
    port, _ = health_server
    code, out = await kozyr_health(probe, "--target", f"127.0.0.1:{port}")
    assert (code, out.strip()) == (0, "SERVING")


async def test_the_default_target_is_the_containers_own_port(
    probe: list[str],
    health_server: tuple[int, health.aio.HealthServicer],
) -> None:
    port, _ = health_server
    code, out = await kozyr_health(probe, port=str(port))
    assert (code, out.strip()) == (0, "SERVING")


async def test_not_serving_exits_1(
    probe: list[str], health_server: tuple[int, health.aio.HealthServicer]
) -> None:
    port, _ = health_server
    code, out = await kozyr_health(
        probe, "--target", f"127.0.0.1:{port}", "--service", "kozyr.test.v1.Test"
    )
    assert code == 1
    assert "NOT_SERVING" in out


async def test_nobody_listening_exits_1(probe: list[str]) -> None:
    code, out = await kozyr_health(probe, "--target", f"127.0.0.1:{free_port()}", "--timeout", "1")
    assert code == 1
    assert "did not answer (UNAVAILABLE" in out
    assert "Traceback" not in out


async def test_a_tls_service_is_checked_over_tls(probe: list[str], tmp_path: Path) -> None:
    """With the container's TLS settings the check speaks TLS (trusting the CA, naming
    the certificate's host while it dials 127.0.0.1); without them it is refused."""
    tls = make_tls_files(tmp_path)
    credentials = grpc.ssl_server_credentials([(tls.key.read_bytes(), tls.cert.read_bytes())])
    async with serving_health(credentials) as (port, _):
        plain = await kozyr_health(probe, "--timeout", "2", port=str(port))
        assert plain[0] == 1
        files = {"grpc_tls_cert_file": str(tls.cert), "grpc_tls_key_file": str(tls.key)}
        code, out = await kozyr_health(probe, port=str(port), grpc_tls_ca_file=str(tls.ca), **files)
        assert (code, out.strip()) == (0, "SERVING")
        (tmp_path / "other").mkdir()
        stranger = make_tls_files(tmp_path / "other", "another CA")
        code, out = await kozyr_health(
            probe, "--timeout", "2", port=str(port), grpc_tls_ca_file=str(stranger.ca), **files
        )
        assert code == 1
        assert "did not answer (UNAVAILABLE" in out


def test_the_name_checked_is_the_certificates_first_host(tmp_path: Path) -> None:
    tls = make_tls_files(tmp_path)
    assert certificate_name(tls.cert.read_bytes()) == "localhost"


async def test_the_probe_imports_grpc_and_nothing_heavy(
    health_server: tuple[int, health.aio.HealthServicer],
) -> None:
    port, _ = health_server
    run = await asyncio.to_thread(
        run_importing, PROBES["python -m kozyr.health"], _env(str(port), {})
    )
    assert (run.returncode, run.stdout.strip()) == (0, "SERVING"), run.stderr
    assert run.loaded(NOT_IN_THE_PROBE) == []
    assert run.loaded(["cryptography"]) == [], "TLS is loaded only when configured"
    assert run.loaded(["grpc_health.v1.health_pb2_grpc"]), "the detector sees the probe's own"


async def test_the_probe_loads_tls_only_when_the_service_speaks_it(tmp_path: Path) -> None:
    tls = make_tls_files(tmp_path)
    credentials = grpc.ssl_server_credentials([(tls.key.read_bytes(), tls.cert.read_bytes())])
    async with serving_health(credentials) as (port, _):
        files = {"grpc_tls_cert_file": str(tls.cert), "grpc_tls_ca_file": str(tls.ca)}
        run = await asyncio.to_thread(
            run_importing, PROBES["python -m kozyr.health"], _env(str(port), files)
        )
    assert (run.returncode, run.stdout.strip()) == (0, "SERVING"), run.stderr
    assert run.loaded(NOT_IN_THE_PROBE) == []


async def test_the_web_edge_is_asked_over_http() -> None:
    """`--http`: the web edge's /healthz (it serves no gRPC health), on the container's
    KOZYR_WEBEDGE_PORT without a target; 1 once it has stopped."""
    from kozyr.webedge.service import WebEdge
    from kozyr.webedge.settings import WebEdgeSettings

    edge = WebEdge(
        WebEdgeSettings.load(
            table_target=f"127.0.0.1:{free_port()}", webedge_host="127.0.0.1", webedge_port=0
        )
    )
    port = await edge.start()
    try:
        probe = ["-m", "kozyr.health", "--http"]
        code, out = await kozyr_health(probe, webedge_port=str(port))
        assert (code, out.strip()) == (0, "SERVING")
        code, out = await kozyr_health([*probe, "--target", f"127.0.0.1:{port}"])
        assert (code, out.strip()) == (0, "SERVING")
        code, out = await kozyr_health(["-m", "kozyr.health", "--target", f"127.0.0.1:{port}"])
        assert code == 1, "without --http the probe asks gRPC, which the edge does not speak"
    finally:
        await edge.stop()
    code, out = await kozyr_health(probe, "--timeout", "1", webedge_port=str(port))
    assert code == 1
    assert "the web edge did not answer" in out


async def test_the_web_table_page_is_asked_over_http_on_its_own_port() -> None:
    """`--http` in the page server's container (KOZYR_WEBTABLE_PORT, no web edge port):
    its /healthz, as compose's health check runs it."""
    from kozyr.webtable.server import PageServer
    from kozyr.webtable.settings import WebTableSettings

    page = PageServer(
        WebTableSettings.load(database_url=None, webtable_host="127.0.0.1", webtable_port=0)
    )
    port = await page.start()
    probe = ["-m", "kozyr.health", "--http", "--timeout", "2"]
    try:
        code, out = await kozyr_health(probe, webtable_port=str(port))
        assert (code, out.strip()) == (0, "SERVING"), out
    finally:
        await page.stop()
    code, out = await kozyr_health(probe, webtable_port=str(port))
    assert code == 1, out
