"""The tools find `make run` by themselves: the real dev stack (`python -m kozyr.devstack`,
embedded PostgreSQL and NATS, every service) runs in a scratch checkout, and `kozyr
health`, `token`, `tables`, `replay` and `verify` run from a sub-folder of it with no
KOZYR_* variable set. Its banner comes only once every service serves (each is asked
the moment it appears) and names the data folder. When the stack stops, its stack file
goes with it."""

from __future__ import annotations

import asyncio
import json
import os
import re
import signal
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import psutil
import pytest

from kozyr import health
from kozyr.api.common.v1 import games_pb2
from kozyr.client import TableClient
from kozyr.infra import free_port
from kozyr.runtime.auth import Role, verify_token

pytestmark = pytest.mark.e2e

KOZYR = Path(sys.executable).parent / "kozyr"
"""The console script `make install` puts in .venv/bin."""
START_SECONDS = 240.0
NO_ENGINE = "unix:///nonexistent/docker.sock"


def _without_kozyr_variables() -> dict[str, str]:
    return {k: v for k, v in os.environ.items() if not k.startswith("KOZYR_")}


class DevStack:
    """`python -m kozyr.devstack` run from `checkout`, as `make run` runs it."""

    def __init__(self, checkout: Path) -> None:
        self.checkout = checkout
        self.stack_file = checkout / ".kozyr" / "stack.json"
        self.log = checkout / "make-run.log"
        env = _without_kozyr_variables()
        self.ports = {name: free_port() for name in ("table", "matchmaking", "bots", "clock")}
        self.web_port = free_port()
        self.page_port = free_port()
        http = {"webedge": self.web_port, "webtable": self.page_port}
        for name, port in {**self.ports, **http}.items():  # not the usual
            env[f"KOZYR_{name.upper()}_PORT"] = str(port)
        # Embedded servers, as on a machine without Docker: where an engine answers (CI
        # starts one), `make run` would take testcontainers' instead (kozyr.infra).
        env["DOCKER_HOST"] = NO_ENGINE
        with self.log.open("wb") as log:
            self.process = subprocess.Popen(
                [sys.executable, "-m", "kozyr.devstack"],
                cwd=checkout,
                env=env,
                stdout=log,
                stderr=subprocess.STDOUT,
            )

    def kozyr(self, *args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
        """`.venv/bin/kozyr ARGS` in `cwd`, with no KOZYR_* variable at all."""
        return subprocess.run(
            [str(KOZYR), *args],
            cwd=cwd,
            env=_without_kozyr_variables(),
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )

    def wait_serving(self, cwd: Path) -> None:
        """Until the stack file is written and `kozyr health` (from `cwd`) says SERVING."""
        deadline = time.monotonic() + START_SECONDS
        while time.monotonic() < deadline:
            assert self.process.poll() is None, f"make run exited:\n{self.tail()}"
            if self.stack_file.exists() and self.kozyr("health", cwd=cwd).returncode == 0:
                return
            time.sleep(1)
        raise AssertionError(f"the dev stack did not start in {START_SECONDS} s:\n{self.tail()}")

    def wait_banner(self) -> dict[str, str]:
        """Until the banner is printed; then, at once, each service's health status."""
        deadline = time.monotonic() + START_SECONDS
        while "kozyr is running" not in self.log.read_text(errors="replace"):
            assert self.process.poll() is None, f"make run exited:\n{self.tail()}"
            assert time.monotonic() < deadline, f"no banner in {START_SECONDS} s:\n{self.tail()}"
            time.sleep(0.1)
        return {name: _status(f"127.0.0.1:{port}") for name, port in self.ports.items()}

    def stop(self) -> int:
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
        return self.process.wait(60)

    def tail(self) -> str:
        return "\n".join(self.log.read_text(errors="replace").splitlines()[-40:])


@pytest.fixture
def dev_stack(tmp_path: Path) -> Iterator[DevStack]:
    checkout = tmp_path / "checkout"
    checkout.mkdir()
    stack = DevStack(checkout)
    try:
        yield stack
    finally:
        if stack.process.poll() is None:
            stack.process.send_signal(signal.SIGTERM)
            try:
                stack.process.wait(60)
            except subprocess.TimeoutExpired:
                stack.process.kill()
                stack.process.wait()


def _status(target: str) -> str:
    try:
        return health.status(target, timeout=5.0, env={})
    except health.ProbeError as err:
        return err.message


async def _create_table(target: str, token: str) -> str:
    async with TableClient(target, token) as service:
        created = await service.create_table(games_pb2.GAME_THREE_FIVE_EIGHT, ["ana", None, None])
    return created.table_id


def test_kozyr_commands_find_make_run_from_a_sub_folder(dev_stack: DevStack) -> None:
    sub = dev_stack.checkout / "docs" / "somewhere"
    sub.mkdir(parents=True)
    # The banner comes once every service serves, not when their processes start.
    assert dev_stack.wait_banner() == dict.fromkeys(dev_stack.ports, "SERVING")
    dev_stack.wait_serving(cwd=sub)

    written = json.loads(dev_stack.stack_file.read_text())
    assert written["pid"] == dev_stack.process.pid
    assert dev_stack.stack_file.stat().st_mode & 0o077 == 0, "it holds the dev key"
    log = dev_stack.log.read_text()
    assert str(dev_stack.stack_file) in log, "the banner names it"
    banner = next(line for line in log.splitlines() if line.strip().startswith("PostgreSQL"))
    # the table's own line: "webtable service ready" ends in the same words
    ready = next(line for line in log.splitlines() if re.search(r"\btable service ready", line))
    assert written["database_url"] in banner
    assert "waiting for table, matchmaking, bots, clock, webedge and webtable to serve" in log
    assert f"webedge     http://127.0.0.1:{dev_stack.web_port}" in log
    assert written["targets"]["webedge"] == f"127.0.0.1:{dev_stack.web_port}"
    with urllib.request.urlopen(f"http://127.0.0.1:{dev_stack.web_port}/healthz") as edge:
        assert edge.status == 200, "the web edge serves once the banner is out"
    assert f"Play in a browser: http://127.0.0.1:{dev_stack.page_port}/" in log
    page_config = f"http://127.0.0.1:{dev_stack.page_port}/config.json"
    with urllib.request.urlopen(page_config) as page:
        assert json.loads(page.read()) == {"edgePort": dev_stack.web_port, "devLogin": True}
    data = next(line for line in log.splitlines() if line.strip().startswith("data "))
    assert str(dev_stack.checkout / ".kozyr") in data, "the banner names the data folder"
    assert written["database_url"] in ready, "the banner and the log name one database"
    # Only the services that keep data have a database; bots and clock not even a URL.
    assert set(written["databases"]) == {"table", "matchmaking"}
    assert written["databases"]["table"] == written["database_url"]
    keeping_nothing = [
        child
        for child in psutil.Process(dev_stack.process.pid).children(recursive=True)
        if child.cmdline()[-2:] in (["-m", "kozyr.bots"], ["-m", "kozyr.clock"])
    ]
    assert len(keeping_nothing) == 2, "the bots and clock processes"
    for child in keeping_nothing:
        assert "KOZYR_DATABASE_URL" not in child.environ(), child.cmdline()
    (edge,) = [
        child
        for child in psutil.Process(dev_stack.process.pid).children(recursive=True)
        if child.cmdline()[-2:] == ["-m", "kozyr.webedge"]
    ]
    assert not {"KOZYR_JWT_KEY", "KOZYR_NATS_URL", "KOZYR_DATABASE_URL"} & set(edge.environ())
    (page_server,) = [
        child
        for child in psutil.Process(dev_stack.process.pid).children(recursive=True)
        if child.cmdline()[-2:] == ["-m", "kozyr.webtable"]
    ]
    page_env = page_server.environ()
    assert not {"KOZYR_NATS_URL", "KOZYR_DATABASE_URL"} & set(page_env), "it mints tokens only"
    assert page_env["KOZYR_JWT_KEY"] == written["jwt_key"]
    login = urllib.request.Request(
        f"http://127.0.0.1:{dev_stack.page_port}/dev/token", data=b'{"player": "ana"}'
    )
    with urllib.request.urlopen(login) as answer:
        page_token = json.loads(answer.read())["token"]
    assert verify_token(page_token, key=written["jwt_key"]).subject == "ana"

    minted = dev_stack.kozyr("token", "matchmaker", "--role", "service", cwd=sub)
    assert minted.returncode == 0, minted.stderr
    service_token = minted.stdout.strip()
    principal = verify_token(service_token, key=written["jwt_key"])
    assert (principal.subject, principal.role) == ("matchmaker", Role.SERVICE)

    table_id = asyncio.run(_create_table(written["targets"]["table"], service_token))

    found = dev_stack.kozyr("tables", "--player", "ana", "--json", cwd=sub)
    assert found.returncode == 0, found.stderr
    assert [t["table_id"] for t in json.loads(found.stdout)] == [table_id]

    replayed = dev_stack.kozyr("replay", table_id, cwd=sub)
    assert replayed.returncode == 0, replayed.stderr
    assert "ana" in replayed.stdout, "the players are named"
    verified = dev_stack.kozyr("verify", table_id, "--json", cwd=sub)
    assert verified.returncode == 0, verified.stderr + verified.stdout
    assert json.loads(verified.stdout)["ok"] is True

    assert dev_stack.stop() == 0
    assert not dev_stack.stack_file.exists(), "a stopped stack leaves no stack file"
    gone = dev_stack.kozyr("replay", table_id, cwd=sub)
    assert gone.returncode == 2
    assert "KOZYR_DATABASE_URL" in gone.stderr
