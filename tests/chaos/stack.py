"""One scenario's own servers: PostgreSQL (or a replicated pair), NATS and 1-3 table
service processes.

Never the machine's shared servers (KOZYR_DATABASE_URL / KOZYR_NATS_URL are ignored):
a scenario stops, freezes and restarts them. Everything runs from copies of the
template's data directories, in the test's temporary directory, on free ports.

`cluster_stack` runs NATS as a 3-node cluster instead (tests/support/nats_cluster.py),
with KOZYR_STREAM_REPLICAS=3; it and `failover_stack` run the other services beside
the table service (`_companions`: a clock, a bots process, matchmaking on a database of
its own). Their JetStream starts empty (a cluster cannot start from a single node's
store, and a clock started on the template's bus would first replay all of its public
events), so what it must hold is the log's events appended after the template
(`Stack.since_template`).
"""

from __future__ import annotations

import asyncio
import contextlib
import shutil
from collections.abc import AsyncIterator, Awaitable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

import asyncpg
import psutil

from kozyr.bus.relay import RELAY_LOCK_KEY
from kozyr.eventstore import migrate
from kozyr.infra import EmbeddedNats, EmbeddedPostgres, free_port, libpq_dsn
from tests.chaos.replication import ReplicatedPostgres
from tests.chaos.template import SUBJECT_ROOT, TableSetup, Template
from tests.e2e.bots.conftest import BotsServiceProcess
from tests.e2e.clock.conftest import ClockServiceProcess
from tests.e2e.conftest import TableServiceProcess, service_env
from tests.e2e.matchmaking.conftest import MatchmakingProcess
from tests.support.nats_cluster import NatsCluster

LEADER_WAIT_SECONDS = 20.0
P = TypeVar("P", bound=TableServiceProcess)

_LEADER_PORT = """
SELECT a.client_port
  FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid
 WHERE l.locktype = 'advisory' AND l.granted AND l.objsubid = 1
   AND l.classid::bigint = $1 AND l.objid::bigint = $2
"""


@dataclass
class Stack:
    """The running servers of one scenario."""

    postgres: EmbeddedPostgres
    nats: EmbeddedNats | None
    services: list[TableServiceProcess]
    tables: tuple[TableSetup, ...]
    pair: ReplicatedPostgres | None = None
    """The failover scenarios' primary and standby (`postgres` is then the first primary)."""
    matchmaking: MatchmakingProcess | None = None
    """The failover scenarios' matchmaking, on its own database of the pair."""
    cluster: NatsCluster | None = None
    clocks: tuple[ClockServiceProcess, ...] = ()
    bots: tuple[BotsServiceProcess, ...] = ()
    fresh_bus: bool = False
    """JetStream started empty: it holds only what was appended after the template."""

    @property
    def database_url(self) -> str:
        """The services' URL: with a pair, its multi-host URL to whichever is primary."""
        return self.pair.url if self.pair is not None else self.postgres.url()

    @property
    def nats_url(self) -> str:
        """The NATS URL the services use (every node's, comma-separated, on a cluster)."""
        if self.cluster is not None:
            return self.cluster.url
        assert self.nats is not None
        return self.nats.url

    @property
    def single_nats(self) -> EmbeddedNats:
        """The one NATS server of a stack without a cluster."""
        assert self.nats is not None, "a cluster stack: use stack.cluster"
        return self.nats

    @property
    def since_template(self) -> bool:
        """JetStream holds only what was appended after the template (a fresh bus)."""
        return self.fresh_bus

    @property
    def companions(self) -> list[TableServiceProcess]:
        """The processes beside the table services: clocks, bots, matchmaking."""
        extra = [self.matchmaking] if self.matchmaking is not None else []
        return [*self.clocks, *self.bots, *extra]

    def log_tails(self) -> str:
        """Every service's log tail, for a failure message."""
        processes = [*self.services, *self.companions]
        return "\n".join(f"== {s.log_path.name}\n{s.log_tail(20)}" for s in processes)

    async def relay_leader(self) -> TableServiceProcess | None:
        """The replica whose relay holds the leader's advisory lock (None: nobody yet).

        The lock lives on the relay's own database session: PostgreSQL tells that
        session's client port, and the replica is the process with that local port.
        """
        connection = await asyncpg.connect(libpq_dsn(self.database_url))
        try:
            port = await connection.fetchval(
                _LEADER_PORT, RELAY_LOCK_KEY >> 32, RELAY_LOCK_KEY & 0xFFFFFFFF
            )
        finally:
            await connection.close()
        if port is None:
            return None
        for service in self.services:
            if service.pid is not None and port in _local_ports(service.pid):
                return service
        return None

    async def new_relay_leader(
        self, not_this: TableServiceProcess | None = None
    ) -> TableServiceProcess:
        """Wait (bounded) until a running replica other than `not_this` leads the relay."""
        async with asyncio.timeout(LEADER_WAIT_SECONDS):
            while True:
                leader = await self.relay_leader()
                if leader is not None and leader is not not_this and leader.running:
                    return leader
                await asyncio.sleep(0.2)


