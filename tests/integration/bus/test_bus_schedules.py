"""Message schedules (kozyr.bus.schedules) and shared workers (kozyr.bus.work) on a real
NATS with JetStream message schedules (2.12+: the session's, or a server of this test's).

Timers are a second or two ahead: the assertions are about which timers fire and how
often, never about how late.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable
from datetime import UTC, datetime, timedelta

import nats
import pytest
from nats.aio.client import Client as NatsClient
from nats.aio.msg import Msg
from prometheus_client import REGISTRY

from kozyr.bus.consumers import DurableConsumer
from kozyr.bus.schedules import (
    MessageScheduler,
    ScheduleStreamSpec,
    SchedulesUnsupported,
    ensure_schedule_stream,
    fire_filter,
    parse_fire_subject,
)
from kozyr.bus.work import MessageHandler, MessageWorker
from kozyr.infra import EmbeddedNats

pytestmark = pytest.mark.integration


async def _has_schedules(url: str) -> bool:
    nc = await nats.connect(url)
    version = str(nc._server_info.get("version", "0.0"))
    await nc.close()
    return tuple(int(p) for p in version.split("-")[0].split(".")[:2]) >= (2, 12)


@pytest.fixture
async def nc(nats_url: str, nats_factory: Callable[[], EmbeddedNats]) -> AsyncIterator[NatsClient]:
    url = nats_url if await _has_schedules(nats_url) else nats_factory().url
    client = await nats.connect(url)
    yield client
    await client.close()


@pytest.fixture
async def scheduler(nc: NatsClient, subject_root: str) -> AsyncIterator[MessageScheduler]:
    spec = ScheduleStreamSpec(subject_root)
    await ensure_schedule_stream(nc, spec)
    await ensure_schedule_stream(nc, spec)  # idempotent
    yield MessageScheduler(nc.jetstream(), subject_root)
    await nc.jetstream().delete_stream(spec.name)


class Fired:
    """Collects fired timers through a worker, as the clock does."""

    def __init__(self, root: str) -> None:
        self.root = root
        self.seen: list[tuple[str, bytes, int]] = []
        self.changed = asyncio.Event()

    async def handle(self, message: Msg) -> None:
        _, key = parse_fire_subject(message.subject, self.root)
        self.seen.append((key, message.data, message.metadata.num_delivered))
        self.changed.set()

    async def until(self, count: int) -> None:
        async with asyncio.timeout(30):
            while len(self.seen) < count:
                self.changed.clear()
                await self.changed.wait()


def _worker(nc: NatsClient, root: str, handler: MessageHandler, name: str) -> MessageWorker:
    spec = DurableConsumer(
        stream=ScheduleStreamSpec(root).name,
        durable=name,
        filter_subjects=(fire_filter(root),),
        ack_wait=2.0,
    )
    return MessageWorker(nc.jetstream(), spec, handler, concurrency=10, retry_delay=0.2)


def _in(seconds: float) -> datetime:
    return datetime.now(UTC) + timedelta(seconds=seconds)


async def test_a_newer_timer_replaces_the_older_and_a_cancelled_one_never_fires(
    nc: NatsClient, scheduler: MessageScheduler, subject_root: str
) -> None:
    fired = Fired(subject_root)
    await scheduler.schedule("turn", "t1", _in(1.0), b"turn 1")
    await scheduler.schedule("turn", "t1", _in(1.5), b"turn 2")  # replaces turn 1
    await scheduler.schedule("turn", "t2", _in(1.0), b"cancelled")
    await scheduler.schedule("turn", "t3", _in(-5), b"already due")
    assert await scheduler.pending("turn", "t2") is not None
    await scheduler.cancel("turn", "t2")
    assert await scheduler.pending("turn", "t2") is None
    worker = _worker(nc, subject_root, fired.handle, "w")
    await worker.start()
    await fired.until(2)
    await scheduler.schedule("turn", "marker", _in(1.0), b"last")
    await fired.until(3)  # every timer due before "last" has fired by now
    await worker.stop()
    assert sorted(fired.seen) == [
        ("marker", b"last", 1),
        ("t1", b"turn 2", 1),
        ("t3", b"already due", 1),
    ]
    assert await scheduler.pending("turn", "t1") is None, "a fired timer is gone"


async def test_a_failed_handling_is_redelivered_and_two_workers_share_the_timers(
    nc: NatsClient, scheduler: MessageScheduler, subject_root: str
) -> None:
    fired = Fired(subject_root)
    failures: list[str] = []

    async def flaky(message: Msg) -> None:
        key = parse_fire_subject(message.subject, subject_root)[1]
        if key == "k0" and not failures:
            failures.append(key)
            raise RuntimeError("the table service is down")
        await fired.handle(message)

    def handled(outcome: str) -> float:
        value = REGISTRY.get_sample_value(
            "kozyr_nats_messages_handled_total", {"consumer": "shared", "outcome": outcome}
        )
        return value or 0.0

    acked, retried = handled("acked"), handled("retried")
    workers = [_worker(nc, subject_root, flaky, "shared") for _ in range(2)]
    for worker in workers:
        await worker.start()
    for index in range(20):
        await scheduler.schedule("turn", f"k{index}", _in(1.0), b"x")
    await fired.until(20)
    await asyncio.sleep(0.5)
    for worker in workers:
        await worker.stop()
    keys = [key for key, _, _ in fired.seen]
    assert sorted(keys) == sorted(f"k{i}" for i in range(20)), "each timer handled once"
    assert {k: n for k, _, n in fired.seen}["k0"] == 2, "the failed one came back"
    assert (handled("acked") - acked, handled("retried") - retried) == (20, 1)
    lag = REGISTRY.get_sample_value("kozyr_nats_consumer_pending_messages", {"consumer": "shared"})
    assert lag == 0, "caught up: nothing pending"


async def test_a_stream_the_server_cannot_make_is_a_clear_error(
    nc: NatsClient, subject_root: str
) -> None:
    with pytest.raises(SchedulesUnsupported, match="replicas"):
        await ensure_schedule_stream(nc, ScheduleStreamSpec(subject_root, replicas=3))


async def test_a_long_handling_keeps_its_message_from_other_replicas(
    nc: NatsClient, scheduler: MessageScheduler, subject_root: str
) -> None:
    """A handler working for 2.5 × ack_wait (a bot's search queued behind others) tells
    JetStream the message is in hand: the other replica never gets it."""
    fired = Fired(subject_root)

    async def slow(message: Msg) -> None:
        await asyncio.sleep(5.0)  # ack_wait is 2 s
        await fired.handle(message)

    workers = [_worker(nc, subject_root, slow, "patient") for _ in range(2)]
    for worker in workers:
        await worker.start()
    await scheduler.schedule("turn", "slow", _in(0.5), b"x")
    await fired.until(1)
    await asyncio.sleep(3.0)  # a redelivery, had there been one, would be handled by now
    for worker in workers:
        await worker.stop()
    assert fired.seen == [("slow", b"x", 1)], "handled once, delivered once"
