"""The table service's own settings (`KOZYR_WATCH_POLL_SECONDS`, `KOZYR_TABLE_WORKERS`)
on the shared `kozyr.runtime.Settings`.
"""

from __future__ import annotations

from pydantic import Field

from kozyr.runtime.settings import Settings


class TableSettings(Settings):
    """What `python -m kozyr.table` reads: the shared settings and its own."""

    watch_poll_seconds: float = Field(
        10.0,
        gt=0,
        description="How often the table service checks every watched table's version in "
        "one read: the bound on a watcher's delay when a NATS wake-up is lost.",
    )
    table_workers: int = Field(
        1,
        ge=1,
        le=64,
        description="Table-service processes serving the one gRPC port (SO_REUSEPORT): one "
        "per core; each is a replica of the others. Needs a fixed KOZYR_GRPC_PORT.",
    )