def _local_ports(pid: int) -> set[int]:
    with contextlib.suppress(psutil.Error):
        return {c.laddr.port for c in psutil.Process(pid).net_connections(kind="tcp")}
    return set()


@contextlib.asynccontextmanager
async def chaos_stack(template: Template, root: Path, replicas: int = 1) -> AsyncIterator[Stack]:
    """Copies of the template's servers and `replicas` service processes on them."""
    shutil.copytree(template.postgres_dir, root / "postgres")
    shutil.copytree(template.nats_dir, root / "nats")
    postgres = EmbeddedPostgres(root / "postgres", durable=False)
    nats_server = EmbeddedNats(root / "nats")
    services: list[TableServiceProcess] = []
    try:
        await asyncio.to_thread(postgres.start)
        await asyncio.to_thread(nats_server.start)
        for number in range(replicas):
            port = free_port()
            env = service_env(postgres.url(), nats_server.url, SUBJECT_ROOT, port)
            services.append(TableServiceProcess(env, port, root / f"table{number}.log"))
        await asyncio.gather(*(s.start() for s in services))
        yield Stack(postgres, nats_server, services, template.tables)
    finally:
        for service in services:
            service.kill()
        if postgres.running:
            postgres.thaw()  # a scenario that failed while it was frozen
        nats_server.stop()
        postgres.stop()


@contextlib.asynccontextmanager
async def failover_stack(template: Template, root: Path) -> AsyncIterator[Stack]:
    """The template's PostgreSQL as a primary and a synchronous standby
    (tests.chaos.replication), a fresh NATS, one table service and its companions (a
    clock, a bots process, matchmaking on its own database of the pair), every service
    on the pair's multi-host, read-write-only URLs; two of the template's tables in
    play (`_two`)."""
    pair = ReplicatedPostgres(template.postgres_dir, root)
    nats_server = EmbeddedNats(root / "nats")
    processes: list[TableServiceProcess] = []
    try:
        await together(pair.start(), asyncio.to_thread(nats_server.start))
        port = free_port()
        env = service_env(pair.url, nats_server.url, SUBJECT_ROOT, port)
        table = TableServiceProcess(env, port, root / "table0.log")
        processes.append(table)

        async def companions() -> Companions:
            url = await pair.create_database(MATCHMAKING_DATABASE)
            return await _companions(env, table, url, root, processes)

        _, (clock, bots, matchmaking) = await together(table.start(), companions())
        yield Stack(
            pair.primary.server, nats_server, [table], _two(template), pair=pair,
            matchmaking=matchmaking, clocks=(clock,), bots=(bots,), fresh_bus=True,
        )  # fmt: skip
    finally:
        for process in processes:
            process.kill()
        nats_server.stop()
        await asyncio.to_thread(pair.stop)


MATCHMAKING_DATABASE = "kozyr_matchmaking"
Companions = tuple[ClockServiceProcess, BotsServiceProcess, MatchmakingProcess]


