"""`python -m kozyr.bots`: the bots service process (stops gracefully on SIGTERM).

It waits for NATS before serving. Exit code 2: bad settings.
"""

from __future__ import annotations

import sys

from kozyr.bots.service import REQUIRED_SETTINGS, BotsService
from kozyr.bots.settings import BotsSettings
from kozyr.runtime.process import serve


def main() -> int:
    return serve("bots", lambda: BotsSettings.load(required=REQUIRED_SETTINGS), BotsService)


if __name__ == "__main__":
    sys.exit(main())
