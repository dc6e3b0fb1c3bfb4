"""Shared fixtures: real PostgreSQL and NATS, provisioned by kozyr.infra.

The servers start lazily, once per test session, only when a test asks for them
(unit tests start nothing). Every test gets its own database and its own NATS subject
root, so tests never see each other's data.
"""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator, Callable, Iterator
from pathlib import Path

import asyncpg
import pytest

from kozyr.infra import EmbeddedNats, Infrastructure, libpq_dsn, provision

collect_ignore = ["chaos"]
"""The fault scenarios run on their own (`make chaos`, after `make test` in CI): each
owns its servers and takes up to a minute. Naming tests/chaos explicitly still runs them."""


@pytest.fixture(scope="session")
def infra(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Infrastructure]:
    """PostgreSQL and NATS for the whole session (environment, Docker or embedded)."""
    with provision(tmp_path_factory.mktemp("infra"), durable=False) as ready:
        yield ready


@pytest.fixture
async def database_url(infra: Infrastructure) -> AsyncIterator[str]:
    """A fresh, empty database for this test (SQLAlchemy asyncpg URL); dropped after."""
    name = f"t_{uuid.uuid4().hex[:16]}"
    admin = await asyncpg.connect(libpq_dsn(infra.database_url))
    try:
        await admin.execute(f'CREATE DATABASE "{name}"')
    finally:
        await admin.close()
    yield infra.database_url_for(name)
    admin = await asyncpg.connect(libpq_dsn(infra.database_url))
    try:
        await admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
    finally:
        await admin.close()


@pytest.fixture
def nats_url(infra: Infrastructure) -> str:
    """The session's NATS server (JetStream enabled)."""
    return infra.nats_url


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
