"""The embedded servers are real, restartable, and die with their parent; where a Docker
engine answers, provisioning uses testcontainers with the images docker-compose.yml
deploys."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import textwrap
import time
from collections.abc import Callable
from pathlib import Path

import asyncpg
import nats
import psutil
import pytest

from kozyr.infra import EmbeddedNats, Infrastructure, libpq_dsn, provision
from kozyr.infra.servers import EmbeddedPostgres, PortTaken
from tests.support.clock import SCHEDULES_SINCE, server_version
from tests.support.containers import CONTAINERS, engine_where, sdk_engine_answers

pytestmark = pytest.mark.integration


async def test_database_is_fresh_and_writable(database_url: str) -> None:
    conn = await asyncpg.connect(libpq_dsn(database_url))
    try:
        tables = await conn.fetchval(
            "SELECT count(*) FROM information_schema.tables WHERE table_schema = 'public'"
        )
        assert tables == 0
        await conn.execute("CREATE TABLE probe (x int)")
        await conn.execute("INSERT INTO probe VALUES (1)")
        assert await conn.fetchval("SELECT sum(x) FROM probe") == 1
    finally:
        await conn.close()


async def test_nats_restarts_with_its_jetstream_data(
    nats_factory: Callable[[], EmbeddedNats], subject_root: str
) -> None:
    server = nats_factory()
    nc = await nats.connect(server.url)
    js = nc.jetstream()
    await js.add_stream(name=subject_root.upper(), subjects=[f"{subject_root}.>"])
    await js.publish(f"{subject_root}.a", b"kept")
    await nc.close()

    server.stop()
    assert not server.running
    server.start()

    nc = await nats.connect(server.url)
    info = await nc.jetstream().stream_info(subject_root.upper())
    assert info.state.messages == 1
    await nc.close()


def test_embedded_servers_keep_their_data_in_this_runs_own_folder(
    infra: Infrastructure, tmp_path_factory: pytest.TempPathFactory
) -> None:
    """Another run on the machine cannot delete them (see tests/conftest.py)."""
    basetemp = tmp_path_factory.getbasetemp()
    for server in (infra.postgres, infra.nats):
        if server is not None:  # None: a server given by KOZYR_*_URL
            assert server.data_dir.is_relative_to(basetemp)


def test_servers_die_with_their_parent(tmp_path: Path) -> None:
    """A SIGKILLed parent (a crashed test run or `make run`) leaves no server behind."""
    script = textwrap.dedent(
        f"""
        from pathlib import Path
        import time
        from kozyr.infra import EmbeddedNats, EmbeddedPostgres
        pg = EmbeddedPostgres(Path({str(tmp_path)!r}) / "pg", durable=False)
        pg.start()
        ns = EmbeddedNats(Path({str(tmp_path)!r}) / "nats")
        ns.start()
        print(pg._proc.pid, ns._proc.pid, flush=True)
        time.sleep(600)
        """
    )
    parent = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True)
    assert parent.stdout is not None
    pids = [int(p) for p in parent.stdout.readline().split()]
    assert all(psutil.pid_exists(p) for p in pids)
    os.kill(parent.pid, signal.SIGKILL)
    parent.wait()
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline and any(_alive(p) for p in pids):
        time.sleep(0.1)
    assert not any(_alive(p) for p in pids)


def _alive(pid: int) -> bool:
    try:
        return bool(psutil.Process(pid).status() != psutil.STATUS_ZOMBIE)
    except psutil.NoSuchProcess:
        return False


@CONTAINERS
async def test_without_urls_and_with_an_engine_the_servers_are_containers(tmp_path: Path) -> None:
    """`make run` and any caller of `provision` on a machine with Docker: PostgreSQL and
    NATS from postgres:16-alpine and nats:2.12-alpine (message schedules: the clock
    works), removed when the block ends."""
    if not sdk_engine_answers():
        pytest.skip(f"no Docker engine answers at {engine_where()} (docs/testing.md, 'Containers')")
    with provision(tmp_path, env={}) as infra:
        assert infra.sources == {"postgres": "testcontainers", "nats": "testcontainers"}
        assert (infra.postgres, infra.nats) == (None, None)
        conn = await asyncpg.connect(libpq_dsn(infra.database_url))
        try:
            assert await conn.fetchval("SELECT 1") == 1
        finally:
            await conn.close()
        assert await server_version(infra.nats_url) >= SCHEDULES_SINCE
        nc = await nats.connect(infra.nats_url)
        try:
            assert (await nc.jetstream().account_info()).limits is not None
        finally:
            await nc.close()


@pytest.mark.parametrize("server", [EmbeddedNats, EmbeddedPostgres], ids=["nats", "postgres"])
def test_a_server_whose_port_was_taken_meanwhile_never_passes_for_started(
    tmp_path: Path, server: type[EmbeddedNats] | type[EmbeddedPostgres]
) -> None:
    """A port picked free can be taken before the server binds it by a process that
    keeps no ledger (Docker publishing a test container's port): its answer must not
    pass for the server's. A port picked here is replaced by a new pick; a port asked
    for is refused with PortTaken. Here this process plays the intruder."""
    picked = server(tmp_path / "picked")
    asked = server(tmp_path / "asked", port=picked.port)
    taken = picked.port
    with socket.socket() as intruder:
        intruder.bind(("127.0.0.1", taken))
        intruder.listen()
        with pytest.raises(PortTaken, match=str(taken)):
            asked.start()
        picked.start()
        try:
            assert picked.port != taken
            with socket.create_connection(("127.0.0.1", picked.port), timeout=5):
                pass  # its own port answers
        finally:
            picked.stop()
