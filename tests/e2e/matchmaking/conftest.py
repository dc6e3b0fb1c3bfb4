"""The matchmaking service as processes beside a table service process (real PostgreSQL
and NATS), each service on a database of its own, as deployed: matchmaking's replicas
share theirs and publish its lobby and ratings with their own relay. Its clock is moved
through a file (`KOZYR_MATCHMAKING_CLOCK_OFFSET_FILE`), so a test skips the minute
before computers fill a table instead of sleeping it."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar, TypeVar

import pytest

from kozyr.client import MatchmakingClient, TableClient
from kozyr.eventstore import PostgresEventStore, RecordedEvent
from kozyr.infra import free_port
from kozyr.matchmaking.lobby import STREAM
from kozyr.matchmaking.service import SERVICE_NAME
from tests.e2e.bots.conftest import BotsServiceProcess
from tests.e2e.conftest import Deployment, TableServiceProcess, deployed, service_env
from tests.support.tables import token

T = TypeVar("T")


class MatchmakingProcess(TableServiceProcess):
    """`python -m kozyr.matchmaking` on a fixed port."""

    module: ClassVar[str] = "kozyr.matchmaking"
    health_service: ClassVar[str] = SERVICE_NAME


@dataclass
class MatchmakingStack:
    """A table service process and matchmaking replicas on their own database (`database_url`)
    and the table's subject root."""

    table: Deployment
    database_url: str
    """Matchmaking's own database (the lobby and ratings), migrated."""
    log_dir: Path
    replicas: list[MatchmakingProcess] = field(default_factory=list)
    clients: list[Any] = field(default_factory=list)
    others: list[TableServiceProcess] = field(default_factory=list)

    @property
    def clock_file(self) -> Path:
        return self.log_dir / "clock-offset"

    def set_clock(self, seconds: float) -> None:
        """Run matchmaking's clock `seconds` ahead of the wall clock (every replica)."""
        self.clock_file.write_text(str(seconds))

    async def start_matchmaking(self, **settings: object) -> MatchmakingProcess:
        """One more replica; `settings` are KOZYR_MATCHMAKING_* fields (tick_seconds…)."""
        port = free_port()
        env = service_env(self.database_url, self.table.nats_url, self.table.subject_root, port)
        env.update(
            KOZYR_TABLE_TARGET=self.table.target,
            KOZYR_LOG_LEVEL="INFO",
            KOZYR_LOG_FORMAT="json",
            KOZYR_MATCHMAKING_CLOCK_OFFSET_FILE=str(self.clock_file),
            KOZYR_MATCHMAKING_TICK_SECONDS="0.1",
            KOZYR_MATCHMAKING_COMPLETE_AFTER_SECONDS="1",
        )
        env.update({f"KOZYR_MATCHMAKING_{k.upper()}": str(v) for k, v in settings.items()})
        replica = MatchmakingProcess(
            env, port, self.log_dir / f"matchmaking{len(self.replicas)}.log"
        )
        self.replicas.append(replica)
        await replica.start()
        return replica

    async def start_bots(self) -> BotsServiceProcess:
        """The bots service (think time 0), to play the computer seats of our tables."""
        port = free_port()
        env = service_env(
            self.table.database_url, self.table.nats_url, self.table.subject_root, port
        )
        env.update(KOZYR_TABLE_TARGET=self.table.target, KOZYR_BOTS_THINK_SECONDS="0")
        bots = BotsServiceProcess(env, port, self.log_dir / "bots.log")
        self.others.append(bots)
        await bots.start()
        return bots

    def client(self, player: str, replica: int = 0) -> MatchmakingClient:
        client = MatchmakingClient(self.replicas[replica].target, token(player))
        self.clients.append(client)
        return client

    def tables(self, player: str) -> TableClient:
        client = TableClient(self.table.target, token(player))
        self.clients.append(client)
        return client

    async def lobby_events(self) -> list[RecordedEvent]:
        async with PostgresEventStore(self.database_url) as store:
            return await store.read(STREAM)

    async def close(self) -> None:
        for client in self.clients:
            await client.close()
        for process in [*self.replicas, *self.others]:
            process.stop()


async def eventually(probe: Callable[[], Any], seconds: float = 30.0) -> Any:
    """Poll an async probe until it returns something truthy."""
    async with asyncio.timeout(seconds):
        while True:
            value = await probe()
            if value:
                return value
            await asyncio.sleep(0.1)


@pytest.fixture
async def mm_stack(
    database_url: str,
    matchmaking_database_url: str,
    nats_url: str,
    subject_root: str,
    tmp_path: Path,
) -> AsyncIterator[MatchmakingStack]:
    """A table service process; start matchmaking with `await mm_stack.start_matchmaking()`."""
    async with deployed(database_url, nats_url, subject_root, tmp_path) as table:
        stack = MatchmakingStack(table, matchmaking_database_url, tmp_path)
        stack.set_clock(0)
        try:
            yield stack
        finally:
            await stack.close()
