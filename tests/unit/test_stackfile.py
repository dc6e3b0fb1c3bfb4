"""`.kozyr/stack.json`: found from any folder below it, ignored once its stack is gone,
and never overriding a KOZYR_* variable that is set."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from kozyr import stackfile
from kozyr.stackfile import Stack

KEY = "a-dev-key-of-more-than-thirty-two-bytes-0123456789"


def _stack(pid: int) -> Stack:
    return Stack(
        pid=pid,
        database_url="postgresql+asyncpg://postgres@127.0.0.1:40001/kozyr",
        nats_url="nats://127.0.0.1:40002",
        jwt_key=KEY,
        jwt_algorithm="HS256",
        targets={"table": "127.0.0.1:40003", "clock": "127.0.0.1:40004"},
    )


def _exited() -> int:
    """The pid of a process that has exited."""
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    child.wait()
    return child.pid


def test_found_from_a_sub_folder_and_filling_only_unset_variables(tmp_path: Path) -> None:
    data = tmp_path / "checkout" / ".kozyr"
    data.mkdir(parents=True)
    written = _stack(os.getpid()).write(data)
    assert written.stat().st_mode & 0o777 == 0o600
    deep = tmp_path / "checkout" / "a" / "b"
    deep.mkdir(parents=True)
    assert stackfile.find(deep, env={}) == written

    env = {"KOZYR_NATS_URL": "nats://elsewhere:4222"}
    cwd = Path.cwd()
    os.chdir(deep)
    try:
        assert stackfile.defaults_from_stack(env) is not None
    finally:
        os.chdir(cwd)
    assert env == {
        "KOZYR_NATS_URL": "nats://elsewhere:4222",  # set: kept
        "KOZYR_DATABASE_URL": "postgresql+asyncpg://postgres@127.0.0.1:40001/kozyr",
        "KOZYR_JWT_KEY": KEY,
        "KOZYR_JWT_ALGORITHM": "HS256",
        "KOZYR_TABLE_TARGET": "127.0.0.1:40003",
        "KOZYR_CLOCK_TARGET": "127.0.0.1:40004",
    }


def test_a_configured_key_keeps_its_algorithm(tmp_path: Path) -> None:
    _stack(os.getpid()).write(tmp_path)
    env = {"KOZYR_DATA_DIR": str(tmp_path), "KOZYR_JWT_PRIVATE_KEY": "pem"}
    stackfile.defaults_from_stack(env)
    assert "KOZYR_JWT_KEY" not in env, "the stack's key would not match the private key"
    assert "KOZYR_JWT_ALGORITHM" not in env
    assert env["KOZYR_TABLE_TARGET"] == "127.0.0.1:40003"


def test_the_file_of_a_stack_that_is_gone_is_ignored(tmp_path: Path) -> None:
    _stack(_exited()).write(tmp_path)
    env = {"KOZYR_DATA_DIR": str(tmp_path)}
    assert stackfile.find(env=env) == tmp_path / "stack.json"
    assert stackfile.running(env=env) is None
    assert stackfile.defaults_from_stack(env) is None
    assert env == {"KOZYR_DATA_DIR": str(tmp_path)}


def test_KOZYR_DATA_DIR_names_the_one_place_to_look(tmp_path: Path) -> None:
    (tmp_path / ".kozyr").mkdir()
    _stack(os.getpid()).write(tmp_path / ".kozyr")
    elsewhere = tmp_path / "empty"
    elsewhere.mkdir()
    assert stackfile.find(tmp_path, env={"KOZYR_DATA_DIR": str(elsewhere)}) is None


def test_removed_when_the_stack_stops(tmp_path: Path) -> None:
    _stack(os.getpid()).write(tmp_path)
    stackfile.remove(tmp_path)
    stackfile.remove(tmp_path)  # twice is fine
    assert stackfile.find(env={"KOZYR_DATA_DIR": str(tmp_path)}) is None


def test_a_relative_data_dir_is_looked_for_from_the_current_folder_up(tmp_path: Path) -> None:
    """`KOZYR_DATA_DIR=dev-data make run` in the checkout keeps <checkout>/dev-data; the
    tools with the same variable find it from a sub-folder, as they find .kozyr."""
    data = tmp_path / "checkout" / "dev-data"
    data.mkdir(parents=True)
    written = _stack(os.getpid()).write(data)
    sub = tmp_path / "checkout" / "a" / "b"
    sub.mkdir(parents=True)
    env = {"KOZYR_DATA_DIR": "dev-data"}
    assert stackfile.find(sub, env) == written
    running = stackfile.running(sub, env)
    assert running is not None
    assert running.targets["table"] == "127.0.0.1:40003"
    assert stackfile.find(sub, {}) is None, "not where the default .kozyr would be"


def test_make_run_and_the_tools_agree_on_the_data_dir(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    assert stackfile.data_dir({}) == tmp_path / ".kozyr"
    assert stackfile.data_dir({"KOZYR_DATA_DIR": "dev-data"}) == tmp_path / "dev-data"
    assert stackfile.data_dir({"KOZYR_DATA_DIR": str(tmp_path / "x")}) == tmp_path / "x"
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert stackfile.data_dir({"KOZYR_DATA_DIR": "~/kd"}) == tmp_path / "home" / "kd"
