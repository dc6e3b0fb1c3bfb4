"""The watchers' safety net: one batched version read of every watched table.

Wake-ups normally come from this process's appends and from NATS. A wake-up can be
lost (NATS down, a subscription reconnecting); then the poller finds the newer version
in the log within `interval` seconds. It reads only the `streams` rows — never an
event — so ten thousand idle watch streams cost one small query per interval.
"""

from __future__ import annotations

import asyncio

from kozyr.eventstore import EventStore
from kozyr.runtime.logging import get_logger
from kozyr.table.adapters.notifier import TableNotifier
from kozyr.table.adapters.repository import STREAM_PREFIX, stream_of

log = get_logger("kozyr.table.poller")

BATCH = 5_000
"""Streams per version read (bounds one query's parameter size)."""


class WatchPoller:
    """Reports the log's version of every watched table to the notifier, periodically."""

    def __init__(self, store: EventStore, notifier: TableNotifier, interval: float) -> None:
        self._store = store
        self._notifier = notifier
        self._interval = interval
        self._failing = False

    async def run(self) -> None:
        """Poll until cancelled; a failed poll is logged once and retried next interval."""
        while True:
            await asyncio.sleep(self._interval)
            try:
                await self.poll()
            except Exception as error:
                if not self._failing:
                    log.warning("watch poll failed", error=f"{type(error).__name__}: {error}")
                self._failing = True
            else:
                if self._failing:
                    log.info("watch poll recovered")
                self._failing = False

    async def poll(self) -> int:
        """One pass over every watched table; returns how many tables were checked."""
        watched = self._notifier.watched()
        for start in range(0, len(watched), BATCH):
            streams = [stream_of(t) for t in watched[start : start + BATCH]]
            for stream, version in (await self._store.versions(streams)).items():
                self._notifier.notify(stream[len(STREAM_PREFIX) :], version)
        return len(watched)
