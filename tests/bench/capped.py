"""A process's CPU capped through a cpu cgroup (issue 25, target 4: the load generator
capped, so that a table service of two workers has the second core and the clients do
not take it).

A cap is a CFS quota: `share` of one core per period, for every thread of the process
and of the children it starts inside. It needs a writable cpu cgroup — root on cgroup
v1 (`/sys/fs/cgroup/cpu`) or on cgroup v2 with the cpu controller; elsewhere `capped`
says why not and the run goes on uncapped, saying so in its figures.
"""

from __future__ import annotations

import argparse
import contextlib
import os
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

PERIOD_US = 100_000
"""The CFS period: the quota is `share` of it, spent by all the group's threads."""
ROOT = Path("/sys/fs/cgroup")


@dataclass(frozen=True)
class Hierarchy:
    """Where a cpu cgroup can be made, and how its quota is written."""

    root: Path
    v2: bool

    def quota_files(self, share: float) -> dict[str, str]:
        """The files that cap a group at `share` of one core, and their contents."""
        quota = max(1_000, round(share * PERIOD_US))  # the kernel's least quota is 1 ms
        if self.v2:
            return {"cpu.max": f"{quota} {PERIOD_US}"}
        return {"cpu.cfs_period_us": str(PERIOD_US), "cpu.cfs_quota_us": str(quota)}

    def home(self, pid: int) -> Path:
        """The cgroup `pid` belongs to now in this hierarchy, to be moved back to."""
        for entry in Path(f"/proc/{pid}/cgroup").read_text().splitlines():
            _, controllers, path = entry.split(":", 2)
            if (self.v2 and controllers == "") or "cpu" in controllers.split(","):
                return self.root / path.lstrip("/")
        return self.root


def core_share(text: str) -> float:
    """A `--client-cpu` value: a share of one core above 0 and at most the machine's
    cores (the kernel would turn 0 or less into its least quota, 1 ms a period)."""
    try:
        share = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number of cores: {text!r}") from None
    cores = os.cpu_count() or 1
    if not 0 < share <= cores:
        raise argparse.ArgumentTypeError(
            f"a share of the CPU above 0 and at most this machine's {cores} cores, got {text}"
        )
    return share


def hierarchy(root: Path = ROOT) -> Hierarchy | str:
    """The writable cpu hierarchy of this machine, else why there is none."""
    if "cpu" in _read(root / "cgroup.controllers").split():
        found = Hierarchy(root, v2=True)
    elif (root / "cpu" / "cpu.cfs_quota_us").exists():
        found = Hierarchy(root / "cpu", v2=False)
    else:
        return "no cpu cgroup controller on this machine"
    if not os.access(found.root, os.W_OK):
        return f"{found.root} is not writable (run the bench as root to cap the clients)"
    return found


@contextlib.contextmanager
def capped(share: float, pid: int | None = None) -> Iterator[str | None]:
    """Hold process `pid` (default: this one, every thread) to `share` of one core for
    the body; yields None when capped, else why it is not (the body runs uncapped)."""
    pid = os.getpid() if pid is None else pid
    found = hierarchy()
    if isinstance(found, str):
        yield found
        return
    if found.v2:
        with contextlib.suppress(OSError):  # the controller enabled for the children
            (found.root / "cgroup.subtree_control").write_text("+cpu")
    group = found.root / f"kozyr-capped-{pid}"
    home = found.home(pid)
    group.mkdir(exist_ok=True)
    try:
        for name, content in found.quota_files(share).items():
            (group / name).write_text(content)
        (group / "cgroup.procs").write_text(str(pid))
        try:
            yield None
        finally:
            with contextlib.suppress(ProcessLookupError, OSError):
                (home / "cgroup.procs").write_text(str(pid))
    finally:
        with contextlib.suppress(OSError):  # busy while a child started inside lives on
            group.rmdir()


def _read(path: Path) -> str:
    try:
        return path.read_text()
    except OSError:
        return ""
