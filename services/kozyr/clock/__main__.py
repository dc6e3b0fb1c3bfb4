"""`python -m kozyr.clock`: the clock service process (stops gracefully on SIGTERM).

It waits for NATS before serving. Exit codes: 2 bad settings, 3 a NATS server without
message schedules (older than 2.12).
"""

from __future__ import annotations

import sys

from kozyr.bus.schedules import SchedulesUnsupported
from kozyr.clock.service import REQUIRED_SETTINGS, ClockService
from kozyr.clock.settings import ClockSettings
from kozyr.runtime.process import serve


def main() -> int:
    return serve(
        "clock",
        lambda: ClockSettings.load(required=REQUIRED_SETTINGS),
        ClockService,
        exit_codes={SchedulesUnsupported: 3},
    )


if __name__ == "__main__":
    sys.exit(main())
