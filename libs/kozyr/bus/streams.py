"""JetStream streams that store kozyr's events: one per stream category.

"<root>.table.>" is stored in "<ROOT>_TABLE" (KOZYR_TABLE by default), "<root>.lobby.>"
in "<ROOT>_LOBBY", the public table events "<root>.public.>" in "<ROOT>_PUBLIC" (a
stream of their own, so that the raw table stream stays exactly the events table).
Names derive from the subject root, so tests with their own root get their own streams.
The duplicate window is what turns the relay's at-least-once publishing into
effectively-once storage (`Nats-Msg-Id` = event id): it must be longer than any relay
outage plus its retry backoff you want de-duplicated (default 2 hours).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from nats.js import JetStreamContext
from nats.js.api import RetentionPolicy, StorageType, StreamConfig
from nats.js.errors import NotFoundError

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


async def ensure_stream(js: JetStreamContext, spec: EventStreamSpec) -> None:
    """Create the stream, or bring an existing one's subjects and windows up to date."""
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
        or (current.num_replicas or 1) != (wanted.num_replicas or 1)
    ):
        await js.update_stream(wanted)


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
