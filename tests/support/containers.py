"""A Docker engine for the tests that need one: the container e2e test
(tests/e2e/test_e2e_containers.py) and the suites that also run on testcontainers.

Whether an engine answers is asked once per process, of the `docker` CLI (the e2e test
drives it) or of the Docker SDK (testcontainers uses it): both read DOCKER_HOST, else
/var/run/docker.sock. Without one these tests are skipped with `NO_ENGINE`'s reason;
`.ci/run` starts one (docs/testing.md, "Containers").
"""

from __future__ import annotations

import asyncio
import functools
import os
import shutil
import subprocess
from collections.abc import Sequence

import pytest

CONTAINERS_GROUP = "containers"
CONTAINERS = pytest.mark.xdist_group(CONTAINERS_GROUP)
"""Marks the tests on testcontainers' servers: one worker runs them all, so each
container starts once per run, not once per worker; without an engine they are left
out (tests/conftest.py)."""


def on_containers(item: pytest.Item) -> bool:
    """True for a test marked CONTAINERS (itself or one of its parameters)."""
    return any(m.args[:1] == (CONTAINERS_GROUP,) for m in item.iter_markers("xdist_group"))


ENGINE_TIMEOUT = 20.0
"""An engine that does not answer `docker info` within this is taken as absent."""


def engine_where() -> str:
    """Where the Docker clients look for the engine (for the skip reason)."""
    return os.environ.get("DOCKER_HOST", "unix:///var/run/docker.sock")


@functools.cache
def engine_problem() -> str | None:
    """Why no Docker engine can run a container test here, or None when one answers."""
    docker = shutil.which("docker")
    if docker is None:
        return "no Docker engine: the `docker` CLI is not on PATH"
    try:
        info = subprocess.run(
            [docker, "info", "--format", "{{.ServerVersion}}"],
            capture_output=True,
            text=True,
            timeout=ENGINE_TIMEOUT,
            check=False,
        )
    except subprocess.TimeoutExpired:
        return f"no Docker engine answers at {engine_where()} (docker info timed out)"
    if info.returncode != 0:
        reason = (info.stderr.strip().splitlines() or ["?"])[-1]
        return f"no Docker engine answers at {engine_where()}: {reason}"
    return None


def no_engine_reason() -> str:
    """The skip reason, naming what would make the test run."""
    return (
        f"{engine_problem()} — the container tests need one "
        "(.ci/run starts one; see docs/testing.md, 'Containers')"
    )


@functools.cache
def sdk_engine_answers() -> bool:
    """True when the Docker SDK testcontainers uses reaches an engine (asked once)."""
    from kozyr.infra.provision import docker_available

    return docker_available()


async def run(
    command: Sequence[str], *, seconds: float, env: dict[str, str] | None = None
) -> tuple[int, str]:
    """Run a command to its end (killed after `seconds`): its exit code and its output
    (stdout and stderr together)."""
    process = await asyncio.create_subprocess_exec(
        *command, env=env, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.STDOUT
    )
    try:
        async with asyncio.timeout(seconds):
            out, _ = await process.communicate()
    except TimeoutError:
        process.kill()
        await process.wait()
        raise
    assert process.returncode is not None
    return process.returncode, out.decode(errors="replace")
