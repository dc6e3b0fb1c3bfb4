"""Ports of kozyr's own servers and Docker's never meet (libs/kozyr/infra).

Two test runs side by side once failed a container's start: Docker drew a host port
that another process had bound meanwhile. Our picks are drawn outside the range Docker
and the kernel draw from, and a container that loses its port anyway is started again.
"""

from __future__ import annotations

import socket
from pathlib import Path
from typing import Any

import pytest

from kozyr.infra import free_port, servers
from kozyr.infra.provision import PORT_RACE_ATTEMPTS, running


def test_a_port_picked_for_a_server_is_below_the_kernels_ephemeral_range() -> None:
    start = int(Path("/proc/sys/net/ipv4/ip_local_port_range").read_text().split()[0])
    picks = [free_port() for _ in range(20)]

    assert all(20_000 <= port < start for port in picks), picks
    assert len(set(picks)) == len(picks)  # the ledger: never handed out twice


def test_a_port_someone_holds_is_never_picked(monkeypatch: pytest.MonkeyPatch) -> None:
    with socket.socket() as held:
        held.bind(("127.0.0.1", 0))
        port = held.getsockname()[1]
        draws = iter([port, port + 1 if port + 1 < 65536 else port - 1])
        monkeypatch.setattr("kozyr.infra.servers.random.randrange", lambda low, high: next(draws))

        assert servers._unbound_port() != port


@pytest.mark.parametrize(
    ("content", "expected"),
    [
        ("40000\t60999\n", (20_000, 40_000)),
        ("1024 65535", (20_000, 32_768)),
        ("", (20_000, 32_768)),
    ],
    ids=["below-the-range", "range-too-low", "unreadable"],
)
def test_the_draw_is_below_the_range_or_below_linuxs_default(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, content: str, expected: tuple[int, int]
) -> None:
    ranges = tmp_path / "ip_local_port_range"
    ranges.write_text(content)
    monkeypatch.setattr(servers, "_EPHEMERAL_PORTS", str(ranges))

    assert servers._picked_ports() == expected


class Container:
    """A testcontainers container's start and stop, as `running` uses them."""

    def __init__(self, failure: Exception | None, log: list[str]) -> None:
        self.failure, self.log = failure, log

    def start(self) -> Any:
        self.log.append("start")
        if self.failure is not None:
            raise self.failure
        return self

    def stop(self) -> None:
        self.log.append("stop")


LOST = RuntimeError(
    "Error starting userland proxy: listen tcp4 0.0.0.0:32789: bind: address already in use"
)


def test_a_container_that_lost_its_port_is_started_again_and_the_first_removed() -> None:
    log: list[str] = []
    failures = iter([LOST, None])

    with running(lambda: Container(next(failures), log)) as container:
        assert container.failure is None
        assert log == ["start", "stop", "start"]
    assert log == ["start", "stop", "start", "stop"]


def test_any_other_failure_of_a_container_is_raised_at_once() -> None:
    log: list[str] = []
    broken = RuntimeError("manifest unknown")

    with (
        pytest.raises(RuntimeError, match="manifest unknown"),
        running(lambda: Container(broken, log)),
    ):
        pass
    assert log == ["start", "stop"]


def test_a_port_lost_every_time_is_raised_after_the_last_attempt() -> None:
    log: list[str] = []

    with (
        pytest.raises(RuntimeError, match="address already in use"),
        running(lambda: Container(LOST, log)),
    ):
        pass
    assert log == ["start", "stop"] * PORT_RACE_ATTEMPTS
