"""`python -m kozyr.matchmaking`: the matchmaking service process (stops gracefully on
SIGTERM).

It waits for its database to be migrated, and for NATS, before serving. Exit code 2: bad settings.
"""

from __future__ import annotations

import asyncio
import gc
import sys

from kozyr.matchmaking.service import REQUIRED_SETTINGS, MatchmakingService
from kozyr.matchmaking.settings import MatchmakingSettings
from kozyr.runtime import SettingsError, configure_logging_for, get_logger


async def run() -> None:
    settings = MatchmakingSettings.load(required=REQUIRED_SETTINGS)
    configure_logging_for(settings)
    service = MatchmakingService(settings)
    port = await service.start()
    gc.freeze()  # what is alive once up stays so: out of every collection
    get_logger("kozyr.matchmaking").info("matchmaking service ready", port=port)
    await service.run_until_signal()
    # The interpreter's last collection, at exit, would walk everything allocated since:
    # 1-2 s on a loaded node that a container's stop waits out (issue 23, defect 8).
    gc.freeze()


def main() -> int:
    try:
        asyncio.run(run())
    except SettingsError as error:
        print(f"kozyr.matchmaking: {error}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
