"""`python -m kozyr.clock`: the clock service process (stops gracefully on SIGTERM).

It waits for NATS before serving. Exit codes: 2 bad settings, 3 a NATS server without
message schedules (older than 2.12).
"""

from __future__ import annotations

import asyncio
import gc
import sys

from kozyr.bus.schedules import SchedulesUnsupported
from kozyr.clock.service import REQUIRED_SETTINGS, ClockService
from kozyr.clock.settings import ClockSettings
from kozyr.runtime import SettingsError, configure_logging_for, get_logger


async def run() -> None:
    settings = ClockSettings.load(required=REQUIRED_SETTINGS)
    configure_logging_for(settings)
    service = ClockService(settings)
    port = await service.start()
    gc.freeze()  # what is alive once up stays so: out of every collection
    get_logger("kozyr.clock").info("clock service ready", port=port)
    await service.run_until_signal()
    # The interpreter's last collection, at exit, would walk everything allocated since:
    # 1-2 s on a loaded node that a container's stop waits out (issue 23, defect 8).
    gc.freeze()


def main() -> int:
    try:
        asyncio.run(run())
    except SettingsError as error:
        print(f"kozyr.clock: {error}", file=sys.stderr)
        return 2
    except SchedulesUnsupported as error:
        print(f"kozyr.clock: {error}", file=sys.stderr)
        return 3
    return 0


if __name__ == "__main__":
    sys.exit(main())
