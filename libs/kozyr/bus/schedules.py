"""Durable timers kept by NATS itself: JetStream message schedules (ADR-51, nats-server 2.12+).

A timer is one message on "<root>.clock.schedule.<kind>.<key>" in the stream
"<ROOT>_CLOCK", with the headers `Nats-Schedule: @at <RFC 3339 UTC>` and
`Nats-Schedule-Target: <root>.clock.fire.<kind>.<key>`. At that time the server
publishes the payload on the target subject, in the same stream, where a durable pull
consumer shared by every clock replica picks it up. One subject per key and at most one
message per subject: a newer timer for the same key replaces the older one, which then
never fires; purging the subject cancels it. Nothing is kept in a process: a clock that
is killed and restarted (or another replica) finds every fired timer waiting in the
stream, and every pending one still pending.

    scheduler = MessageScheduler(js, root)
    await ensure_schedule_stream(nc, root)
    await scheduler.schedule("turn", table_id, deadline, payload)
    await scheduler.cancel("turn", table_id)

nats-py has no typed config for `allow_msg_schedules` yet, so the stream is created by
the raw `$JS.API.STREAM.CREATE` request.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from nats.aio.client import Client as NatsClient
from nats.js import JetStreamContext
from nats.js.errors import NotFoundError

from kozyr.bus.streams import ensure_replicas, jetstream_name
from kozyr.bus.subjects import DEFAULT_ROOT, check_root

SCHEDULE_HEADER = "Nats-Schedule"
TARGET_HEADER = "Nats-Schedule-Target"
SCHEDULER_HEADER = "Nats-Scheduler"
"""On a fired message: the schedule subject it came from."""

_KEY = re.compile(r"[A-Za-z0-9_-]+")

MAX_AGE_SECONDS = 2 * 24 * 3600
"""The stream forgets a message after two days: fired timers (one per key, acknowledged
long ago) do not pile up, and no timer may be set further ahead than that."""


class SchedulesUnsupported(RuntimeError):
    """The NATS server cannot keep message schedules (older than 2.12, or JetStream off)."""


def schedule_stream_name(root: str = DEFAULT_ROOT) -> str:
    """ "kozyr" → "KOZYR_CLOCK"."""
    return jetstream_name("clock", root)


def schedule_subject(kind: str, key: str, root: str = DEFAULT_ROOT) -> str:
    """Where the timer of (`kind`, `key`) is kept: "kozyr.clock.schedule.turn.<table_id>"."""
    return f"{check_root(root)}.clock.schedule.{_token(kind)}.{_token(key)}"


def fire_subject(kind: str, key: str, root: str = DEFAULT_ROOT) -> str:
    """Where it fires: "kozyr.clock.fire.turn.<table_id>"."""
    return f"{check_root(root)}.clock.fire.{_token(kind)}.{_token(key)}"


def fire_filter(root: str = DEFAULT_ROOT) -> str:
    """Every fired timer of every kind (a consumer's filter): "kozyr.clock.fire.>"."""
    return f"{check_root(root)}.clock.fire.>"


def parse_fire_subject(subject: str, root: str = DEFAULT_ROOT) -> tuple[str, str]:
    """ "kozyr.clock.fire.turn.7f3a" → ("turn", "7f3a"); ValueError for anything else."""
    prefix = f"{check_root(root)}.clock.fire."
    kind, _, key = subject.removeprefix(prefix).partition(".")
    if not subject.startswith(prefix) or not _KEY.fullmatch(kind) or not _KEY.fullmatch(key):
        raise ValueError(f"{subject!r} is not a fired timer of root {root!r}")
    return kind, key


def schedule_time(at: datetime) -> str:
    """`@at` header value: RFC 3339 in UTC with milliseconds ("2026-11-30T15:25:01.300Z")."""
    if at.tzinfo is None:
        raise ValueError("a schedule time must be timezone-aware")
    utc = at.astimezone(UTC)
    return f"@at {utc.strftime('%Y-%m-%dT%H:%M:%S')}.{utc.microsecond // 1000:03d}Z"


def _token(value: str) -> str:
    if not _KEY.fullmatch(value):
        raise ValueError(f"{value!r} is not a subject token (letters, digits, '_', '-')")
    return value


@dataclass(frozen=True, slots=True)
class ScheduleStreamSpec:
    """The stream holding the timers and their fired messages."""

    root: str = DEFAULT_ROOT
    replicas: int = 1

    @property
    def name(self) -> str:
        return schedule_stream_name(self.root)

    def config(self) -> dict[str, object]:
        return {
            "name": self.name,
            "subjects": [f"{self.root}.clock.schedule.>", fire_filter(self.root)],
            "allow_msg_schedules": True,
            "max_msgs_per_subject": 1,
            "max_age": MAX_AGE_SECONDS * 1_000_000_000,
            "storage": "file",
            "num_replicas": self.replicas,
        }


async def ensure_schedule_stream(nc: NatsClient, spec: ScheduleStreamSpec) -> None:
    """Create the timers' stream, or raise an existing one's replicas to the spec's.

    Raises `SchedulesUnsupported` when the server does not keep schedules: a clock on
    such a server would silently never fire, so it must not start.
    """
    found = await _request(nc, f"$JS.API.STREAM.INFO.{spec.name}", b"")
    if found.get("error") is None:
        if not found.get("config", {}).get("allow_msg_schedules"):
            raise SchedulesUnsupported(f"the stream {spec.name} does not allow message schedules")
        await ensure_replicas(nc.jetstream(), spec.name, spec.replicas)
        return
    answer = await _request(
        nc, f"$JS.API.STREAM.CREATE.{spec.name}", json.dumps(spec.config()).encode()
    )
    error = answer.get("error")
    if error is not None:
        raise SchedulesUnsupported(
            f"cannot create the stream {spec.name} with message schedules "
            f"(nats-server 2.12+ with JetStream is needed): {error.get('description', error)}"
        )
    if not answer.get("config", {}).get("allow_msg_schedules"):
        raise SchedulesUnsupported(
            f"the NATS server ignored allow_msg_schedules on {spec.name}: nats-server 2.12+ "
            "is needed"
        )


async def _request(nc: NatsClient, subject: str, body: bytes) -> dict[str, Any]:
    """One JetStream API request, its JSON answer."""
    reply = await nc.request(subject, body, timeout=5.0)
    answer: dict[str, Any] = json.loads(reply.data)
    return answer


class MessageScheduler:
    """Sets and cancels timers in the schedule stream of one subject root."""

    def __init__(self, js: JetStreamContext, root: str = DEFAULT_ROOT) -> None:
        self._js = js
        self.root = check_root(root)
        self.stream = schedule_stream_name(root)

    async def schedule(self, kind: str, key: str, at: datetime, payload: bytes) -> None:
        """Fire `payload` on `fire_subject(kind, key)` at `at`, replacing any pending timer
        of the same key (a time in the past fires at once; at most `MAX_AGE_SECONDS`
        ahead)."""
        headers = {
            SCHEDULE_HEADER: schedule_time(at),
            TARGET_HEADER: fire_subject(kind, key, self.root),
        }
        await self._js.publish(
            schedule_subject(kind, key, self.root), payload, stream=self.stream, headers=headers
        )

    async def cancel(self, kind: str, key: str) -> None:
        """Drop the pending timer of (`kind`, `key`), if any: it will not fire."""
        await self._js.purge_stream(self.stream, subject=schedule_subject(kind, key, self.root))

    async def pending(self, kind: str, key: str) -> bytes | None:
        """The payload of the timer of (`kind`, `key`) while it is set and has not fired
        yet; None when there is none."""
        try:
            message = await self._js.get_last_msg(
                self.stream, schedule_subject(kind, key, self.root)
            )
        except NotFoundError:
            return None
        return message.data or b""
