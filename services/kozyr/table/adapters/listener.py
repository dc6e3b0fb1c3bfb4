"""Cross-replica wake-ups: table events published on NATS poke local watchers.

The outbox relay publishes every appended event to `<root>.table.<id>.<Type>` with its
stream position in a header; a plain (core NATS) subscription to those subjects tells
this replica which version a table has reached, whichever replica appended. Every
message is passed on: the notifier wakes watchers only for a version newer than any it
heard, so this process's own appends (already notified) cost nothing. Losing a message
only delays a watcher until the watch poller's next pass.

NATS is optional for play: the listener connects in the background, so the service
serves while NATS is down and wake-ups resume when it returns.
"""

from __future__ import annotations

import asyncio
import contextlib
from typing import Any

from nats.aio.client import Client as NatsClient

from kozyr.bus.codec import POSITION_HEADER
from kozyr.bus.connection import ConnectionState, connect_when_reachable
from kozyr.runtime.logging import get_logger
from kozyr.table.adapters.notifier import TableNotifier

log = get_logger("kozyr.table.listener")


class TableChangeListener:
    """Subscribes to `<root>.table.*.>` and reports each event's position to the notifier."""

    def __init__(self, notifier: TableNotifier, subject_root: str) -> None:
        self._notifier = notifier
        self._prefix = f"{subject_root}.table."
        self._nc: NatsClient | None = None
        self._connecting: asyncio.Task[None] | None = None
        self.state = ConnectionState(log, "NATS (table wake-ups)")

    def start(self, servers: list[str]) -> None:
        """Connect and subscribe in the background (returns at once)."""
        self._connecting = asyncio.create_task(self._connect(servers), name="table-listener")

    async def _connect(self, servers: list[str]) -> None:
        self._nc = await connect_when_reachable(
            servers, name="kozyr-table-listener", state=self.state
        )
        await self._nc.subscribe(f"{self._prefix}*.>", cb=self._on_message)

    async def _on_message(self, msg: Any) -> None:
        subject: str = msg.subject
        table_id = subject[len(self._prefix) :].split(".", 1)[0]
        position = (msg.headers or {}).get(POSITION_HEADER, "")
        if position.isdigit():
            self._notifier.notify(table_id, int(position))

    async def close(self) -> None:
        if self._connecting is not None:
            self._connecting.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await self._connecting
            self._connecting = None
        if self._nc is not None:
            with contextlib.suppress(Exception):
                await self._nc.drain()
            self._nc = None
