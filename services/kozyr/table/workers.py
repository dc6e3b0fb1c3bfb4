"""Every core: `KOZYR_TABLE_WORKERS` table-service processes on one gRPC port.

One Python process runs on one core at a time, however many the machine has. With
KOZYR_TABLE_WORKERS=N, `python -m kozyr.table` becomes a small supervisor that starts N
worker processes (the same module, marked by `KOZYR_TABLE_WORKER` = their index), each
binding the same port with SO_REUSEPORT: the kernel spreads new connections over them
(a connection — one client channel — stays on its worker).

Nothing else is needed for correctness: the workers are replicas of the table service
(docs/architecture.md): the event store's version check orders their appends, one of
them leads the outbox relay, and a watcher on one worker is woken by NATS when another
appends (with the watch poll as the safety net). What they do not share is memory: each
caches its own tables and views, and a move made through one worker reaches a watcher
of another through the relay and NATS, a few milliseconds later than through its own.

The supervisor forwards SIGTERM/SIGINT to every worker and returns when all have
stopped; a worker that exits on its own stops the others, so the whole service exits
and its orchestrator restarts it whole (no half-alive service keeps taking calls).
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from collections.abc import Mapping
from types import FrameType

from kozyr.runtime import SettingsError, get_logger
from kozyr.runtime.settings import SettingsProblem
from kozyr.table.settings import TableSettings

WORKER_ENV = "KOZYR_TABLE_WORKER"
"""Set by the supervisor to each worker's index (0..N-1): this process serves."""

_log = get_logger("kozyr.table.workers")


def is_supervisor(settings: TableSettings, environ: Mapping[str, str] = os.environ) -> bool:
    """True when this process should start workers instead of serving itself."""
    return settings.table_workers > 1 and WORKER_ENV not in environ


def reuse_port_options(settings: TableSettings) -> list[tuple[str, int]]:
    """gRPC server options of a worker: share the port with the other workers."""
    return [("grpc.so_reuseport", 1)] if settings.table_workers > 1 else []


def worker_environment(
    settings: TableSettings, index: int, environ: Mapping[str, str] = os.environ
) -> dict[str, str]:
    """The environment of worker `index`: the supervisor's, marked, with its own
    metrics port (the configured one plus the index) when metrics are on."""
    env = dict(environ)
    env[WORKER_ENV] = str(index)
    if settings.metrics_port is not None:
        env["KOZYR_METRICS_PORT"] = str(settings.metrics_port + index)
    return env


def supervise(settings: TableSettings) -> int:
    """Run `settings.table_workers` workers until they stop; returns the exit code."""
    if settings.grpc_port == 0:
        reason = "must be fixed (not 0) when KOZYR_TABLE_WORKERS > 1: workers share it"
        raise SettingsError([SettingsProblem("KOZYR_GRPC_PORT", reason)])
    workers = [
        subprocess.Popen(
            [sys.executable, "-m", "kozyr.table"], env=worker_environment(settings, index)
        )
        for index in range(settings.table_workers)
    ]
    stopping = False

    def forward(signum: int, frame: FrameType | None) -> None:
        nonlocal stopping
        stopping = True
        for worker in workers:
            if worker.poll() is None:
                worker.send_signal(signum)

    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, forward)
    _log.info("table workers started", workers=len(workers), port=settings.grpc_port)
    code = 0
    running = list(workers)
    while running:
        pid, status = os.wait()
        exited = next((w for w in running if w.pid == pid), None)
        if exited is None:
            continue
        running.remove(exited)
        exited.returncode = os.waitstatus_to_exitcode(status)
        if not stopping:
            _log.error("table worker exited: stopping the others", code=exited.returncode)
            code = exited.returncode or 1
            forward(signal.SIGTERM, None)
    return code
