"""`python -m kozyr.matchmaking`: the matchmaking service process (stops gracefully on
SIGTERM).

It waits for its database to be migrated, and for NATS, before serving. Exit code 2: bad settings.
"""

from __future__ import annotations

import sys

from kozyr.matchmaking.service import REQUIRED_SETTINGS, MatchmakingService
from kozyr.matchmaking.settings import MatchmakingSettings
from kozyr.runtime.process import serve


def main() -> int:
    return serve(
        "matchmaking",
        lambda: MatchmakingSettings.load(required=REQUIRED_SETTINGS),
        MatchmakingService,
    )


if __name__ == "__main__":
    sys.exit(main())
