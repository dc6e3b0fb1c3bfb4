"""Two test runs on one machine share no temporary folder (tests/conftest.py).

Each inner run below is a real pytest process started the way `make test` starts one;
both run at once, and each reports the base temporary folder it was given.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from tests.conftest import _KEPT, RUN_DIR_PREFIX, _prune_kept_runs

REPORT_VAR = "KOZYR_TEST_REPORT_BASETEMP"


def report_basetemp(tmp_path_factory: pytest.TempPathFactory) -> None:
    """Collected only by the inner runs (`-o python_functions=report_*`)."""
    Path(os.environ[REPORT_VAR]).write_text(str(tmp_path_factory.getbasetemp()))


def test_two_runs_at_once_get_base_temps_of_their_own(tmp_path: Path) -> None:
    runs = []
    for number in range(2):
        report = tmp_path / f"run{number}.txt"
        env = {**os.environ, REPORT_VAR: str(report)}
        command = [
            sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
            "-o", "python_functions=report_*", f"{__file__}::report_basetemp",
        ]  # fmt: skip
        runs.append((report, subprocess.Popen(command, env=env, stdout=subprocess.PIPE)))
    basetemps = []
    for report, process in runs:
        output, _ = process.communicate(timeout=120)
        assert process.returncode == 0, output.decode()
        basetemps.append(Path(report.read_text()))
    first, second = basetemps
    assert first != second
    shared_root = Path(tempfile.gettempdir()).resolve() / "pytest-of-"
    for basetemp in basetemps:
        assert not str(basetemp).startswith(str(shared_root)), basetemp
        assert basetemp.parent.name.startswith(RUN_DIR_PREFIX)
        assert not basetemp.parent.exists(), "a run that passed removes its folder"


def test_only_the_newest_folders_of_failed_runs_are_kept(tmp_path: Path) -> None:
    """A run still going (no mark yet) is never pruned, however old its folder."""
    going = tmp_path / f"{RUN_DIR_PREFIX}going"
    going.mkdir()
    failed = []
    for number in range(5):
        run_dir = tmp_path / f"{RUN_DIR_PREFIX}{number}"
        run_dir.mkdir()
        (run_dir / _KEPT).touch()
        os.utime(run_dir / _KEPT, (1000 + number, 1000 + number))
        failed.append(run_dir)
    _prune_kept_runs(tmp_path, keep=3)
    assert sorted(tmp_path.iterdir()) == sorted([going, *failed[2:]])
