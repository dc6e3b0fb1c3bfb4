"""The moderators' command line (`kozyr replay`, `kozyr verify`) run as a real process."""

from __future__ import annotations

import asyncio
import json
import os
import sys
from dataclasses import dataclass
from typing import Any

CLI_TIMEOUT = 60.0


@dataclass(frozen=True)
class CliRun:
    exit_code: int
    stdout: str
    stderr: str

    def json(self) -> Any:
        return json.loads(self.stdout)


async def kozyr_cli(database_url: str, *args: str, **settings: str) -> CliRun:
    """`python -m kozyr.cli.main ARGS` with KOZYR_DATABASE_URL set, and `settings` as
    KOZYR_<NAME> variables (and nothing else of ours)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("KOZYR_")}
    env["KOZYR_DATABASE_URL"] = database_url
    env.update({f"KOZYR_{name.upper()}": value for name, value in settings.items()})
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "kozyr.cli.main",
        *args,
        env=env,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    try:
        async with asyncio.timeout(CLI_TIMEOUT):
            out, err = await process.communicate()
    except TimeoutError:
        process.kill()
        await process.wait()
        raise
    assert process.returncode is not None
    return CliRun(process.returncode, out.decode(), err.decode())
