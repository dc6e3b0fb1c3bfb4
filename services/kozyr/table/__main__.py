"""`python -m kozyr.table`: the table service process (stops gracefully on SIGTERM), or
with KOZYR_TABLE_WORKERS > 1 the supervisor of that many on one port (kozyr.table.workers)."""

from __future__ import annotations

import asyncio
import gc
import sys

from sqlalchemy.engine import make_url

from kozyr.runtime import SettingsError, configure_logging_for, get_logger
from kozyr.table import workers
from kozyr.table.service import REQUIRED_SETTINGS, TableService
from kozyr.table.settings import TableSettings

GC_THRESHOLDS = (10_000, 3, 330)
"""Python's collector (default 700, 10, 10) runs a full collection every ~70,000 net
allocations, and a full collection walks the whole heap: with 10,000 watch streams open
that is 0.8-1.6 s that every call in flight waits out (docs/benchmarks.md, issue 13).
Here a young collection waits for 10,000 net allocations (allocations minus
deallocations: as every move frees old views and table versions, the young generation
then holds ~35-40k objects at 1,000 tables in play), and the middle one for three of those:
a middle collection walks what survived the young ones since the last, so three keep
its pause short (~20-50 ms at 1,000 tables in play, where ten made it 50-100 ms and cost
that tail ~10 ms of p99: docs/benchmarks.md, issue 25). A full one waits for 330 middle
ones, ~1,000 young as before. What is alive once the service is up (modules,
descriptors, settings) is frozen out of every collection."""


async def run() -> None:
    settings = TableSettings.load(required=REQUIRED_SETTINGS)
    configure_logging_for(settings)
    service = TableService(settings)
    port = await service.start()
    gc.freeze()
    gc.set_threshold(*GC_THRESHOLDS)
    database = make_url(settings.database_url or "").render_as_string(hide_password=True)
    # the same URL `make run`'s banner prints (and .kozyr/stack.json holds)
    get_logger("kozyr.table").info("table service ready", port=port, database=database)
    await service.run_until_signal()


def main() -> int:
    try:
        settings = TableSettings.load(required=REQUIRED_SETTINGS)
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
