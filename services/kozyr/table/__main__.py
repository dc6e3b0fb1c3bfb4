"""`python -m kozyr.table`: the table service process (stops gracefully on SIGTERM), or
with KOZYR_TABLE_WORKERS > 1 the supervisor of that many on one port (kozyr.table.workers)."""

from __future__ import annotations

import asyncio
import sys

from kozyr.runtime import SettingsError, configure_logging_for, get_logger, load_settings
from kozyr.table import workers
from kozyr.table.service import REQUIRED_SETTINGS, TableService


async def run() -> None:
    settings = load_settings(required=REQUIRED_SETTINGS)
    configure_logging_for(settings)
    service = TableService(settings)
    port = await service.start()
    get_logger("kozyr.table").info("table service ready", port=port)
    await service.run_until_signal()


def main() -> int:
    try:
        settings = load_settings(required=REQUIRED_SETTINGS)
        if workers.is_supervisor(settings):
            configure_logging_for(settings)
            return workers.supervise(settings)
        asyncio.run(run())
    except SettingsError as error:
        print(f"kozyr.table: {error}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
