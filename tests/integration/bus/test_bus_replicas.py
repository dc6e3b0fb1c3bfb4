"""KOZYR_STREAM_REPLICAS: every stream a service makes has that many copies.

On a cluster an existing stream with fewer replicas is raised at start (never lowered:
a replica with a stale setting must not shrink production's streams); where the server
cannot raise it (a single server) the service says so loudly and goes on.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator
from pathlib import Path

import nats
import pytest
from nats.js.api import ClusterInfo, StreamConfig, StreamInfo
from nats.js.errors import NotFoundError

from kozyr.bus.streams import (
    EVERY_CATEGORY,
    EventStreamSpec,
    copies,
    ensure_replicas,
    ensure_stream,
)
from kozyr.bus.subjects import PUBLIC_CHANNEL
from tests.integration.bots.conftest import running_bots
from tests.integration.matchmaking.conftest import running_matchmaking
from tests.integration.table.conftest import running_table_service
from tests.support.logs import every_log
from tests.support.nats_cluster import NatsCluster, nats_cluster


@pytest.fixture
async def cluster(tmp_path: Path) -> AsyncIterator[NatsCluster]:
    async with nats_cluster(tmp_path / "cluster") as started:
        yield started


async def test_a_single_server_that_cannot_raise_replicas_is_reported_loudly(
    nats_url: str, subject_root: str
) -> None:
    nc = await nats.connect(nats_url)
    js = nc.jetstream()
    spec = EventStreamSpec("table", subject_root)
    try:
        await ensure_stream(js, spec)
        with every_log() as logs:
            kept = await ensure_replicas(js, spec.name, 3)
        assert kept == 1
        [error] = [e for e in logs if e["log_level"] == "error"]
        assert error["stream"] == spec.name
        assert (error["replicas"], error["configured"]) == (1, 3)
        assert "cannot be raised" in error["event"]
        # the one copy there is: some servers refuse the update, nats-server 2.12 takes
        # it and keeps one copy all the same (its config then says 3)
        assert copies(await js.stream_info(spec.name)) == 1
    finally:
        with contextlib.suppress(NotFoundError):
            await js.delete_stream(spec.name)
        await nc.close()


async def test_streams_are_raised_to_the_setting_and_never_lowered(
    cluster: NatsCluster, subject_root: str
) -> None:
    async with cluster.client() as nc:
        js = nc.jetstream()
        await ensure_stream(js, EventStreamSpec("lobby", subject_root, replicas=1))
        await js.add_consumer(EventStreamSpec("lobby", subject_root).name, durable_name="d")
        await ensure_stream(js, EventStreamSpec("lobby", subject_root, replicas=3))
        name = EventStreamSpec("lobby", subject_root).name
        assert await cluster.replicas_of(nc, name) == 3
        await cluster.until_consumer_replicated(nc, name, "d", 3)

        with every_log() as logs:
            await ensure_stream(js, EventStreamSpec("lobby", subject_root, replicas=1))
        assert await cluster.replicas_of(nc, name) == 3
        assert any("more replicas than configured" in e["event"] for e in logs)


async def test_table_matchmaking_and_bots_make_their_streams_with_the_setting(
    cluster: NatsCluster, database_url: str, matchmaking_database_url: str, subject_root: str
) -> None:
    """The services' streams and their consumers (the clock's: test_clock_cluster.py)."""
    url = cluster.url
    streams = [EventStreamSpec(c, subject_root).name for c in EVERY_CATEGORY]
    public = EventStreamSpec(PUBLIC_CHANNEL, subject_root).name
    consumers = ["bots-public", "matchmaking-opened", "matchmaking-finished"]
    async with (
        running_table_service(database_url, url, subject_root, stream_replicas=3) as table,
        running_bots(table, url, subject_root, stream_replicas=3),
        running_matchmaking(
            matchmaking_database_url, url, subject_root, table.target,
            settings={"stream_replicas": 3},
        ),
        cluster.client() as nc,
    ):  # fmt: skip
        for name in streams:
            leader = await cluster.stream_leader(nc, name)
            assert await cluster.replicas_of(nc, name) == 3, (name, leader.name)
        for durable in consumers:
            await cluster.until_consumer_replicated(nc, public, durable, 3)


def test_a_stream_has_its_replicas_only_on_a_cluster() -> None:
    """A server that is not clustered keeps one copy whatever the stream's config says
    (nats-server 2.12 takes a setting of 3 there): only a named cluster's word counts."""
    config = StreamConfig(name="S", num_replicas=3)
    assert copies(StreamInfo(config=config, state=None, cluster=None)) == 1  # type: ignore[arg-type]
    alone = ClusterInfo(leader="n1")
    assert copies(StreamInfo(config=config, state=None, cluster=alone)) == 1  # type: ignore[arg-type]
    clustered = ClusterInfo(leader="n1", name="kozyr")
    assert copies(StreamInfo(config=config, state=None, cluster=clustered)) == 3  # type: ignore[arg-type]
