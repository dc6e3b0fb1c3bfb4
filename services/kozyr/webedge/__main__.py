"""`python -m kozyr.webedge`: the gRPC-Web edge process (stops on SIGTERM).

Exit code 2: bad settings.
"""

from __future__ import annotations

import asyncio
import sys

from kozyr.runtime import SettingsError, configure_logging_for, get_logger, load_settings
from kozyr.webedge.service import REQUIRED_SETTINGS, WebEdge


async def run() -> None:
    settings = load_settings(required=REQUIRED_SETTINGS)
    configure_logging_for(settings)
    edge = WebEdge(settings)
    port = await edge.start()
    get_logger("kozyr.webedge").info("web edge ready", port=port)
    await edge.run_until_signal()


def main() -> int:
    try:
        asyncio.run(run())
    except SettingsError as error:
        print(f"kozyr.webedge: {error}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
