"""The clock on a 3-node NATS cluster: its timers survive the node that holds them.

Production's NATS has three nodes (deploy/k8s/overlays/prod), and one may go down at
any time (a drain, a crash). The clock's timers live in its schedule stream; with one
replica they live on one node, and that node's SIGKILL stops every pending turn
deadline until it comes back. With `KOZYR_STREAM_REPLICAS=3` the clock makes every
stream and bucket of its own R3 (raising those an older start made R1), and a pending
timer fires, exactly once, while the node that led its stream is dead.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from nats.aio.client import Client as NatsClient
from nats.js import JetStreamContext
from nats.js.api import ConsumerConfig
from nats.js.errors import ServiceUnavailableError

from kozyr.bus.schedules import MessageScheduler, fire_subject, schedule_stream_name
from kozyr.bus.streams import jetstream_name
from kozyr.bus.subjects import PUBLIC_CHANNEL
from kozyr.clock.presence import presence_bucket
from kozyr.clock.service import REQUIRED_SETTINGS, ClockService
from kozyr.clock.settings import ClockSettings
from kozyr.infra import free_port
from tests.integration.table.conftest import in_process_values
from tests.support.nats_cluster import NatsCluster, nats_cluster

FIRE_IN = timedelta(seconds=3)
"""The probe timer's delay: long enough to kill its node before it is due."""


@pytest.fixture
async def cluster(tmp_path: Path) -> AsyncIterator[NatsCluster]:
    async with nats_cluster(tmp_path / "cluster") as started:
        yield started


@contextlib.asynccontextmanager
async def clock_on(cluster: NatsCluster, root: str, replicas: int) -> AsyncIterator[None]:
    """A clock replica started on the cluster with KOZYR_STREAM_REPLICAS=`replicas` (it
    makes or raises its streams at start; no table service is called here)."""
    values = in_process_values(cluster.url, root) | {
        "table_target": f"127.0.0.1:{free_port()}",
        "stream_replicas": replicas,
    }
    service = ClockService(ClockSettings.load(required=REQUIRED_SETTINGS, **values))
    await service.start()
    try:
        yield
    finally:
        await service.stop(0)


def clock_streams(root: str) -> list[str]:
    return [
        schedule_stream_name(root),
        jetstream_name(PUBLIC_CHANNEL, root),
        f"KV_{presence_bucket(root)}",
        f"KV_{jetstream_name('clock_seats', root)}",
    ]


async def probe_reader(nc: NatsClient, root: str, key: str) -> JetStreamContext.PullSubscription:
    """A durable reader of the probe timer `key`'s firings, made while every node is up:
    made after a SIGKILL it could meet JetStream's API still electing (a 5 s timeout,
    half the runs here), which is the cluster's business, not the timer's."""
    return await nc.jetstream().pull_subscribe(
        fire_subject("probe", key, root),
        durable=f"probe-{key}",
        stream=schedule_stream_name(root),
        config=ConsumerConfig(ack_wait=60),
    )


async def fires_of(
    subscription: JetStreamContext.PullSubscription, limit: float
) -> dict[int, bytes]:
    """Every firing `subscription` reads within `limit` seconds of the first, by its stream
    sequence (a redelivery of one firing is the same firing; a second firing is another
    message)."""
    fired: dict[int, bytes] = {}

    async def read(wait: float) -> None:
        with contextlib.suppress(TimeoutError, ServiceUnavailableError):
            for message in await subscription.fetch(5, timeout=wait):
                fired[message.metadata.sequence.stream] = message.data
                await message.ack()

    async with asyncio.timeout(limit):
        while not fired:
            await read(1.0)
    await read(1.0)  # a second firing would be there by now
    return fired


async def test_streams_are_raised_to_three_replicas_and_a_timer_outlives_its_node(
    cluster: NatsCluster, subject_root: str
) -> None:
    async with clock_on(cluster, subject_root, replicas=1), cluster.client() as nc:
        assert [await cluster.replicas_of(nc, s) for s in clock_streams(subject_root)] == [1] * 4

    async with clock_on(cluster, subject_root, replicas=3), cluster.client() as nc:
        for stream in clock_streams(subject_root):
            assert await cluster.replicas_of(nc, stream) == 3, stream
        stream = schedule_stream_name(subject_root)
        leader = await cluster.stream_leader(nc, stream)
        await cluster.until_consumer_replicated(nc, stream, "clock-timers", 3)

        reader = await probe_reader(nc, subject_root, "k1")
        scheduler = MessageScheduler(nc.jetstream(), subject_root)
        await scheduler.schedule("probe", "k1", datetime.now(UTC) + FIRE_IN, b"due")
        await cluster.kill(leader)
        successor = await cluster.stream_leader(nc, stream, not_this=leader)
        assert list((await fires_of(reader, limit=20)).values()) == [b"due"]
        assert successor.running


async def test_a_one_replica_timer_stream_dies_with_its_node(
    cluster: NatsCluster, subject_root: str
) -> None:
    """What KOZYR_STREAM_REPLICAS=1 costs on a cluster (the default, and every service
    before the setting): the node's SIGKILL takes the timers' only copy with it."""
    async with clock_on(cluster, subject_root, replicas=1), cluster.client() as nc:
        stream = schedule_stream_name(subject_root)
        holder = await cluster.stream_leader(nc, stream)
        await cluster.kill(holder)
        info = await cluster.stream_info(nc, stream)
        assert "error" in info, info
        await cluster.restart(holder)
        assert (await cluster.stream_leader(nc, stream)) is holder