async def together(*work: Awaitable[Any]) -> list[Any]:
    """Every one of `work` at once, their results in order; if one fails, the others
    are cancelled and its failure raised as it is (the stacks start their servers and
    services side by side: one after the other took 14-22 s on a loaded machine)."""
    tasks = [asyncio.ensure_future(w) for w in work]
    try:
        return list(await asyncio.gather(*tasks))
    finally:
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)


def _two(template: Template) -> tuple[TableSetup, ...]:
    """Two of the template's six tables, one of each game (a 3-5-8, a Khözör): the HA
    stacks' extra servers and companions share the machine's cores with the load.
    Two still play through every fault (400-950 moves, both games' events, each
    table's stream relayed and checked, both verified), beside the computer tables;
    four cost twice the CPU (the stack's start and the invariants' reads slower on a
    loaded machine) for games that end about as late (a game is one move after the
    other)."""
    return (template.tables[0], template.tables[-1])


async def _companions(
    env: dict[str, str],
    table: TableServiceProcess,
    matchmaking_url: str,
    root: Path,
    processes: list[TableServiceProcess],
) -> Companions:
    """A clock, a bots process (no think time) and matchmaking (on `matchmaking_url`,
    migrated here) beside `table`, with the table service's bus settings; each is added
    to `processes` before it starts (to be killed whatever happens)."""
    await migrate(matchmaking_url)

    def beside(cls: type[P], name: str, **settings: str) -> P:
        port = free_port()
        own = {**env, "KOZYR_GRPC_PORT": str(port), "KOZYR_TABLE_TARGET": table.target}
        process = cls({**own, **settings}, port, root / f"{name}.log")
        processes.append(process)
        return process

    clock = beside(ClockServiceProcess, "clock0")
    bots = beside(BotsServiceProcess, "bots0", KOZYR_BOTS_THINK_SECONDS="0")
    matchmaking = beside(
        MatchmakingProcess, "matchmaking0",
        KOZYR_DATABASE_URL=matchmaking_url, KOZYR_MATCHMAKING_TICK_SECONDS="0.5",
        # its silent players never set a client seed: every first deal waits for the
        # clock's expiry of its seed window, faults or not (short, to keep tables moving)
        KOZYR_MATCHMAKING_SEED_WINDOW_SECONDS="2",
    )  # fmt: skip
    await asyncio.gather(clock.start(), bots.start(), matchmaking.start())
    return clock, bots, matchmaking


STREAM_REPLICAS = 3


@contextlib.asynccontextmanager
async def cluster_stack(template: Template, root: Path) -> AsyncIterator[Stack]:
    """A copy of the template's PostgreSQL, a fresh 3-node NATS cluster, one table
    service and its companions (a clock, a bots process, matchmaking on a database of
    its own), every stream R3; two of the template's tables in play (`_two`)."""
    shutil.copytree(template.postgres_dir, root / "postgres")
    postgres = EmbeddedPostgres(root / "postgres", durable=False)
    cluster = NatsCluster(root / "nats")
    processes: list[TableServiceProcess] = []
    try:
        await together(asyncio.to_thread(postgres.start), cluster.start())
        port = free_port()
        env = service_env(postgres.url(), cluster.url, SUBJECT_ROOT, port)
        env["KOZYR_STREAM_REPLICAS"] = str(STREAM_REPLICAS)
        table = TableServiceProcess(env, port, root / "table0.log")
        processes.append(table)

        async def companions() -> Companions:
            url = await _create_database(postgres, MATCHMAKING_DATABASE)
            return await _companions(env, table, url, root, processes)

        _, (clock, bots, matchmaking) = await together(table.start(), companions())
        yield Stack(
            postgres, None, [table], _two(template), cluster=cluster, clocks=(clock,),
            bots=(bots,), matchmaking=matchmaking, fresh_bus=True,
        )  # fmt: skip
    finally:
        for process in processes:
            process.kill()
        cluster.close()
        postgres.stop()


async def _create_database(postgres: EmbeddedPostgres, name: str) -> str:
    """A new empty database on `postgres`; its URL."""
    connection = await asyncpg.connect(libpq_dsn(postgres.url()))
    try:
        await connection.execute(f'CREATE DATABASE "{name}"')
    finally:
        await connection.close()
    return postgres.url(name)
