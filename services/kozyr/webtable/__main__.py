"""`python -m kozyr.webtable`: the web table page's server (stops on SIGTERM/SIGINT).

Exit code 2: bad settings.
"""

from __future__ import annotations

import asyncio
import signal
import sys

from aiohttp import web

from kozyr.runtime import SettingsError, configure_logging_for, get_logger, load_settings
from kozyr.runtime.auth import KeyConfigError
from kozyr.webtable.server import PageServer


async def run() -> None:
    settings = load_settings(database_url=None)
    configure_logging_for(settings)
    runner = web.AppRunner(PageServer(settings).app(), access_log=None)
    await runner.setup()
    site = web.TCPSite(runner, settings.webtable_host, settings.webtable_port)
    await site.start()
    get_logger("kozyr.webtable").info(
        "web table page ready", port=settings.webtable_port, dev_login=settings.webtable_dev_login
    )
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for signum in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(signum, stop.set)
    try:
        await stop.wait()
    finally:
        await runner.cleanup()


def main() -> int:
    try:
        asyncio.run(run())
    except (SettingsError, KeyConfigError) as error:
        print(f"kozyr.webtable: {error}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
