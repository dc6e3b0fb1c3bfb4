"""Table snapshots on real PostgreSQL: whole games of both games played through TableApp
leave a snapshot at their last event, and a cold load (a fresh repository, as after a
restart or a cache eviction) starts from it and equals a full replay of the log. The
codec and the fallbacks are tested at length on the in-memory store
(tests/unit/table/test_snapshots.py); this checks the jsonb round trip and the SQL."""

from __future__ import annotations

import random
from collections.abc import AsyncIterator

import pytest

from kozyr.eventstore import PostgresEventStore, RecordedEvent, migrate
from kozyr.games import khozor_teams, three_five_eight
from kozyr.table.adapters.repository import TableRepository, fold_recorded, stream_of
from kozyr.table.adapters.snapshots import fold_key
from kozyr.table.app import TableApp
from tests.unit.table.test_audit_games import play_to_the_end

pytestmark = pytest.mark.integration


class ReadLog(PostgresEventStore):
    """The PostgreSQL store, noting the `from_version` of every `read` (a spy, no stub)."""

    reads_from: list[int]

    async def read(
        self, stream: str, from_version: int = 0, limit: int | None = None
    ) -> list[RecordedEvent]:
        self.reads_from.append(from_version)
        return await super().read(stream, from_version, limit)


@pytest.fixture
async def store(database_url: str) -> AsyncIterator[ReadLog]:
    await migrate(database_url)
    store = ReadLog(database_url)
    store.reads_from = []
    yield store
    await store.close()


@pytest.mark.parametrize("game_id", [three_five_eight.GAME_ID, khozor_teams.GAME_ID])
async def test_a_finished_table_loads_cold_from_its_snapshot_as_a_replay_folds_it(
    store: ReadLog, game_id: str
) -> None:
    app = TableApp(store)
    played = await play_to_the_end(app, game_id, random.Random(58))
    await app.tables.snapshots.flush()
    stream = stream_of(played.table_id)
    snapshot = await store.read_snapshot(stream, fold_key())
    assert snapshot is not None
    assert snapshot.version == played.version

    store.reads_from.clear()
    loaded = await TableRepository(store).load(played.table_id)

    assert store.reads_from == [played.version]
    assert loaded == fold_recorded(None, await store.read(stream))
    assert loaded.is_over
