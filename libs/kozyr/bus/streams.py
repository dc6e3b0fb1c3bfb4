"""JetStream streams that store kozyr's events: one per stream category.

"<root>.table.>" is stored in "<ROOT>_TABLE" (KOZYR_TABLE by default), "<root>.lobby.>"
in "<ROOT>_LOBBY", the public table events "<root>.public.>" in "<ROOT>_PUBLIC" (a
stream of their own, so that the raw table stream stays exactly the events table).
Names derive from the subject root, so tests with their own root get their own streams.
Every stream, KV bucket and (by inheritance) durable consumer a service makes has
`KOZYR_STREAM_REPLICAS` replicas (`ensure_replicas`): 3 on a 3-node cluster, so that one
node going down takes nothing with it (docs/operations.md, "NATS cluster").
The duplicate window is what turns the relay's at-least-once publishing into
effectively-once storage (`Nats-Msg-Id` = event id): it must be longer than any relay
outage plus its retry backoff you want de-duplicated (default 2 hours).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, replace

import structlog
from nats.js import JetStreamContext
from nats.js.api import RetentionPolicy, StorageType, StreamConfig, StreamInfo
from nats.js.errors import APIError, NotFoundError

from kozyr.bus.settling import SETTLE_SECONDS, settled
from kozyr.bus.subjects import DEFAULT_ROOT, category_filter, check_root

TABLE_CATEGORIES: tuple[str, ...] = ("table", "public")
"""The table service's: its streams `table-<id>` (the raw events, hidden cards included)
and the "public" channel of the messages queued with its appends. Its database holds
nothing else, and its relay publishes these alone (docs/architecture.md, "Databases")."""

MATCHMAKING_CATEGORIES: tuple[str, ...] = ("lobby", "rating")
"""Matchmaking's: `lobby-main` and `rating-<game>-<player>` (docs/matchmaking.md), in its
own database, published by its own relay."""

EVERY_CATEGORY: tuple[str, ...] = (*TABLE_CATEGORIES, *MATCHMAKING_CATEGORIES)
"""Every service's, for the operator's tools (`kozyr republish`) and tests' clean-up.
A service's relay gets its own categories only: one it does not name, it cannot publish
(it retries the row until it can), and its NATS user may not publish the others'."""

log = structlog.get_logger(__name__)

DEFAULT_DUPLICATE_WINDOW = 2 * 60 * 60.0
"""Seconds JetStream remembers message ids: republishing within it stores nothing new."""


def jetstream_name(category: str, root: str = DEFAULT_ROOT) -> str:
    """ "table", "kozyr" → "KOZYR_TABLE" (JetStream names allow no dots or wildcards)."""
    check_root(root)
    return re.sub(r"[^A-Za-z0-9_-]", "_", f"{root}_{category}").upper()


@dataclass(frozen=True, slots=True)
class EventStreamSpec:
    """How one category's JetStream stream is configured."""

    category: str
    root: str = DEFAULT_ROOT
    duplicate_window: float = DEFAULT_DUPLICATE_WINDOW
    max_age: float | None = None
    replicas: int = 1

    @property
    def name(self) -> str:
        return jetstream_name(self.category, self.root)

    @property
    def subjects(self) -> list[str]:
        return [category_filter(self.category, self.root)]

    def config(self) -> StreamConfig:
        return StreamConfig(
            name=self.name,
            subjects=self.subjects,
            retention=RetentionPolicy.LIMITS,
            storage=StorageType.FILE,
            duplicate_window=self.duplicate_window,
            max_age=self.max_age,
            num_replicas=self.replicas,
        )


async def ensure_stream(
    js: JetStreamContext, spec: EventStreamSpec, settle_seconds: float = SETTLE_SECONDS
) -> None:
    """Create the stream, or bring an existing one's subjects and windows up to date;
    its replicas are raised to the spec's, never lowered (`ensure_replicas`). Made
    again while JetStream does not answer (`kozyr.bus.settling`): every step is
    idempotent."""
    await settled(lambda: _ensure_stream_once(js, spec), f"stream {spec.name}", settle_seconds)


async def _ensure_stream_once(js: JetStreamContext, spec: EventStreamSpec) -> None:
    wanted = spec.config()
    try:
        info = await js.stream_info(spec.name)
    except NotFoundError:
        await js.add_stream(wanted)
        return
    current = info.config
    if (
        current.subjects != wanted.subjects
        or current.duplicate_window != wanted.duplicate_window
        or (current.max_age or None) != (wanted.max_age or None)
    ):
        await js.update_stream(replace(wanted, num_replicas=current.num_replicas))
    await ensure_replicas(js, spec.name, spec.replicas)


async def ensure_replicas(js: JetStreamContext, stream: str, replicas: int) -> int:
    """Give an existing stream (or KV bucket, `KV_<bucket>`) at least `replicas` replicas.

    A stream created before `KOZYR_STREAM_REPLICAS` was raised (say R1 on a 3-node
    cluster) would silently keep one copy: the node holding it going down would take it
    with it. So it is updated here; JetStream copies it to the new peers, and its
    consumers that inherit the stream's replicas (kozyr's do) follow. A stream with
    more replicas than configured is kept as it is: a replica started with a stale
    setting must not shrink production's streams. When the server refuses (a single,
    non-clustered server; too few nodes) it is logged as an error at every start, and
    the service goes on with the copies there are: refusing to start would take down
    more than the missing replicas do. Returns the replicas the stream has.
    """
    info = await js.stream_info(stream)
    have = copies(info)
    if have >= replicas:
        if have > replicas:
            log.warning(
                "stream has more replicas than configured; kept",
                stream=stream, replicas=have, configured=replicas,
            )  # fmt: skip
        return have
    try:
        await js.update_stream(replace(info.config, num_replicas=replicas))
    except APIError as error:
        return _not_raised(stream, have, replicas, str(error))
    now = copies(await js.stream_info(stream))
    if now < replicas:
        return _not_raised(stream, now, replicas, "the server is not clustered")
    log.warning("stream replicas raised", stream=stream, replicas=now, previously=have)
    return now


def copies(info: StreamInfo) -> int:
    """How many copies of a stream the servers keep: its replicas setting on a cluster,
    one on a server that is not clustered — nats-server 2.12 alone takes a setting of 3
    and says so in the stream's config, yet keeps the one copy it can."""
    clustered = info.cluster is not None and info.cluster.name is not None
    return (info.config.num_replicas or 1) if clustered else 1


def _not_raised(stream: str, have: int, replicas: int, why: str) -> int:
    log.error(
        "stream has fewer replicas than KOZYR_STREAM_REPLICAS and cannot be raised: "
        "a NATS node going down takes it with it",
        stream=stream, replicas=have, configured=replicas, error=why,
    )  # fmt: skip
    return have


async def ensure_event_streams(
    js: JetStreamContext,
    root: str,
    categories: Sequence[str],
    *,
    duplicate_window: float = DEFAULT_DUPLICATE_WINDOW,
    max_age: float | None = None,
    replicas: int = 1,
) -> list[str]:
    """Ensure one JetStream stream per category; returns their names. Idempotent."""
    names: list[str] = []
    for category in categories:
        spec = EventStreamSpec(category, root, duplicate_window, max_age, replicas)
        await ensure_stream(js, spec)
        names.append(spec.name)
    return names
