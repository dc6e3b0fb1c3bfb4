"""Each service that appends events gets a database of its own: the dev stack (`make
run`) makes and migrates the table's and matchmaking's, and the script the postgres
containers run (compose, the k8s dev overlay) makes matchmaking's database and user,
which may not connect to the table's."""

from __future__ import annotations

import os
import subprocess
from collections.abc import Iterator
from pathlib import Path

import asyncpg
import pytest
from sqlalchemy.engine import make_url

from kozyr.devstack import Databases, create_and_migrate
from kozyr.eventstore import migrate
from kozyr.eventstore.readiness import missing_tables
from kozyr.infra import EmbeddedPostgres, Infrastructure, libpq_dsn

pytestmark = pytest.mark.integration

REPO = Path(__file__).resolve().parents[3]
SCRIPT = REPO / "deploy/postgres/kozyr-matchmaking.sh"


def test_the_embedded_server_holds_kozyr_and_kozyr_matchmaking(tmp_path: Path) -> None:
    embedded = EmbeddedPostgres(tmp_path / "pg", port=5999)  # never started: names only
    infra = Infrastructure(embedded.url(), "nats://127.0.0.1:4222", postgres=embedded)
    databases = Databases.on(infra)
    assert databases.table == embedded.url("kozyr")
    assert databases.matchmaking == embedded.url("kozyr_matchmaking")


async def test_make_run_creates_and_migrates_a_database_for_matchmaking(
    database_url: str, nats_url: str
) -> None:
    given = Infrastructure(database_url, nats_url)  # a server of KOZYR_DATABASE_URL
    databases = Databases.on(given)
    assert databases.table == database_url
    name = make_url(databases.matchmaking).database
    assert name == f"{make_url(database_url).database}_matchmaking"
    try:
        await create_and_migrate(given, databases)
        await create_and_migrate(given, databases)  # the next `make run`: nothing new
        for url in databases.urls:
            assert await missing_tables(url) == ()
    finally:
        admin = await asyncpg.connect(libpq_dsn(database_url))
        try:
            await admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        finally:
            await admin.close()


@pytest.fixture
def own_server(tmp_path: Path) -> Iterator[EmbeddedPostgres]:
    """A PostgreSQL of this test alone: the script makes a role, and roles are the
    whole server's."""
    server = EmbeddedPostgres(tmp_path / "pg", durable=False)
    server.start()
    try:
        yield server
    finally:
        server.stop()


def run_script(server: EmbeddedPostgres) -> None:
    """The script as the postgres image runs it: POSTGRES_USER, POSTGRES_DB and psql."""
    psql_dir = Path(EmbeddedPostgres._bin("psql")).parent
    env = {
        **os.environ,
        "PATH": f"{psql_dir}{os.pathsep}{os.environ.get('PATH', '')}",
        "PGHOST": "127.0.0.1",
        "PGPORT": str(server.port),
        "POSTGRES_USER": "postgres",
        "POSTGRES_DB": "kozyr",
        "KOZYR_MATCHMAKING_DB_PASSWORD": "a-test-password",
    }
    done = subprocess.run(["sh", str(SCRIPT)], env=env, capture_output=True, text=True)
    assert done.returncode == 0, done.stdout + done.stderr


async def test_the_postgres_script_gives_matchmaking_its_own_database_and_user(
    own_server: EmbeddedPostgres,
) -> None:
    admin = await asyncpg.connect(libpq_dsn(own_server.url()))
    try:
        await admin.execute('CREATE DATABASE "kozyr"')
    finally:
        await admin.close()
    run_script(own_server)
    run_script(own_server)  # safe to repeat (a server that already has its data)

    own = own_server.url("kozyr_matchmaking").replace("postgres@", "kozyr_matchmaking@")
    await migrate(own)  # as its owner
    assert await missing_tables(own) == ()
    table = own_server.url("kozyr").replace("postgres@", "kozyr_matchmaking@")
    with pytest.raises(asyncpg.InsufficientPrivilegeError):
        await asyncpg.connect(libpq_dsn(table))
