"""`python -m kozyr.eventstore.migrations [upgrade [REV] | downgrade REV] [--url URL]`."""

from __future__ import annotations

import argparse
import asyncio
import os
import sys

from kozyr.eventstore.migrations import downgrade, migrate


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m kozyr.eventstore.migrations")
    parser.add_argument("action", choices=["upgrade", "downgrade"], nargs="?", default="upgrade")
    parser.add_argument("revision", nargs="?", default=None)
    parser.add_argument("--url", default=os.environ.get("KOZYR_DATABASE_URL"))
    args = parser.parse_args(argv)
    if not args.url:
        parser.error("no database URL: pass --url or set KOZYR_DATABASE_URL")
    if args.action == "upgrade":
        asyncio.run(migrate(args.url, args.revision or "head"))
    else:
        if not args.revision:
            parser.error("downgrade needs a revision (e.g. base)")
        asyncio.run(downgrade(args.url, args.revision))
    return 0


if __name__ == "__main__":
    sys.exit(main())
