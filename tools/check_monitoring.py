"""`make lint`: the alert rules and the dashboard cannot drift from the code.

No promtool here (it is not on PyPI), so this checks what drifts in practice: every rule
has a name, an expression, a duration, a severity, a summary and a runbook link; every
expression's brackets balance; and every metric an expression names — with its label
matchers and `by (...)` labels — is one the services register (their `metrics` modules
are imported and their collectors read).

    python tools/check_monitoring.py [ALERTS.yml] [DASHBOARD.json]   exit 1 on a problem
"""

from __future__ import annotations

import importlib
import json
import pkgutil
import re
import sys
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import yaml
from prometheus_client import REGISTRY

import kozyr

ROOT = Path(__file__).resolve().parent.parent
ALERTS = ROOT / "deploy/monitoring/alerts.yml"
DASHBOARD = ROOT / "deploy/monitoring/dashboard.json"
SEVERITIES = {"warning", "critical"}
SUFFIXES = ("_bucket", "_count", "_sum", "_total", "_created")
ALWAYS = {"job", "instance"}
"""Labels Prometheus adds to every scraped series."""
METRIC = re.compile(r"\b(kozyr_[a-z0-9_]+)(\{[^}]*\})?")
MATCHER = re.compile(r"([a-zA-Z_][a-zA-Z0-9_]*)\s*(?:=~|!~|!=|=)")
GROUPING = re.compile(r"\b(?:by|without)\s*\(([^)]*)\)")
PAIRS = {"(": ")", "[": "]", "{": "}"}


def exported() -> dict[str, set[str]]:
    """Every metric family the services register → its label names."""
    for module in pkgutil.walk_packages(kozyr.__path__, "kozyr."):
        if module.name.endswith(".metrics"):
            importlib.import_module(module.name)
    families: dict[str, set[str]] = {}
    for collector in list(REGISTRY._collector_to_names):  # private: no public listing
        labels = set(getattr(collector, "_labelnames", ()))
        for name in REGISTRY._collector_to_names[collector]:
            families[name] = labels | ({"le"} if name.endswith("_bucket") else set())
    return families


def balanced(expr: str) -> bool:
    stack: list[str] = []
    for char in re.sub(r'"[^"]*"', '""', expr):
        if char in PAIRS:
            stack.append(PAIRS[char])
        elif char in PAIRS.values() and (not stack or stack.pop() != char):
            return False
    return not stack


def expression_problems(expr: str, families: Mapping[str, set[str]]) -> Iterator[str]:
    if not balanced(expr):
        yield f"unbalanced brackets in {expr!r}"
    seen_labels: set[str] = set(ALWAYS)
    for name, selector in METRIC.findall(expr):
        if name not in families:
            yield f"{name} is no metric the services export"
            continue
        seen_labels |= families[name]
        for label in MATCHER.findall(selector or ""):
            if label not in families[name] | ALWAYS:
                yield f"{name} has no label {label!r}"
    for group in GROUPING.findall(expr):
        for label in filter(None, (part.strip() for part in group.split(","))):
            if label not in seen_labels:
                yield f"`by ({group})` groups by {label!r}, which none of its metrics has"


def rule_problems(rules: Any, families: Mapping[str, set[str]]) -> Iterator[str]:
    groups = rules.get("groups") if isinstance(rules, dict) else None
    if not isinstance(groups, list) or not groups:
        yield "alerts: no `groups` list"
        return
    for group in groups:
        for rule in group.get("rules") or []:
            name = rule.get("alert") or "?"
            for field in ("alert", "expr", "for"):
                if not rule.get(field):
                    yield f"{name}: no {field!r}"
            if (rule.get("labels") or {}).get("severity") not in SEVERITIES:
                yield f"{name}: severity must be one of {sorted(SEVERITIES)}"
            annotations = rule.get("annotations") or {}
            for field in ("summary", "runbook"):
                if not annotations.get(field):
                    yield f"{name}: no {field!r} annotation"
            for problem in expression_problems(str(rule.get("expr", "")), families):
                yield f"{name}: {problem}"


def dashboard_problems(dashboard: Any, families: Mapping[str, set[str]]) -> Iterator[str]:
    panels = dashboard.get("panels") if isinstance(dashboard, dict) else None
    if not isinstance(panels, list) or not panels:
        yield "dashboard: no panels"
        return
    for panel in panels:
        for target in panel.get("targets") or []:
            for problem in expression_problems(str(target.get("expr", "")), families):
                yield f"panel {panel.get('title')!r}: {problem}"


def check(alerts: Path, dashboard: Path) -> list[str]:
    families = exported()
    problems = list(rule_problems(yaml.safe_load(alerts.read_text()), families))
    problems += dashboard_problems(json.loads(dashboard.read_text()), families)
    return problems


def main(argv: list[str]) -> int:
    alerts = Path(argv[1]) if len(argv) > 1 else ALERTS
    dashboard = Path(argv[2]) if len(argv) > 2 else DASHBOARD
    problems = check(alerts, dashboard)
    for problem in problems:
        print(f"check_monitoring: {problem}", file=sys.stderr)
    if not problems:
        print(f"check_monitoring: {alerts.name} and {dashboard.name} match the exported metrics")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
