"""`python -m kozyr.webtable`: the web table page's server (stops on SIGTERM/SIGINT).

Exit code 2: bad settings (a dev login's signing key among them).
"""

from __future__ import annotations

import sys

from kozyr.runtime.auth import KeyConfigError
from kozyr.runtime.process import serve
from kozyr.webtable.server import PageServer
from kozyr.webtable.settings import WebTableSettings


def main() -> int:
    return serve(
        "webtable",
        lambda: WebTableSettings.load(database_url=None),
        PageServer,
        exit_codes={KeyConfigError: 2},
    )


if __name__ == "__main__":
    sys.exit(main())
