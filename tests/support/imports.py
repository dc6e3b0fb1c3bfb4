"""What a command imports: run it as a process under `python -X importtime` and read
the modules it loaded from stderr (the command runs unmodified; nothing is timed)."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path

KOZYR = Path(sys.executable).parent / "kozyr"
"""The console script `make install` puts in .venv/bin: the `kozyr` users run."""

HEAVY = (
    "sqlalchemy",
    "alembic",
    "asyncpg",
    "textual",
    "nats",
    "structlog",
    "opentelemetry",
    "kozyr.eventstore",
    "kozyr.bus",
    "kozyr.tablewire",
    "kozyr.client",
    "kozyr.table",
    "kozyr.matchmaking",
    "kozyr.bots",
    "kozyr.clock",
)
"""What a light command must not load: the database and NATS stacks, the play TUI,
the services' logging and tracing, the event log's code and every service package."""


@dataclass(frozen=True)
class Run:
    """A finished command: its exit code, its output and every module it imported."""

    returncode: int
    stdout: str
    stderr: str
    modules: frozenset[str]

    def loaded(self, packages: Iterable[str]) -> list[str]:
        """The modules of `packages` (each a package or module name) this run imported."""
        return sorted(
            name
            for name in self.modules
            if any(name == p or name.startswith(f"{p}.") for p in packages)
        )


def run_importing(command: list[str], env: Mapping[str, str], cwd: Path | None = None) -> Run:
    """`python -X importtime COMMAND…` (a script path or `-m module`)."""
    done = subprocess.run(
        [sys.executable, "-X", "importtime", *command],
        env=dict(env),
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    modules: set[str] = set()
    other: list[str] = []
    for line in done.stderr.splitlines():
        if not line.startswith("import time:"):
            other.append(line)
        elif "|" in line and "imported package" not in line:
            modules.add(line.rsplit("|", 1)[1].strip())
    return Run(done.returncode, done.stdout, "\n".join(other), frozenset(modules))
