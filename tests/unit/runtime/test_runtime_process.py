"""`kozyr.runtime.process.serve`: how every service process starts and ends.

The bots, clock and matchmaking processes are run for real with a bad variable (exit
code 2, every bad variable named, its own knob included); the mapping of a service's
own start-up failures to exit codes is checked in-process with a stand-in service.
"""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from kozyr.runtime.process import serve
from kozyr.runtime.settings import Settings


@pytest.mark.parametrize(
    ("service", "own"),
    [
        ("bots", "KOZYR_BOTS_LEVEL"),
        ("clock", "KOZYR_CLOCK_COVER_AFTER_SECONDS"),
        ("matchmaking", "KOZYR_MATCHMAKING_TICK_SECONDS"),
    ],
)
def test_a_service_with_bad_settings_exits_2_naming_them(service: str, own: str) -> None:
    env = {k: v for k, v in os.environ.items() if not k.upper().startswith("KOZYR_")}
    env |= {"KOZYR_GRPC_PORT": "seventy", own: "-5"}
    result = subprocess.run(
        [sys.executable, "-m", f"kozyr.{service}"],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert result.returncode == 2, result.stderr
    assert result.stderr.startswith(f"kozyr.{service}: invalid kozyr configuration")
    assert "KOZYR_GRPC_PORT" in result.stderr
    assert own in result.stderr


class NoSchedules(Exception):
    """A stand-in for a start-up failure a service names an exit code for."""


class Failing:
    def __init__(self, settings: Settings, error: Exception) -> None:
        self.error = error

    async def start(self) -> int:
        raise self.error

    async def run_until_signal(self) -> None:  # pragma: no cover - never started
        raise AssertionError


def test_a_named_start_up_failure_is_its_exit_code(capsys: pytest.CaptureFixture[str]) -> None:
    code = serve(
        "probe",
        lambda: Settings.load(log_level="ERROR"),
        lambda settings: Failing(settings, NoSchedules("NATS is older than 2.12")),
        exit_codes={NoSchedules: 3},
    )
    assert code == 3
    assert capsys.readouterr().err == "kozyr.probe: NATS is older than 2.12\n"


def test_any_other_failure_is_raised() -> None:
    with pytest.raises(RuntimeError, match="a bug"):
        serve(
            "probe",
            lambda: Settings.load(log_level="ERROR"),
            lambda settings: Failing(settings, RuntimeError("a bug")),
            exit_codes={NoSchedules: 3},
        )
