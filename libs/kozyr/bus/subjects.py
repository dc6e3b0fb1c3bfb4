"""NATS subject names for events and presence (DESIGN.md §5), and their parsing.

An event of stream "<category>-<id>" travels on "<root>.<category>.<id>.<EventType>":
"table-7f3a" + "CardPlayed" → "kozyr.table.7f3a.CardPlayed". A message queued with an
append (`kozyr.eventstore.NewMessage`) travels on "<root>.<channel>.<category>.<id>.<Type>":
channel "public" → "kozyr.public.table.7f3a.TurnStarted". The root is configurable so
that tests (and several deployments sharing one NATS account) never overlap.
Pure functions, no I/O: the relay names the subject of each outbox entry.
"""

from __future__ import annotations

import re
from typing import NamedTuple

from kozyr.eventstore.model import (
    CHANNEL_PATTERN,
    STREAM_PATTERN,
    OutboxEntry,
    RecordedEvent,
)

DEFAULT_ROOT = "kozyr"

PUBLIC_CHANNEL = "public"
"""The channel of the public table events (DESIGN.md §5): "<root>.public.table.<id>.<Type>"."""

_TOKEN = r"[A-Za-z0-9_-]+"
_ROOT_PATTERN = re.compile(rf"{_TOKEN}(?:\.{_TOKEN})*")
_STREAM_PATTERN = STREAM_PATTERN
_EVENT_TYPE_PATTERN = re.compile(r"[A-Za-z][A-Za-z0-9_]*")
_PLAYER_PATTERN = re.compile(_TOKEN)


class StreamName(NamedTuple):
    """A stream name split into its category ("table") and aggregate id ("7f3a")."""

    category: str
    id: str


def parse_stream(stream: str) -> StreamName:
    """ "table-7f3a" → StreamName("table", "7f3a"); ValueError if it is not "<category>-<id>"."""
    match = _STREAM_PATTERN.fullmatch(stream)
    if match is None:
        raise ValueError(
            f"stream name {stream!r} is not '<category>-<id>' "
            "(category: lowercase identifier; id: letters, digits, '_' or '-')"
        )
    return StreamName(match["category"], match["id"])


def check_root(root: str) -> str:
    """Return `root` if it is dot-separated subject tokens, else raise ValueError."""
    if not _ROOT_PATTERN.fullmatch(root):
        raise ValueError(f"subject root {root!r} is not dot-separated tokens")
    return root


def subject_for(stream: str, event_type: str, root: str = DEFAULT_ROOT) -> str:
    """The subject an event of `stream` with type `event_type` is published on."""
    name = parse_stream(stream)
    if not _EVENT_TYPE_PATTERN.fullmatch(event_type):
        raise ValueError(f"event type {event_type!r} is not an identifier")
    return f"{check_root(root)}.{name.category}.{name.id}.{event_type}"


def message_subject(stream: str, channel: str, message_type: str, root: str = DEFAULT_ROOT) -> str:
    """The subject of a message of `channel` queued with an append to `stream`:
    "table-7f3a", "public", "TurnStarted" → "kozyr.public.table.7f3a.TurnStarted"."""
    if not CHANNEL_PATTERN.fullmatch(channel):
        raise ValueError(f"channel {channel!r} is not a lowercase identifier")
    return (
        f"{check_root(root)}.{channel}.{subject_for(stream, message_type, root)[len(root) + 1 :]}"
    )


def entry_subject(entry: OutboxEntry, root: str = DEFAULT_ROOT) -> str:
    """The subject an outbox entry is published on: an event's or a message's."""
    item = entry.item
    if isinstance(item, RecordedEvent):
        return subject_for(item.stream, item.type, root)
    return message_subject(item.stream, item.channel, item.type, root)


def public_filter(category: str = "table", root: str = DEFAULT_ROOT) -> str:
    """Every public message of a category: "kozyr.public.table.>"."""
    parse_stream(f"{category}-x")
    return f"{check_root(root)}.{PUBLIC_CHANNEL}.{category}.>"


def stream_filter(stream: str, root: str = DEFAULT_ROOT) -> str:
    """Every event of one stream: "kozyr.table.7f3a.*" (a consumer filter subject)."""
    name = parse_stream(stream)
    return f"{check_root(root)}.{name.category}.{name.id}.*"


def category_filter(category: str, root: str = DEFAULT_ROOT) -> str:
    """Every event of every stream of a category: "kozyr.table.>"."""
    parse_stream(f"{category}-x")
    return f"{check_root(root)}.{category}.>"


def event_type_filter(category: str, event_type: str, root: str = DEFAULT_ROOT) -> str:
    """One event type across a category: "kozyr.table.*.TableFinished"."""
    subject_for(f"{category}-x", event_type, root)
    return f"{root}.{category}.*.{event_type}"


def presence_subject(player_id: str, root: str = DEFAULT_ROOT) -> str:
    """Presence (online/offline) of one player: "kozyr.presence.<player_id>"."""
    if not _PLAYER_PATTERN.fullmatch(player_id):
        raise ValueError(f"player id {player_id!r} is not a subject token")
    return f"{check_root(root)}.presence.{player_id}"


def parse_subject(subject: str, root: str = DEFAULT_ROOT) -> tuple[str, str]:
    """The inverse of `subject_for`: (stream, event_type); ValueError for other subjects."""
    prefix = f"{check_root(root)}."
    if not subject.startswith(prefix):
        raise ValueError(f"subject {subject!r} is not under root {root!r}")
    parts = subject[len(prefix) :].split(".")
    if len(parts) != 3:
        raise ValueError(f"subject {subject!r} is not '<root>.<category>.<id>.<EventType>'")
    category, aggregate_id, event_type = parts
    stream = f"{category}-{aggregate_id}"
    subject_for(stream, event_type, root)
    return stream, event_type
