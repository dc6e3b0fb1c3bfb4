"""tools/check_monitoring.py passes the repository's alert rules and dashboard, and fails
each kind of drift: an unknown metric, a label it does not have, a grouping by a label
none of its metrics has, unbalanced brackets, a rule without severity or runbook."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
import yaml

from tools.check_monitoring import ALERTS, DASHBOARD, check


def _copies(tmp_path: Path) -> tuple[Path, Path]:
    alerts, dashboard = tmp_path / "alerts.yml", tmp_path / "dashboard.json"
    shutil.copy(ALERTS, alerts)
    shutil.copy(DASHBOARD, dashboard)
    return alerts, dashboard


def test_the_repository_files_pass(tmp_path: Path) -> None:
    assert check(*_copies(tmp_path)) == []


@pytest.mark.parametrize(
    ("change", "expected"),
    [
        ({"expr": "max(kozyr_outbox_oldest_secs) > 30"}, "no metric the services export"),
        ({"expr": 'max(kozyr_outbox_oldest_seconds{table="x"}) > 30'}, "has no label 'table'"),
        ({"expr": "max by (table) (kozyr_outbox_oldest_seconds) > 30"}, "groups by 'table'"),
        ({"expr": "max(kozyr_outbox_oldest_seconds > 30"}, "unbalanced brackets"),
        ({"labels": {}}, "severity must be one of"),
        ({"annotations": {"summary": "x"}}, "no 'runbook' annotation"),
    ],
)
def test_each_drift_fails(tmp_path: Path, change: dict[str, object], expected: str) -> None:
    alerts, dashboard = _copies(tmp_path)
    rules = yaml.safe_load(alerts.read_text())
    rules["groups"][0]["rules"][0].update(change)
    alerts.write_text(yaml.safe_dump(rules))
    problems = check(alerts, dashboard)
    assert any(expected in p for p in problems), problems


def test_a_dashboard_panel_on_a_missing_metric_fails(tmp_path: Path) -> None:
    alerts, dashboard = _copies(tmp_path)
    board = json.loads(dashboard.read_text())
    board["panels"][0]["targets"][0]["expr"] = "rate(kozyr_nothing_total[1m])"
    dashboard.write_text(json.dumps(board))
    assert any("kozyr_nothing_total" in p for p in check(alerts, dashboard))
