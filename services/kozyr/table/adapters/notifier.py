"""Wake-ups for WatchTable: "table X has reached version N", from anywhere.

Three sources report versions: this process's own appends (at once), the NATS
listener (another replica's appends, by the position header), and the watch poller
(one batched version read of every watched table, the safety net when NATS is slow or
down). A notification carries only a version — the log stays the only source of
truth — and wakes a table's watchers only when it is newer than anything heard before,
so the same append reported by all three sources wakes them once.

A watcher compares the newest version heard with the version it last sent: a table
cached behind what was heard is caught up from the log, never trusted as it is.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field


@dataclass(slots=True)
class TableWatch:
    """What the watchers of one table share: the newest version heard, and its signal."""

    heard: int = 0
    watchers: int = 0
    _changed: asyncio.Event = field(default_factory=asyncio.Event)

    def changed(self) -> asyncio.Event:
        """The event the next newer version will set (take it *before* reading `heard`)."""
        return self._changed

    def hear(self, version: int) -> None:
        if version > self.heard:
            self.heard = version
            self.wake()

    def wake(self) -> None:
        """Wake every watcher waiting on the current signal."""
        changed, self._changed = self._changed, asyncio.Event()
        changed.set()


class TableNotifier:
    """The watched tables of one process and the newest version heard of each."""

    def __init__(self) -> None:
        self._watched: dict[str, TableWatch] = {}

    @contextmanager
    def watching(self, table_id: str) -> Iterator[TableWatch]:
        """Register a watcher of `table_id` for the duration of the block."""
        watch = self._watched.get(table_id)
        if watch is None:
            watch = self._watched[table_id] = TableWatch()
        watch.watchers += 1
        try:
            yield watch
        finally:
            watch.watchers -= 1
            if watch.watchers == 0 and self._watched.get(table_id) is watch:
                del self._watched[table_id]

    def notify(self, table_id: str, version: int) -> None:
        """`table_id` has (at least) `version` in the log; unwatched tables cost nothing."""
        watch = self._watched.get(table_id)
        if watch is not None:
            watch.hear(version)

    def wake_all(self) -> None:
        """Wake every watcher of every table (the server is stopping: they look and end)."""
        for watch in self._watched.values():
            watch.wake()

    def watched(self) -> list[str]:
        """The ids of every table with a watcher in this process."""
        return list(self._watched)
