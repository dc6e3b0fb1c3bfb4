"""The run's own clock: its wall time, the machine's load and its slowest tests.

Printed at the end of every run (`make test` included), so a test that lands slow is
seen by whoever lands it. Under xdist the controller receives every worker's reports,
so the figures cover the whole run. A test's cost is its setup, call and teardown
together: a slow fixture counts against the test that pays for it.

A test that fails is named at once, with the run's minute, above the progress dots:
a ten-minute run shows its failures while it goes, and a run stopped early (Ctrl-C, a
CI limit) still says what had failed.
"""

from __future__ import annotations

import os
import time
from collections import defaultdict

import pytest

SLOWEST = 15


def _without_group(nodeid: str) -> str:
    """A test's id without the "@group" xdist's loadgroup appends (after any "[...]")."""
    head, bracket, tail = nodeid.rpartition("]")
    return head + bracket + tail.partition("@")[0]


class RunTiming:
    """A pytest plugin, registered by tests/conftest.py."""

    def __init__(self) -> None:
        self.started = time.monotonic()
        self.seconds: defaultdict[str, float] = defaultdict(float)
        self._reporter: pytest.TerminalReporter | None = None

    def pytest_sessionstart(self, session: pytest.Session) -> None:
        if not hasattr(session.config, "workerinput"):  # the controller's terminal only
            self._reporter = session.config.pluginmanager.get_plugin("terminalreporter")

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        nodeid = _without_group(report.nodeid)
        self.seconds[nodeid] += report.duration
        if report.failed and self._reporter is not None:
            minutes = (time.monotonic() - self.started) / 60
            # after the progress letter of this very report, so on a line of its own
            self._reporter.write(f"\nFAILED {nodeid} ({report.when}) at {minutes:.1f} min\n")

    def pytest_terminal_summary(self, terminalreporter: pytest.TerminalReporter) -> None:
        if not self.seconds:
            return
        wall = time.monotonic() - self.started
        load = ", ".join(f"{x:.2f}" for x in os.getloadavg())
        write = terminalreporter.write_line
        terminalreporter.section(f"the {SLOWEST} slowest tests (setup + call + teardown)")
        ranked = sorted(self.seconds.items(), key=lambda item: item[1], reverse=True)
        for nodeid, seconds in ranked[:SLOWEST]:
            write(f"{seconds:8.1f} s  {nodeid}")
        workers = getattr(terminalreporter.config.option, "numprocesses", None) or 1
        write(
            f"run: {len(self.seconds)} tests in {wall / 60:.1f} min wall "
            f"({sum(self.seconds.values()) / 60:.1f} min of test time); "
            f"load average at the end {load}; workers {workers}"
        )
