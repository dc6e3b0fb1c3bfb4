"""Wake-ups for WatchTable: "table X changed", from this process or from NATS.

A watcher takes the table's current `changed` event *before* loading the table and waits
on it after sending its view, so a change between the two is never missed. Each
notification sets and replaces the event; the watcher then reloads from the log, which
stays the only source of truth (a notification carries no data).
"""

from __future__ import annotations

import asyncio


class TableNotifier:
    """Per-table change signals inside one process."""

    def __init__(self) -> None:
        self._events: dict[str, asyncio.Event] = {}

    def changed(self, table_id: str) -> asyncio.Event:
        """The event that the next change of `table_id` will set."""
        event = self._events.get(table_id)
        if event is None:
            event = self._events[table_id] = asyncio.Event()
        return event

    def notify(self, table_id: str) -> None:
        event = self._events.pop(table_id, None)
        if event is not None:
            event.set()
