"""KOZYR_TABLE_WORKERS: who supervises, what each worker gets, what is refused.

The processes themselves (two workers on one port, a dead worker stopping the service)
are tested end to end in tests/e2e/test_e2e_workers.py.
"""

from __future__ import annotations

import pytest

from kozyr.runtime import SettingsError
from kozyr.table import workers
from kozyr.table.settings import TableSettings


def test_one_worker_is_the_service_itself() -> None:
    settings = TableSettings.load(grpc_port=5000)
    assert settings.table_workers == 1
    assert not workers.is_supervisor(settings, {})
    assert workers.reuse_port_options(settings) == []


def test_with_more_the_first_process_supervises_and_its_workers_serve() -> None:
    settings = TableSettings.load(table_workers=3, grpc_port=5000, metrics_port=9100)
    assert workers.is_supervisor(settings, {})
    env = workers.worker_environment(settings, 2, {"PATH": "/bin"})
    assert env == {"PATH": "/bin", workers.WORKER_ENV: "2", "KOZYR_METRICS_PORT": "9102"}
    assert not workers.is_supervisor(settings, env)
    assert workers.reuse_port_options(settings) == [("grpc.so_reuseport", 1)]


def test_workers_need_a_fixed_port_and_a_sane_count() -> None:
    with pytest.raises(SettingsError, match="KOZYR_GRPC_PORT"):
        workers.supervise(TableSettings.load(table_workers=2, grpc_port=0))
    with pytest.raises(SettingsError, match="KOZYR_TABLE_WORKERS"):
        TableSettings.load(table_workers=0)
