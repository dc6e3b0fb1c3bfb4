"""`python -m kozyr.webedge`: the gRPC-Web edge process (stops on SIGTERM).

Exit code 2: bad settings.
"""

from __future__ import annotations

import sys

from kozyr.runtime.process import serve
from kozyr.webedge.service import REQUIRED_SETTINGS, WebEdge
from kozyr.webedge.settings import WebEdgeSettings


def main() -> int:
    return serve("webedge", lambda: WebEdgeSettings.load(required=REQUIRED_SETTINGS), WebEdge)


if __name__ == "__main__":
    sys.exit(main())
