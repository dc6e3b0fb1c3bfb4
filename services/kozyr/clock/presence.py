"""Presence: who is online, kept by NATS (a KV bucket whose entries expire on their own).

Each heartbeat writes the player's key in the bucket "<ROOT>_PRESENCE", whose entries
live `offline_after` seconds (the bucket's max age): a player whose heartbeats stop
simply disappears, by the server's doing, and the server leaves a marker in his key's
place (`Nats-Marker-Reason: MaxAge`, nats-server 2.11+). The marker is how the clock
learns he went offline: a durable consumer shared by the clock replicas reads the
bucket's stream and handles each marker once.

Coming online is decided by the heartbeat itself, with the key's revision as a
compare-and-set: a heartbeat that finds the key missing or a marker writes it only if
nobody did in between, so of two replicas racing on the first heartbeat exactly one
reports the player online. That heartbeat writes `CAME_ONLINE` instead of `HEARTBEAT`,
so the same durable consumer also learns, once, that he came back. A heartbeat that
loses the race looks again and retries until its write goes in (each lost race is
another write that did): one that gave up would leave his return unannounced, or write
him online without a compare-and-set that says so.

Changes are published on "<root>.presence.<player_id>" (core NATS) as
`kozyr.clock.v1.PresenceChanged`.
"""

from __future__ import annotations

import asyncio
import re
from datetime import datetime

from google.protobuf.timestamp_pb2 import Timestamp
from nats.aio.client import Client as NatsClient
from nats.js import JetStreamContext
from nats.js.api import KeyValueConfig, StorageType
from nats.js.errors import BadRequestError, KeyNotFoundError, KeyWrongLastSequenceError
from nats.js.kv import KeyValue

from kozyr.api.clock.v1 import presence_pb2
from kozyr.bus.connection import CALL_TIMEOUT_SECONDS, require_connected
from kozyr.bus.settling import SETTLE_SECONDS, settled
from kozyr.bus.streams import ensure_replicas, jetstream_name
from kozyr.bus.subjects import presence_subject
from kozyr.runtime.outages import bus_unavailable

PLAYER_ID = re.compile(r"[A-Za-z0-9_-]{1,128}")
"""Player ids that can have a presence: a NATS subject token and a KV key."""

MARKER_REASON = "Nats-Marker-Reason"
MARKER_TTL_SECONDS = 60.0
"""How long an expiry marker stays in the bucket (the consumer reads it well before)."""
HEARTBEAT = b"1"
CAME_ONLINE = b"online"
"""The value of the heartbeat that brought a player online (later ones write HEARTBEAT)."""
HEARTBEAT_SECONDS = 4.0
"""A heartbeat retries its compare-and-set for this long at most: every lost race is
another write that got in, so only a NATS that stopped answering uses it up."""


def presence_bucket(root: str) -> str:
    """ "kozyr" → "KOZYR_PRESENCE" (its stream is "KV_KOZYR_PRESENCE")."""
    return jetstream_name("presence", root)


def has_presence(player_id: str) -> bool:
    return PLAYER_ID.fullmatch(player_id) is not None


