"""How `make test` runs: its closing report and its xdist groups (tests/conftest.py).

Each inner run below is a real pytest process with workers, as `make test` starts
one, over the `report_*` functions of this file only.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.support.timing import SLOWEST

WHERE_VAR = "KOZYR_TEST_REPORT_WORKERS"
"""The folder where each inner test notes the worker that ran it."""
FAIL_VAR = "KOZYR_TEST_REPORT_FAIL"
"""Set: `report_fails_when_asked` fails (the inner run of the failure report)."""


@pytest.fixture(scope="module")
def shared_by_the_module() -> str:
    """A module-scoped fixture: a whole game played once, in the real suite."""
    return os.environ.get("PYTEST_XDIST_WORKER", "none")


def _note(name: str) -> None:
    folder = Path(os.environ[WHERE_VAR])
    (folder / name).write_text(os.environ.get("PYTEST_XDIST_WORKER", "none"))


@pytest.mark.parametrize("number", range(6))
def report_uses_the_module_fixture(shared_by_the_module: str, number: int) -> None:
    _note(f"grouped-{number}")


@pytest.mark.parametrize("number", range(9))
def report_stands_alone(number: int) -> None:
    _note(f"alone-{number}")


def report_the_slowest() -> None:
    time.sleep(0.6)  # the duration is what the report is about


def report_fails_when_asked() -> None:
    assert FAIL_VAR not in os.environ, "asked to fail"


def _inner_run(tmp_path: Path, *, failing: bool = False) -> tuple[str, dict[str, str]]:
    where = tmp_path / "where"
    where.mkdir()
    command = [
        sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-n", "2",
        "--dist", "loadgroup", "-o", "python_functions=report_*", __file__,
    ]  # fmt: skip
    env = {**os.environ, WHERE_VAR: str(where)} | ({FAIL_VAR: "1"} if failing else {})
    run = subprocess.run(command, env=env, capture_output=True, text=True, timeout=180)
    assert run.returncode == (1 if failing else 0), run.stdout + run.stderr
    return run.stdout, {p.name: p.read_text() for p in where.iterdir()}


def test_a_run_ends_with_its_wall_time_and_its_slowest_tests(tmp_path: Path) -> None:
    output, _ = _inner_run(tmp_path)
    section = output[output.index(f"the {SLOWEST} slowest tests") :]
    rows = re.findall(r"^\s*([0-9.]+) s  (\S+)$", section, re.MULTILINE)
    assert len(rows) == SLOWEST, section
    seconds = [float(s) for s, _ in rows]
    assert seconds == sorted(seconds, reverse=True), "slowest first"
    assert rows[0][1].endswith("::report_the_slowest")
    assert not [name for _, name in rows if "@" in name], "named without their xdist group"
    summary = re.search(r"^run: 17 tests in [0-9.]+ min wall .* workers 2$", section, re.MULTILINE)
    assert summary, section
    assert "load average at the end" in summary.group(0)


def test_tests_sharing_a_module_fixture_run_on_one_worker(tmp_path: Path) -> None:
    """Else each worker would set the fixture up again (a whole game, in e2e)."""
    _, workers = _inner_run(tmp_path)
    grouped = {w for name, w in workers.items() if name.startswith("grouped-")}
    alone = {w for name, w in workers.items() if name.startswith("alone-")}
    assert len([n for n in workers if n.startswith("grouped-")]) == 6
    assert len(grouped) == 1, workers
    assert grouped != {"none"}, "the inner run had workers"
    assert len(alone | grouped) == 2, "the others went to whichever worker was free"


def test_a_failure_is_named_while_the_run_goes(tmp_path: Path) -> None:
    """Named as it fails, above the progress dots, not only in the closing summary."""
    output, _ = _inner_run(tmp_path, failing=True)
    named = re.search(
        r"^FAILED \S+::report_fails_when_asked \(call\) at [0-9.]+ min$", output, re.MULTILINE
    )
    assert named, output
    assert named.start() < output.index("short test summary"), "before the run's end"
    assert "FAILED" not in output.replace(named.group(0), "").split("short test summary")[0]
