"""Matchmaking in-process at its service edge: real gRPC on a free port, its own
PostgreSQL database (as deployed: never the table's), NATS, and a real table service
in-process beside it for CreateTable. Cheaper than the e2e processes, and the test can
set any `MatchmakingSettings` field (a short wait, a held placement) directly."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Any

import pytest

from kozyr.client import MatchmakingClient
from kozyr.eventstore import PostgresEventStore, RecordedEvent
from kozyr.matchmaking.lobby import STREAM
from kozyr.matchmaking.service import MatchmakingService
from kozyr.matchmaking.settings import MatchmakingSettings
from tests.integration.table.conftest import (
    RunningTableService,
    in_process_values,
    running_table_service,
)
from tests.support.tables import token

FAST = {"tick_seconds": 0.05}
"""Every test's replica ticks often: a ticket asking for computers is matched at once."""


@dataclass
class RunningMatchmaking:
    service: MatchmakingService
    target: str
    database_url: str
    clients: list[MatchmakingClient] = field(default_factory=list)

    def client(self, player: str, *, retry: bool = True) -> MatchmakingClient:
        """A player's SDK client (`retry=False`: see the UNAVAILABLE answers themselves,
        which the SDK's own retries would otherwise absorb)."""
        client = MatchmakingClient(self.target, token(player), retry=retry)
        self.clients.append(client)
        return client

    async def lobby_events(self) -> list[RecordedEvent]:
        """The lobby's log as stored (not this replica's fold of it)."""
        async with PostgresEventStore(self.database_url) as store:
            return await store.read(STREAM)


def matchmaking_settings(
    database_url: str,
    nats_url: str,
    subject_root: str,
    table_target: str,
    settings: dict[str, Any] | None = None,
    **options: Any,
) -> MatchmakingSettings:
    """A replica's settings: `options` are matchmaking's own knobs by their short names
    (`tick_seconds` is KOZYR_MATCHMAKING_TICK_SECONDS), `settings` shared fields."""
    shared = {"database_url": database_url, "table_target": table_target}
    shared |= in_process_values(nats_url, subject_root) | (settings or {})
    own = {f"matchmaking_{name}": value for name, value in (FAST | options).items()}
    return MatchmakingSettings.load(**shared, **own)


@contextlib.asynccontextmanager
async def running_matchmaking(
    database_url: str,
    nats_url: str,
    subject_root: str,
    table_target: str,
    settings: dict[str, Any] | None = None,
    **options: Any,
) -> AsyncIterator[RunningMatchmaking]:
    """Start matchmaking on its migrated `database_url`; `options` are
    `MatchmakingSettings` fields, `settings` more Settings fields. Always stopped, its
    clients closed."""
    service = MatchmakingService(
        matchmaking_settings(
            database_url, nats_url, subject_root, table_target, settings, **options
        )
    )
    port = await service.start()
    running = RunningMatchmaking(service, f"127.0.0.1:{port}", database_url)
    try:
        yield running
    finally:
        for client in running.clients:
            await client.close()
        await service.stop(0)


@pytest.fixture
async def tables(
    database_url: str, nats_url: str, subject_root: str
) -> AsyncIterator[RunningTableService]:
    """The table service matchmaking opens its tables at (on the test's database)."""
    async with running_table_service(database_url, nats_url, subject_root) as running:
        yield running


@pytest.fixture
async def matchmaking(
    tables: RunningTableService, matchmaking_database_url: str, nats_url: str, subject_root: str
) -> AsyncIterator[RunningMatchmaking]:
    """A matchmaking replica with its default settings (but a fast tick)."""
    async with running_matchmaking(
        matchmaking_database_url, nats_url, subject_root, tables.target
    ) as running:
        yield running
