"""`.kozyr/stack.json`: where the stack of `make run` is, for the tools of the checkout.

`make run` picks new ports for its embedded PostgreSQL and NATS at every start, and
signs tokens with a dev key of its own; a developer's `kozyr replay` or `kozyr token`
should not need any of that exported by hand. So while it runs, the dev stack keeps
this file (mode 0600: it holds the dev key) with its endpoints and key, and removes it
when it stops. A file left behind by a stack that was killed names a process that is
gone: it is stale, and ignored.

`kozyr` finds the file in the data folder `make run` uses: $KOZYR_DATA_DIR, default
`.kozyr`. An absolute one is the one place to look; a relative one (like the default)
is relative to where `make run` ran — the checkout's root — so it is looked for from the
current directory up, from any folder of the checkout (`find_file`). Every unset
`KOZYR_*` variable is filled in from the file (`defaults_from_stack`): the environment
always wins. A stack whose KOZYR_DATA_DIR lies outside the checkout is found by the
tools only where the same KOZYR_DATA_DIR is set (the banner of `make run` says so).
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping, MutableMapping
from dataclasses import asdict, dataclass, field
from pathlib import Path

STACK_FILE = "stack.json"
DATA_DIR = ".kozyr"


@dataclass(frozen=True)
class Stack:
    """What a running `make run` tells the tools."""

    pid: int
    """The dev stack's process: the file is stale once it is gone."""
    database_url: str
    """The table service's database (the event log `replay` and `verify` read)."""
    nats_url: str
    """NATS as a tool connects to it: without credentials, an admin's rights."""
    jwt_key: str
    jwt_algorithm: str
    targets: dict[str, str]
    """host:port of each service's gRPC server, by service name."""
    databases: dict[str, str] = field(default_factory=dict)
    """Every database of the stack, by the service that owns it."""

    def environment(self) -> dict[str, str]:
        """The `KOZYR_*` variables this stack stands for."""
        env = {
            "KOZYR_DATABASE_URL": self.database_url,
            "KOZYR_NATS_URL": self.nats_url,
            "KOZYR_JWT_KEY": self.jwt_key,
            "KOZYR_JWT_ALGORITHM": self.jwt_algorithm,
        }
        env.update({f"KOZYR_{name.upper()}_TARGET": t for name, t in self.targets.items()})
        return env

    def write(self, data_dir: Path) -> Path:
        """Write the file atomically (readable by its owner only); its path."""
        path = data_dir / STACK_FILE
        scratch = path.with_suffix(".tmp")
        scratch.touch(mode=0o600)
        scratch.chmod(0o600)
        scratch.write_text(json.dumps(asdict(self), indent=2) + "\n")
        scratch.replace(path)
        return path


def announce(
    data_dir: Path, env: Mapping[str, str], services: Mapping[str, Mapping[str, str]]
) -> Path:
    """Write the file of the stack this process runs: `env` is what every service gets,
    `services` each service's own additions (its database, if it keeps one; its NATS
    user). The tools' database is the table service's: its event log."""
    databases = {
        name: own["KOZYR_DATABASE_URL"]
        for name, own in services.items()
        if "KOZYR_DATABASE_URL" in own
    }
    stack = Stack(
        pid=os.getpid(),
        database_url=databases["table"],
        nats_url=env["KOZYR_NATS_URL"],
        jwt_key=env["KOZYR_JWT_KEY"],
        jwt_algorithm=env.get("KOZYR_JWT_ALGORITHM", "HS256"),
        targets={name: env[f"KOZYR_{name.upper()}_TARGET"] for name in services},
        databases=databases,
    )
    return stack.write(data_dir)


def remove(data_dir: Path) -> None:
    """The stack stopped: no tool should look for it any more."""
    (data_dir / STACK_FILE).unlink(missing_ok=True)


def data_dir(env: Mapping[str, str] = os.environ) -> Path:
    """The data folder `make run` keeps (and makes): $KOZYR_DATA_DIR, else `.kozyr`, a
    relative one in the current directory (the checkout's root under `make run`)."""
    return Path(env.get("KOZYR_DATA_DIR") or DATA_DIR).expanduser().resolve()


def find_file(
    name: str, start: Path | None = None, env: Mapping[str, str] = os.environ
) -> Path | None:
    """`name` in the data folder of `make run`: in $KOZYR_DATA_DIR when it is absolute;
    else the nearest `<folder>/<KOZYR_DATA_DIR or .kozyr>/<name>` from `start` (default:
    the current directory) up. None when there is none."""
    relative = Path(env.get("KOZYR_DATA_DIR") or DATA_DIR).expanduser()
    here = (start or Path.cwd()).resolve()
    folders = [here] if relative.is_absolute() else [here, *here.parents]
    for folder in folders:
        path = folder / relative / name
        if path.is_file():
            return path
    return None


def find(start: Path | None = None, env: Mapping[str, str] = os.environ) -> Path | None:
    """The stack file of `make run` (`find_file`); None when there is none."""
    return find_file(STACK_FILE, start, env)


def read(path: Path) -> Stack | None:
    """The stack the file describes, None when it is stale or unreadable."""
    try:
        stack = Stack(**json.loads(path.read_text()))
    except (OSError, ValueError, TypeError):
        return None
    return stack if _alive(stack.pid) else None


def running(start: Path | None = None, env: Mapping[str, str] = os.environ) -> Stack | None:
    """The stack of `make run` running for this folder, if any."""
    path = find(start, env)
    return read(path) if path is not None else None


def defaults_from_stack(env: MutableMapping[str, str] = os.environ) -> Stack | None:
    """Fill each unset `KOZYR_*` variable from the running stack (the environment wins;
    a configured key keeps its configured algorithm). Returns the stack used, if any."""
    stack = running(env=env)
    if stack is None:
        return None
    given = stack.environment()
    if env.get("KOZYR_JWT_KEY") or env.get("KOZYR_JWT_PRIVATE_KEY"):
        given.pop("KOZYR_JWT_KEY")
        given.pop("KOZYR_JWT_ALGORITHM")
    for name, value in given.items():
        if not env.get(name):
            env[name] = value
    return stack


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # someone else's process: alive
        return True
    return True
