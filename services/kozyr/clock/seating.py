"""Which tables each player has a seat at, learnt from the public table events.

Covering an absent player needs his open tables; the table service answers per table,
not per player, so the clock keeps this index itself, in NATS (a KV bucket
"<ROOT>_CLOCK_SEATS", key = player id, value = {table_id: seat} as JSON) — not in a
process — filled by `TableOpened` and emptied by `TableFinished`. Writes are
compare-and-set on the key's revision, so replicas never lose each other's entries.

Each entry also keeps the table's `cover_after_seconds` (its `TableOpened` says it; 0:
the clock's default), so covering needs no call to the table service. Entries of the
first format ({table_id: seat}) read as seats with the default.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import NamedTuple

from nats.js import JetStreamContext
from nats.js.api import KeyValueConfig, StorageType
from nats.js.errors import BadRequestError, KeyNotFoundError, KeyWrongLastSequenceError
from nats.js.kv import KeyValue

from kozyr.bus.settling import SETTLE_SECONDS, settled
from kozyr.bus.streams import ensure_replicas, jetstream_name

_CAS_ATTEMPTS = 10


class SeatAt(NamedTuple):
    """A player's seat at one table, with that table's cover_after (0: the default)."""

    seat: int
    cover_after_seconds: int = 0


Seats = dict[str, SeatAt]


class SeatIndex:
    """player id → {table_id: SeatAt} of his tables still being played."""

    def __init__(self, js: JetStreamContext, root: str, *, replicas: int = 1) -> None:
        self._js = js
        self.bucket = jetstream_name("clock_seats", root)
        self.replicas = replicas
        self._kv: KeyValue | None = None

    async def open(self, settle_seconds: float = SETTLE_SECONDS) -> None:
        """Create the bucket, or bind to it with its replicas raised to ours — made
        again while JetStream does not answer (`kozyr.bus.settling`)."""
        await settled(self._open, f"the {self.bucket} bucket", settle_seconds)

    async def _open(self) -> None:
        config = KeyValueConfig(
            bucket=self.bucket, history=1, storage=StorageType.FILE, replicas=self.replicas
        )
        try:
            self._kv = await self._js.create_key_value(config)
        except BadRequestError:  # it exists with other replicas
            await ensure_replicas(self._js, f"KV_{self.bucket}", self.replicas)
            self._kv = await self._js.key_value(self.bucket)

    @property
    def kv(self) -> KeyValue:
        assert self._kv is not None, "open() first"
        return self._kv

    async def tables_of(self, player_id: str) -> Seats:
        try:
            entry = await self.kv.get(player_id)
        except KeyNotFoundError:
            return {}
        return _decode(entry.value)

    async def seat(self, player_id: str, table_id: str, at: SeatAt) -> None:
        await self._change(player_id, lambda seats: {**seats, table_id: at})

    async def unseat(self, player_id: str, table_id: str) -> None:
        await self._change(
            player_id, lambda seats: {t: s for t, s in seats.items() if t != table_id}
        )

    async def _change(self, player_id: str, change: Callable[[Seats], Seats]) -> None:
        for _ in range(_CAS_ATTEMPTS):
            try:
                entry = await self.kv.get(player_id)
            except KeyNotFoundError:
                last, seats = 0, {}
            else:
                last, seats = int(entry.revision or 0), _decode(entry.value)
            wanted = change(seats)
            if wanted == seats:
                return
            try:
                await self.kv.update(player_id, _encode(wanted), last=last)
            except KeyWrongLastSequenceError:
                continue
            return
        raise RuntimeError(f"seat index of {player_id!r}: too many concurrent changes")


def _encode(seats: Seats) -> bytes:
    return json.dumps({table: list(at) for table, at in seats.items()}).encode()


def _decode(value: bytes | None) -> Seats:
    if not value:
        return {}
    return {str(table): _seat_at(at) for table, at in json.loads(value).items()}


def _seat_at(stored: int | list[int]) -> SeatAt:
    return SeatAt(stored) if isinstance(stored, int) else SeatAt(*stored)
