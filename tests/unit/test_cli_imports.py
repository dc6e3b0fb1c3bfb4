"""The light `kozyr` commands start light: `kozyr --help`, `kozyr token` and `kozyr
health` (and each one's `--help`) import no database, NATS, play TUI or service code.

Each runs as a process, the installed console script, next to the stack file of a
running `make run` in a custom KOZYR_DATA_DIR — whose database URL `kozyr token` must
leave unparsed (SQLAlchemy parses it) and whose table service `kozyr health` asks.
What is checked is what the process imported, never how long it took."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from kozyr.runtime.auth import Role, verify_token
from kozyr.stackfile import Stack
from tests.support.health import serving_health_port
from tests.support.imports import HEAVY, KOZYR, run_importing

KEY = "a-stack-secret-of-more-than-thirty-two-bytes-0123456789"


@pytest.fixture
def table_port() -> Iterator[int]:
    """A gRPC health server answering SERVING: the stack's table service."""
    with serving_health_port() as port:
        yield port


@pytest.fixture
def env(tmp_path: Path, table_port: int) -> dict[str, str]:
    """No KOZYR_* but KOZYR_DATA_DIR, which holds a running stack's file (this process
    stands for the stack)."""
    data = tmp_path / "kozyr-data"
    data.mkdir()
    Stack(
        pid=os.getpid(),
        database_url="postgresql+asyncpg://postgres@127.0.0.1:40001/kozyr",
        nats_url="nats://127.0.0.1:40002",
        jwt_key=KEY,
        jwt_algorithm="HS256",
        targets={"table": f"127.0.0.1:{table_port}"},
    ).write(data)
    clean = {k: v for k, v in os.environ.items() if not k.startswith("KOZYR_")}
    return {**clean, "KOZYR_DATA_DIR": str(data)}


LIGHT = [
    ["--help"],
    ["token", "ana"],
    ["token", "--help"],
    ["health"],
    ["health", "--help"],
]


@pytest.mark.parametrize("args", LIGHT, ids=" ".join)
def test_a_light_command_imports_nothing_heavy(
    args: list[str], env: dict[str, str], tmp_path: Path
) -> None:
    run = run_importing([str(KOZYR), *args], env, cwd=tmp_path)
    assert run.returncode == 0, run.stderr
    assert run.loaded(HEAVY) == []


def test_the_token_is_signed_with_the_stacks_key(env: dict[str, str], tmp_path: Path) -> None:
    run = run_importing([str(KOZYR), "token", "ana", "--role", "admin"], env, cwd=tmp_path)
    assert run.returncode == 0, run.stderr
    principal = verify_token(run.stdout.strip(), key=KEY)
    assert (principal.subject, principal.role) == ("ana", Role.ADMIN)


def test_health_asks_the_stacks_table_service(env: dict[str, str], tmp_path: Path) -> None:
    run = run_importing([str(KOZYR), "health"], env, cwd=tmp_path)
    assert (run.returncode, run.stdout.strip()) == (0, "SERVING")


def test_the_check_sees_a_heavy_import(env: dict[str, str]) -> None:
    """The detector itself: a process that loads SQLAlchemy is caught."""
    run = run_importing(["-c", "import sqlalchemy.engine"], env)
    assert run.returncode == 0, run.stderr
    assert "sqlalchemy.engine" in run.loaded(HEAVY)
