"""End-to-end fixtures: the table service as a real process on real PostgreSQL and NATS.

`python -m kozyr.table` runs exactly as deployed (configured by KOZYR_* variables only);
the tests talk to it over gRPC like any client. The process can be killed with SIGKILL
and started again on the same port and database: what survives is only what the event
log and NATS hold, which is the point of the crash test.

Each service logs to `<tmp>/table.log` at WARNING (with Python's faulthandler on, so a
crash leaves its traceback there); `E2E_DEBUG_LOG_LEVEL=INFO` turns on its call log.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import subprocess
import sys
import uuid
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, ClassVar

import grpc
import nats
import pytest
from grpc_health.v1 import health_pb2, health_pb2_grpc
from nats.js.errors import NotFoundError

from kozyr import health
from kozyr.bus.streams import EVERY_CATEGORY, jetstream_name
from kozyr.eventstore import migrate
from kozyr.infra import Infrastructure, free_port
from kozyr.infra.servers import spawn
from kozyr.table.service import SERVICE_NAME
from tests.support.databases import fresh_database
from tests.support.tables import JWT_KEY

pytest.register_assert_rewrite("tests.e2e.checks", "tests.e2e.leaks")

START_TIMEOUT = 60.0
"""Seconds a starting service may take to answer SERVING (imports on a busy 2-core box)."""

HEALTH_CHANNEL_OPTIONS = [
    ("grpc.initial_reconnect_backoff_ms", 100),
    ("grpc.min_reconnect_backoff_ms", 100),
    ("grpc.max_reconnect_backoff_ms", 300),
]
"""The health probe retries the port quickly instead of gRPC's default 1 s backoff."""


class ServiceDied(RuntimeError):
    """The service process exited (or never became healthy); carries its log's tail."""


