"""The TypeScript client's and page's own unit tests (clients/web/test/*.test.ts, built
by `make install`), run by Node's test runner from here so that `make test` stays the
one command. They start their gRPC-Web servers on 127.0.0.1 themselves. Skipped, with
the reason, where node or the build is missing."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest

WEB = Path(__file__).resolve().parents[3] / "clients" / "web"
BUILT_TESTS = WEB / "dist" / "test"


def test_web_client_unit_tests_pass() -> None:
    if shutil.which("node") is None:
        pytest.skip("node is not installed (the web client needs Node.js 20+)")
    if not any(BUILT_TESTS.glob("*.test.mjs")):
        pytest.skip("the web client is not built (clients/web/dist/test): run `make install`")
    run = subprocess.run(
        ["node", "--test", "--test-timeout=20000", str(BUILT_TESTS)],
        cwd=WEB,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert run.returncode == 0, run.stdout[-6000:] + run.stderr[-2000:]
    passed = re.search(r"^# pass (\d+)$", run.stdout, re.MULTILINE)
    assert passed, run.stdout[-2000:]
    assert int(passed.group(1)) >= 20, run.stdout[-2000:]
