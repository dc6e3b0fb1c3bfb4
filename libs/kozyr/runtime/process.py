"""`python -m kozyr.<service>`: the one start-up and exit path of a service's process.

Load the service's settings (its own class on the shared `Settings`), configure logs,
start, say "<name> service ready", serve until SIGTERM; a bad setting ends the process
with exit code 2 and a message naming every bad variable, and a service may name other
start-up failures with codes of their own (the clock: 3 for a NATS without message
schedules). What is alive once up is frozen out of every garbage collection, and again
before exit: the interpreter's last collection would otherwise walk everything
allocated since — 1-2 s on a loaded node that a container's stop waits out (issue 23,
defect 8).
"""

from __future__ import annotations

import asyncio
import gc
import signal
import sys
from collections.abc import Callable, Mapping
from typing import Protocol, TypeVar

from kozyr.runtime.logging import configure_logging_for, get_logger
from kozyr.runtime.settings import Settings, SettingsError


class Service(Protocol):
    async def start(self) -> int:
        """Start serving; the port it listens on."""
        ...

    async def run_until_signal(self) -> None:
        """Serve until SIGTERM or SIGINT, then stop gracefully."""
        ...


S = TypeVar("S", bound=Settings)


def serve(
    name: str,
    load: Callable[[], S],
    build: Callable[[S], Service],
    *,
    exit_codes: Mapping[type[Exception], int] | None = None,
) -> int:
    """Run the service `name` (kozyr.<name>) to its end; the process's exit code."""
    try:
        asyncio.run(_run(name, load, build))
    except SettingsError as error:
        print(f"kozyr.{name}: {error}", file=sys.stderr)
        return 2
    except Exception as error:
        code = next((c for kind, c in (exit_codes or {}).items() if isinstance(error, kind)), None)
        if code is None:
            raise
        print(f"kozyr.{name}: {error}", file=sys.stderr)
        return code
    return 0


async def _run(name: str, load: Callable[[], S], build: Callable[[S], Service]) -> None:
    settings = load()
    configure_logging_for(settings)
    service = build(settings)
    port = await service.start()
    gc.freeze()  # what is alive once up stays so: out of every collection
    get_logger(f"kozyr.{name}").info(f"{name} service ready", port=port)
    await service.run_until_signal()
    gc.freeze()


async def wait_for_signal() -> None:
    """Return once SIGTERM or SIGINT arrives: the `run_until_signal` of a service that
    is not a gRPC server (the web edge, the page server), which then stops itself."""
    loop = asyncio.get_running_loop()
    received = asyncio.Event()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, received.set)
    try:
        await received.wait()
    finally:
        for sig in (signal.SIGTERM, signal.SIGINT):
            loop.remove_signal_handler(sig)
