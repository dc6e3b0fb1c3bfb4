"""`python -m kozyr.bots`: the bots service process (stops gracefully on SIGTERM).

It waits for NATS before serving. Exit code 2: bad settings.
"""

from __future__ import annotations

import asyncio
import gc
import sys

from kozyr.bots.service import REQUIRED_SETTINGS, BotsService
from kozyr.bots.settings import BotsSettings
from kozyr.runtime import SettingsError, configure_logging_for, get_logger


async def run() -> None:
    settings = BotsSettings.load(required=REQUIRED_SETTINGS)
    configure_logging_for(settings)
    service = BotsService(settings)
    port = await service.start()
    gc.freeze()  # what is alive once up stays so: out of every collection
    get_logger("kozyr.bots").info("bots service ready", port=port)
    await service.run_until_signal()
    # The interpreter's last collection, at exit, would walk everything allocated since:
    # 1-2 s on a loaded node that a container's stop waits out (issue 23, defect 8).
    gc.freeze()


def main() -> int:
    try:
        asyncio.run(run())
    except SettingsError as error:
        print(f"kozyr.bots: {error}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