@dataclass
class TableServiceProcess:
    """`python -m kozyr.table` on a fixed port: start, SIGKILL, start again, stop."""

    env: dict[str, str]
    port: int
    log_path: Path
    starts: int = 0
    module: ClassVar[str] = "kozyr.table"
    """The service's module (`python -m <module>`); subclasses run other services."""
    health_service: ClassVar[str] = SERVICE_NAME
    """The service whose health check must answer SERVING once started."""
    _proc: subprocess.Popen[bytes] | None = field(default=None, repr=False)
    _log: IO[bytes] | None = field(default=None, repr=False)

    @property
    def target(self) -> str:
        return f"127.0.0.1:{self.port}"

    @property
    def running(self) -> bool:
        return self._proc is not None and self._proc.poll() is None

    @property
    def pid(self) -> int | None:
        """The running process's id (to tell which replica holds a database session)."""
        return self._proc.pid if self.running and self._proc is not None else None

    async def start(self) -> None:
        """Start the process and return once its health check answers SERVING."""
        if self.running:
            raise RuntimeError(f"{self.module} is already running")
        self._log = self.log_path.open("ab")
        self._log.write(f"---- start #{self.starts + 1}\n".encode())
        self._log.flush()
        # Popen, not asyncio's subprocess: kill() and stop() must work from sync teardown;
        # `spawn`, not a preexec_fn: forking while the test's gRPC clients run can crash.
        self._proc = spawn(
            [sys.executable, "-m", self.module],
            env=self.env,
            stdout=self._log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        self.starts += 1
        try:
            await self._wait_serving()
        except BaseException:
            self.kill()
            raise

    async def _wait_serving(self) -> None:
        request = health_pb2.HealthCheckRequest(service=self.health_service)
        async with asyncio.timeout(START_TIMEOUT):
            async with grpc.aio.insecure_channel(
                self.target, options=HEALTH_CHANNEL_OPTIONS
            ) as channel:
                stub = health_pb2_grpc.HealthStub(channel)
                while True:
                    if not self.running:
                        raise ServiceDied(
                            f"{self.module} exited while starting:\n{self.log_tail()}"
                        )
                    with contextlib.suppress(grpc.aio.AioRpcError):
                        reply = await stub.Check(request, timeout=1.0, wait_for_ready=True)
                        if reply.status == health_pb2.HealthCheckResponse.SERVING:
                            return
                    await asyncio.sleep(0.05)

    def kill(self) -> None:
        """SIGKILL: no shutdown hook runs, in-flight requests and unpublished events stay."""
        if self._proc is not None:
            if self._proc.poll() is None:
                self._proc.send_signal(signal.SIGKILL)
            self._proc.wait()
            self._proc = None
        self._close_log()

    def stop(self, timeout: float = 15.0) -> int | None:
        """Graceful stop (SIGTERM), SIGKILL if it hangs; returns the exit code."""
        if self._proc is None:
            return None
        proc, self._proc = self._proc, None
        if proc.poll() is None:
            proc.send_signal(signal.SIGTERM)
            try:
                proc.wait(timeout)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
        self._close_log()
        return proc.returncode

    def _close_log(self) -> None:
        if self._log is not None:
            self._log.close()
            self._log = None

    def log_tail(self, lines: int = 40) -> str:
        if not self.log_path.exists():
            return ""
        return "\n".join(self.log_path.read_text(errors="replace").splitlines()[-lines:])


class WebEdgeProcess(TableServiceProcess):
    """`python -m kozyr.webedge` (environment: `web_edge_env`): started once its
    `/healthz` answers 200 (it speaks HTTP, not gRPC); `target` is its host:port, its
    gRPC-Web base URL `http://<target>`."""

    module = "kozyr.webedge"

    async def _wait_serving(self) -> None:
        async with asyncio.timeout(START_TIMEOUT):
            while not await asyncio.to_thread(health.web_serving, self.target):
                assert self.running, f"the web edge exited while starting:\n{self.log_tail()}"
                await asyncio.sleep(0.05)


class WebPageProcess(WebEdgeProcess):
    """`python -m kozyr.webtable`, the web table's page server: HTTP too, started once
    its `/healthz` answers 200."""

    module = "kozyr.webtable"


@dataclass
class Deployment:
    """One table service process and the database and subject root it owns."""

    database_url: str
    nats_url: str
    subject_root: str
    service: TableServiceProcess

    @property
    def target(self) -> str:
        return self.service.target


def service_env(database_url: str, nats_url: str, subject_root: str, port: int) -> dict[str, str]:
    """The process environment: the caller's, minus any KOZYR_* of its own, plus ours."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("KOZYR_")}
    env.update(
        KOZYR_DATABASE_URL=database_url,
        KOZYR_NATS_URL=nats_url,
        KOZYR_SUBJECT_ROOT=subject_root,
        KOZYR_JWT_KEY=JWT_KEY,
        KOZYR_GRPC_HOST="127.0.0.1",
        KOZYR_GRPC_PORT=str(port),
        KOZYR_LOG_LEVEL=os.environ.get("E2E_DEBUG_LOG_LEVEL", "WARNING"),
        KOZYR_SHUTDOWN_GRACE_SECONDS="2",
        PYTHONUNBUFFERED="1",
        PYTHONFAULTHANDLER="1",
    )
    return env


def web_edge_env(port: int, targets: dict[str, str], origins: str = "") -> dict[str, str]:
    """A web edge's process environment (`WebEdgeProcess`): its HTTP port on 127.0.0.1,
    the backends by name (`{"table": "127.0.0.1:…", "bots": …}`), the allowed origins."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("KOZYR_")}
    env.update({f"KOZYR_{name.upper()}_TARGET": target for name, target in targets.items()})
    env.update(
        KOZYR_WEBEDGE_HOST="127.0.0.1",
        KOZYR_WEBEDGE_PORT=str(port),
        KOZYR_WEBEDGE_ALLOWED_ORIGINS=origins,
        KOZYR_LOG_LEVEL=os.environ.get("E2E_DEBUG_LOG_LEVEL", "WARNING"),
        KOZYR_SHUTDOWN_GRACE_SECONDS="2",
        PYTHONUNBUFFERED="1",
    )
    return env


@contextlib.asynccontextmanager
async def deployed(
    database_url: str, nats_url: str, subject_root: str, log_dir: Path
) -> AsyncIterator[Deployment]:
    """Migrate the database, start the service process; always stop it and drop its stream."""
    await migrate(database_url)
    port = free_port()
    service = TableServiceProcess(
        service_env(database_url, nats_url, subject_root, port), port, log_dir / "table.log"
    )
    try:
        await service.start()
        yield Deployment(database_url, nats_url, subject_root, service)
    finally:
        service.stop()
        await _delete_jetstream_stream(nats_url, subject_root)


async def _delete_jetstream_stream(nats_url: str, subject_root: str) -> None:
    """The session's NATS outlives the test: remove the streams this test created (the
    raw table events, the public ones, and matchmaking's when it ran beside)."""
    nc = await nats.connect(nats_url)
    try:
        for tree in EVERY_CATEGORY:
            with contextlib.suppress(NotFoundError):
                await nc.jetstream().delete_stream(jetstream_name(tree, subject_root))
    finally:
        await nc.close()


def unique_subject_root() -> str:
    return f"e2e{uuid.uuid4().hex[:12]}"


@contextlib.asynccontextmanager
async def deployment_for_module(infra: Infrastructure, log_dir: Path) -> AsyncIterator[Deployment]:
    """Own database, own subject root, own service process (a module-scoped game)."""
    async with (
        fresh_database(infra) as database_url,
        deployed(database_url, infra.nats_url, unique_subject_root(), log_dir) as deployment,
    ):
        yield deployment


@pytest.fixture
async def table_deployment(
    database_url: str, nats_url: str, subject_root: str, tmp_path: Path
) -> AsyncIterator[Deployment]:
    """A table service process for one test, on the test's database and subject root."""
    async with deployed(database_url, nats_url, subject_root, tmp_path) as deployment:
        yield deployment
