"""Cross-replica wake-ups: table events published on NATS poke local watchers.

The outbox relay publishes every appended event to `<root>.table.<id>.<Type>`; a plain
(core NATS) subscription to those subjects tells this replica that a table changed,
whichever replica appended. Losing a message only delays a watcher until its next poll.
"""

from __future__ import annotations

from typing import Any

import nats
from nats.aio.client import Client as NatsClient

from kozyr.bus.codec import POSITION_HEADER
from kozyr.runtime.logging import get_logger
from kozyr.table.notifier import TableNotifier
from kozyr.table.repository import TableRepository

log = get_logger("kozyr.table.listener")


class TableChangeListener:
    """Subscribes to `<root>.table.*.>` and notifies the watchers of each table."""

    def __init__(
        self, notifier: TableNotifier, subject_root: str, tables: TableRepository | None = None
    ) -> None:
        self._notifier = notifier
        self._tables = tables
        self._prefix = f"{subject_root}.table."
        self._nc: NatsClient | None = None

    async def start(self, servers: list[str]) -> None:
        self._nc = await nats.connect(
            servers=servers, name="kozyr-table-listener", max_reconnect_attempts=-1
        )
        await self._nc.subscribe(f"{self._prefix}*.>", cb=self._on_message)

    async def _on_message(self, msg: Any) -> None:
        subject: str = msg.subject
        table_id = subject[len(self._prefix) :].split(".", 1)[0]
        if self._already_known(table_id, msg.headers or {}):
            return  # this replica appended it: its watchers were woken at once
        self._notifier.notify(table_id)

    def _already_known(self, table_id: str, headers: dict[str, str]) -> bool:
        position = headers.get(POSITION_HEADER, "")
        cached = self._tables.cached(table_id) if self._tables is not None else None
        return cached is not None and position.isdigit() and int(position) <= cached.version

    async def close(self) -> None:
        if self._nc is not None:
            await self._nc.drain()
            self._nc = None
