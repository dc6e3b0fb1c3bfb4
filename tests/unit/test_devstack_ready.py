"""`make run` says "kozyr is running" only once every service serves, and the `kozyr`
tools find its data folder as it does (KOZYR_DATA_DIR).

The supervisor runs real processes: stand-in services (`tests.support.gated_health`)
that listen at once but answer NOT_SERVING until the test lets each of them serve —
a service that has started is not a service that serves. The whole `make run` is
tests/e2e/test_e2e_devstack.py."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from kozyr import devstack, health
from kozyr.devstack import (
    DEV_JWT_KEY_FILE,
    ServiceProcess,
    Supervisor,
    finding_the_stack,
    names,
    nats_lines,
)
from kozyr.infra import Infrastructure, free_port
from kozyr.runtime.auth import verify_token

REPO = Path(__file__).resolve().parents[2]
KOZYR = Path(sys.executable).parent / "kozyr"
KEY = "a-stack-secret-of-more-than-thirty-two-bytes-0123456789"
SECONDS = 60.0


def wait_until(check: Callable[[], bool], what: str) -> None:
    deadline = time.monotonic() + SECONDS
    while not check():
        assert time.monotonic() < deadline, f"not in {SECONDS} s: {what}"
        time.sleep(0.05)


def answers(svc: ServiceProcess) -> str | None:
    """The service's health status, None while nobody listens."""
    try:
        return health.status(f"127.0.0.1:{svc.port}", timeout=1.0, env={})
    except health.ProbeError:
        return None


class Running:
    """A Supervisor of stand-in services running in a thread, its `on_ready` recorded."""

    def __init__(self, names: list[str]) -> None:
        self.services = [
            ServiceProcess(n, "tests.support.gated_health", free_port()) for n in names
        ]
        env = {k: v for k, v in os.environ.items() if not k.startswith("KOZYR_")}
        self.supervisor = Supervisor(self.services, {**env, "PYTHONPATH": str(REPO)})
        self.ready = threading.Event()
        self.seen_at_ready: list[dict[str, str | None]] = []
        self.pending_at_ready: list[list[str]] = []
        self.thread = threading.Thread(target=self.supervisor.run, args=(self.on_ready,))

    def on_ready(self) -> None:
        """What the supervisor still awaited, and what each service answers, right when
        it calls this (in its own thread: whatever the test does meanwhile)."""
        self.pending_at_ready.append([svc.name for svc in self.supervisor.pending])
        self.seen_at_ready.append({svc.name: answers(svc) for svc in self.services})
        self.ready.set()

    def serve(self, svc: ServiceProcess) -> None:
        assert svc.proc is not None
        os.kill(svc.proc.pid, signal.SIGUSR1)

    def stop(self) -> None:
        self.supervisor.stopping.set()
        self.thread.join(SECONDS)
        self.supervisor.stop()


@pytest.fixture
def running(monkeypatch: pytest.MonkeyPatch) -> Iterator[Running]:
    monkeypatch.setattr(devstack, "STILL_WAITING_SECONDS", 0.2)
    stack = Running(["table", "clock"])
    stack.thread.start()
    try:
        yield stack
    finally:
        stack.stop()


def test_ready_only_once_every_service_serves(
    running: Running, capsys: pytest.CaptureFixture[str]
) -> None:
    printed: list[str] = []

    def says(text: str) -> bool:
        printed.append(capsys.readouterr().out)
        return text in "".join(printed)

    table, clock = running.services
    wait_until(lambda: answers(table) == answers(clock) == "NOT_SERVING", "both listen")
    assert says("waiting for table and clock to serve")
    running.serve(table)
    wait_until(lambda: running.supervisor.pending == [clock], "the table is seen serving")
    assert not running.ready.is_set(), "the clock does not serve yet"
    wait_until(lambda: says("still waiting for clock ("), "a line naming the clock alone")

    running.serve(clock)
    assert running.ready.wait(SECONDS)
    assert running.pending_at_ready == [[]], "called once, nothing awaited any more"
    assert running.seen_at_ready == [{"table": "SERVING", "clock": "SERVING"}]


def test_the_services_names_read_as_a_sentence() -> None:
    listed = [ServiceProcess(n, "m", 1) for n in ("table", "bots", "clock")]
    assert names(listed) == "table, bots and clock"
    assert names(listed[:1]) == "table"


def test_the_banner_says_how_the_tools_find_the_stack(tmp_path: Path) -> None:
    default = tmp_path / ".kozyr"
    line = finding_the_stack(default, default / "stack.json", tmp_path)
    assert line == f"`kozyr` run anywhere in this checkout finds the stack in {default}/stack.json"
    custom = tmp_path / "elsewhere"
    line = finding_the_stack(custom, custom / "stack.json", tmp_path)
    assert line.endswith(f"export KOZYR_DATA_DIR={custom}")


def test_a_relative_data_dir_is_found_from_a_sub_folder_as_the_default_is(
    tmp_path: Path,
) -> None:
    """`KOZYR_DATA_DIR=dev-data make run` in the checkout keeps its data in
    <checkout>/dev-data; `kozyr token` with the same variable finds the dev key from a
    sub-folder of the checkout, as it does .kozyr/."""
    data = tmp_path / "checkout" / "dev-data"
    data.mkdir(parents=True)
    (data / DEV_JWT_KEY_FILE).write_text(KEY + "\n")
    sub = tmp_path / "checkout" / "docs" / "deep"
    sub.mkdir(parents=True)
    env = {k: v for k, v in os.environ.items() if not k.startswith("KOZYR_")}
    minted = subprocess.run(
        [str(KOZYR), "token", "ana"],
        cwd=sub,
        env={**env, "KOZYR_DATA_DIR": "dev-data"},
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert minted.returncode == 0, minted.stderr
    assert verify_token(minted.stdout.strip(), key=KEY).subject == "ana"


def test_the_banner_hides_a_database_password(tmp_path: Path) -> None:
    """On a testcontainers server the URLs hold a password: the banner (a terminal's
    scroll-back, a CI log) shows `***`; the stack file, its owner's alone, keeps it."""
    url = "postgresql+asyncpg://kozyr:s3cret-pw@127.0.0.1:5433/kozyr"
    infra = Infrastructure(
        url, "nats://127.0.0.1:4222", {"postgres": "testcontainers", "nats": "testcontainers"}
    )
    shown = devstack.banner(infra, devstack.Databases.on(infra), [], KEY, tmp_path)
    assert "s3cret-pw" not in shown
    assert "postgresql+asyncpg://kozyr:***@127.0.0.1:5433/kozyr " in shown
    assert "postgresql+asyncpg://kozyr:***@127.0.0.1:5433/kozyr_matchmaking " in shown


def test_the_banner_warns_that_nats_without_credentials_is_admin(tmp_path: Path) -> None:
    """The embedded NATS admits a connection without credentials as its admin: the
    banner says so beside its address; a NATS of one's own (its own users) gets no such
    line."""
    embedded = nats_lines("nats://127.0.0.1:4222", "embedded", True, tmp_path)
    assert embedded[0].startswith("  NATS        nats://127.0.0.1:4222   (embedded; one user")
    assert "WITHOUT credentials is the NATS admin" in embedded[1]
    own = nats_lines("nats://nats:4222", "KOZYR_NATS_URL", False, tmp_path)
    assert own == ["  NATS        nats://nats:4222   (KOZYR_NATS_URL; its own users)"]
