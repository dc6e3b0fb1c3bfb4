"""Loading tables from the event log: an in-process cache, caught up from the log.

The cache is only an optimisation (DESIGN.md §4): a cached table is always brought up
to date by reading the events after its version, so several replicas writing the same
table stay correct — the event store's optimistic concurrency decides who wins.
A table missing from the cache starts from its snapshot when one is usable (another
optimisation, see `kozyr.table.adapters.snapshots`), else from its first event.
"""

from __future__ import annotations

import asyncio
from collections import OrderedDict
from datetime import datetime
from typing import Any

from kozyr.eventstore import EventStore, RecordedEvent
from kozyr.table.adapters.snapshots import EVERY, TableSnapshots
from kozyr.table.domain import model
from kozyr.table.domain.model import Table

STREAM_PREFIX = "table-"


def stream_of(table_id: str) -> str:
    return f"{STREAM_PREFIX}{table_id}"


class TableNotFound(LookupError):
    """No table has this id."""


def deadline_of(event: RecordedEvent) -> datetime | None:
    """The turn deadline recorded with an event (metadata "deadline", ISO 8601)."""
    raw = event.metadata.get("deadline")
    return datetime.fromisoformat(raw) if isinstance(raw, str) else None


def fold_recorded(table: Table | None, events: list[RecordedEvent]) -> Table | None:
    """Fold stored events into a table (None before its creation event)."""
    for event in events:
        decoded: Any = model.decode(table, event.type, event.data)
        table = model.apply(table, decoded, deadline_of(event), event.recorded_at)
    return table


class TableRepository:
    """Tables by id, from the log, with an LRU cache of recent tables."""

    def __init__(
        self, store: EventStore, *, cache_size: int = 2_000, snapshot_every: int = EVERY
    ) -> None:
        """`snapshot_every` events between snapshots of a table; 0 turns snapshots off."""
        self.store = store
        self._cache: OrderedDict[str, Table] = OrderedDict()
        self._cache_size = cache_size
        self.snapshots = TableSnapshots(store, snapshot_every)
        self._catching_up: dict[str, asyncio.Task[Table]] = {}
        self._past: OrderedDict[str, Table] = OrderedDict()
        self._past_size = cache_size

    def cached(self, table_id: str) -> Table | None:
        """The newest version of the table this process knows, without reading the log.

        It may be behind the log (another replica appended): use it only where the
        append's expected-version check catches that, or for a watcher woken by this
        process's own append.
        """
        return self._cache.get(table_id)

    async def load(self, table_id: str) -> Table:
        """The table as of the latest event in the log; TableNotFound if none."""
        stream = stream_of(table_id)
        cached = self._cache.get(table_id) or await self.snapshots.read(stream, table_id)
        start = cached.version if cached is not None else 0
        events = await self.store.read(stream, from_version=start)
        table = fold_recorded(cached, events)
        if table is None:
            raise TableNotFound(table_id)
        self.remember(table)
        return table

    async def at_least(self, table_id: str, version: int) -> Table:
        """The cached table if it has reached `version`, else the table as the log has it.

        For watchers: a notification says which version exists, so a cache that is
        behind it (another replica appended) is caught up instead of trusted. The
        watchers of a table woken together share one catch-up read: a read already under
        way serves them all when it reaches `version` (else they read again).
        """
        cached = self._cache.get(table_id)
        if cached is not None and cached.version >= version:
            self._cache.move_to_end(table_id)
            return cached
        reading = self._catching_up.get(table_id)
        if reading is None:
            reading = asyncio.ensure_future(self.load(table_id))
            self._catching_up[table_id] = reading
            reading.add_done_callback(lambda done: self._caught_up(table_id, done))
        table = await asyncio.shield(reading)  # a watcher leaving stops no one's read
        return table if table.version >= version else await self.load(table_id)

    def _caught_up(self, table_id: str, reading: asyncio.Task[Table]) -> None:
        if self._catching_up.get(table_id) is reading:
            del self._catching_up[table_id]
        if not reading.cancelled():
            reading.exception()  # retrieved: each watcher that waited has it raised

    async def at_version(self, table_id: str, version: int) -> Table:
        """The table as it was at log version `version` (an open-hand spectator's view,
        docs/open-hand.md): folded from the log, carried forward from the last one this
        process folded for the table when that is not newer."""
        stream = stream_of(table_id)
        past = self._past.get(table_id)
        if past is None or past.version > version:
            past = None
        start = 0 if past is None else past.version
        events = []
        if version > start:
            events = await self.store.read(stream, from_version=start, limit=version - start)
        table = fold_recorded(past, events)
        if table is None:
            raise TableNotFound(table_id)
        self._past[table_id] = table
        self._past.move_to_end(table_id)
        while len(self._past) > self._past_size:
            self._past.popitem(last=False)
        return table

    def remember(self, table: Table) -> None:
        """Keep the newest known version of a table (never replace newer with older)."""
        cached = self._cache.get(table.table_id)
        if cached is None or cached.version < table.version:
            self._cache[table.table_id] = table
            self.snapshots.consider(stream_of(table.table_id), table)
        self._cache.move_to_end(table.table_id)
        while len(self._cache) > self._cache_size:
            evicted, _ = self._cache.popitem(last=False)
            self.snapshots.forget(evicted)