class PresenceBook:
    """The presence bucket: heartbeats in, online/offline out."""

    def __init__(
        self,
        nc: NatsClient,
        js: JetStreamContext,
        root: str,
        offline_after: float,
        *,
        replicas: int = 1,
        heartbeat_seconds: float = HEARTBEAT_SECONDS,
    ) -> None:
        self._nc = nc
        self._js = js
        self.root = root
        self.bucket = presence_bucket(root)
        self.stream = f"KV_{self.bucket}"
        self.offline_after = offline_after
        self.replicas = replicas
        self.heartbeat_seconds = heartbeat_seconds
        self._calls = nc.jetstream(timeout=CALL_TIMEOUT_SECONDS)
        self._kv: KeyValue | None = None

    async def open(self, settle_seconds: float = SETTLE_SECONDS) -> None:
        """Create the bucket (or bind to it; its max age follows `offline_after`), then
        bind it for the calls with their short timeout (`CALL_TIMEOUT_SECONDS`) — made
        again while JetStream does not answer (`kozyr.bus.settling`): every step is
        idempotent."""
        await settled(self._open, f"the {self.bucket} bucket", settle_seconds)

    async def _open(self) -> None:
        config = KeyValueConfig(
            bucket=self.bucket,
            history=1,
            ttl=self.offline_after,
            storage=StorageType.FILE,
            limit_marker_ttl=MARKER_TTL_SECONDS,
            replicas=self.replicas,
        )
        try:
            await self._js.create_key_value(config)
        except BadRequestError:  # it exists with another configuration: adopt ours
            info = await self._js.stream_info(self.stream)
            if info.config.max_age != self.offline_after:
                info.config.max_age = self.offline_after
                await self._js.update_stream(info.config)
            await ensure_replicas(self._js, self.stream, self.replicas)
        self._kv = await self._calls.key_value(self.bucket)

    @property
    def kv(self) -> KeyValue:
        assert self._kv is not None, "open() first"
        return self._kv

    async def heartbeat(self, player_id: str) -> bool:
        """Record a heartbeat; True when it brought the player online (exactly once).

        Retried until its compare-and-set succeeds: never written unconditionally,
        never given up. Only a bus that stopped answering keeps it from succeeding for
        `heartbeat_seconds`; the caller then hears `BUS_UNAVAILABLE` (retryable), as for
        any other NATS outage, not an internal error.
        """
        require_connected(self._nc)
        try:
            async with asyncio.timeout(self.heartbeat_seconds):
                return await self._record_heartbeat(player_id)
        except TimeoutError:
            raise bus_unavailable() from None

    async def _record_heartbeat(self, player_id: str) -> bool:
        while True:
            last, was_online = await self._last(player_id)
            value = HEARTBEAT if was_online else CAME_ONLINE
            try:
                await self.kv.update(player_id, value, last=last)
            except KeyWrongLastSequenceError:
                continue  # another heartbeat or an expiry came in between: look again
            return not was_online

    async def _last(self, player_id: str) -> tuple[int, bool]:
        """The revision a write of his key must name, and whether it shows him online."""
        try:
            entry = await self.kv.get(player_id)
        except KeyNotFoundError as missing:
            # Never written (no entry), or deleted or purged: then the delete marker is
            # the key's last message, and only a write naming its revision goes in.
            marker = missing.entry
            return (int(marker.revision or 0) if marker is not None else 0), False
        return int(entry.revision or 0), bool(entry.value)

    async def is_online(self, player_id: str) -> bool:
        """True while the player's heartbeats keep coming (an expiry marker is offline)."""
        require_connected(self._nc)
        try:
            entry = await self.kv.get(player_id)
        except KeyNotFoundError:
            return False
        return bool(entry.value)

    async def publish(self, player_id: str, online: bool, at: datetime) -> None:
        """Announce a change on "<root>.presence.<player_id>"."""
        stamp = Timestamp()
        stamp.FromDatetime(at)
        body = presence_pb2.PresenceChanged(player_id=player_id, online=online, at=stamp)
        await self._nc.publish(presence_subject(player_id, self.root), body.SerializeToString())

    def expired_player(self, subject: str, headers: dict[str, str] | None) -> str | None:
        """The player whose entry expired, if this bucket message is an expiry marker."""
        if not headers or headers.get(MARKER_REASON) != "MaxAge":
            return None
        return self._player_of(subject)

    def returned_player(self, subject: str, data: bytes) -> str | None:
        """The player this bucket message brought online, if it did."""
        return self._player_of(subject) if data == CAME_ONLINE else None

    def _player_of(self, subject: str) -> str:
        return subject.removeprefix(f"$KV.{self.bucket}.")
