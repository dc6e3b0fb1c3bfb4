"""Table snapshots are an optimisation only: whole games of both games, played through the
real TableApp on the in-memory event store, load from a snapshot exactly as a full replay
folds them — at the end, from any version in between, and never from a snapshot that is
unusable (another key, another table, unreadable): then the load replays everything.

A `ReadLog` wraps the store to record which versions a load read from, so a test can tell
a snapshot load (reads only what follows the snapshot) from a full replay (reads from 0).
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import os
import random
import shutil
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from kozyr.eventstore import InMemoryEventStore, NewEvent, RecordedEvent
from kozyr.games import khozor_teams, three_five_eight
from kozyr.table.adapters import snapshots
from kozyr.table.adapters.repository import TableRepository, fold_recorded, stream_of
from kozyr.table.adapters.snapshots import SnapshotError, decode_table, encode_table, fold_key
from kozyr.table.app import TableApp
from kozyr.table.domain import model, seeding
from kozyr.table.domain.model import Table
from tests.unit.table.test_audit_games import play_to_the_end

GAMES = [three_five_eight.GAME_ID, khozor_teams.GAME_ID]


class ReadLog(InMemoryEventStore):
    """The in-memory store, noting the `from_version` of every `read` and every snapshot
    stored (a spy, no stub)."""

    def __init__(self, clock: Callable[[], datetime] = lambda: datetime.now(UTC)) -> None:
        super().__init__(clock=clock)
        self.reads_from: list[int] = []
        self.saved: list[tuple[int, dict[str, Any]]] = []

    async def save_snapshot(
        self, stream: str, version: int, key: str, data: Mapping[str, Any]
    ) -> bool:
        stored = await super().save_snapshot(stream, version, key, data)
        if stored:
            self.saved.append((version, json.loads(json.dumps(data))))
        return stored

    async def read(
        self, stream: str, from_version: int = 0, limit: int | None = None
    ) -> list[RecordedEvent]:
        self.reads_from.append(from_version)
        return await super().read(stream, from_version, limit)


@dataclass
class Game:
    """A finished table in its store, and every version of it folded from the log."""

    store: ReadLog
    table: Table
    events: list[RecordedEvent]
    folds: list[Table] = field(default_factory=list)
    """folds[v - 1]: the table replayed from its first event up to version v."""

    @property
    def saved(self) -> list[tuple[int, dict[str, Any]]]:
        """(version, data) of every snapshot saved while the game was played."""
        return self.store.saved

    @property
    def stream(self) -> str:
        return stream_of(self.table.table_id)


async def _play(game_id: str, seed: int, *, snapshot_every: int) -> Game:
    rng = random.Random(seed)
    store = ReadLog()
    app = TableApp(store, new_seed=lambda: rng.randbytes(32))
    app.tables = TableRepository(store, snapshot_every=snapshot_every)
    table = await play_to_the_end(app, game_id, rng)
    await app.tables.snapshots.flush()
    return await _folded(store, table)


async def _folded(store: ReadLog, table: Table) -> Game:
    events = await store.read(stream_of(table.table_id))
    folds: list[Table] = []
    for event in events:
        folded = fold_recorded(folds[-1] if folds else None, [event])
        assert folded is not None
        folds.append(folded)
    return Game(store, table, events, folds)


_PLAYED: dict[str, Game] = {}
_UNSNAPSHOTTED: list[Game] = []


async def unsnapshotted() -> Game:
    """A whole 3-5-8 game in a store of its own with no snapshot: a copy of one game,
    played once per session, for a test to save the snapshots it wants."""
    if not _UNSNAPSHOTTED:
        _UNSNAPSHOTTED.append(await _play(three_five_eight.GAME_ID, 5, snapshot_every=0))
    events = _UNSNAPSHOTTED[0].events
    times = iter(e.recorded_at for e in events)
    store = ReadLog(clock=lambda: next(times))
    for event in events:
        metadata = {k: v for k, v in event.metadata.items() if k != "request_id"}
        await store.append(
            event.stream,
            event.position - 1,
            [NewEvent(event.type, event.data, event.schema_version)],
            request_id=str(event.position),
            metadata=metadata,
        )
    game = await _folded(store, _UNSNAPSHOTTED[0].table)
    assert game.folds == _UNSNAPSHOTTED[0].folds
    return game


async def played(game_id: str) -> Game:
    """One whole game per game, snapshotted as the service does, played once per session.

    Tests must not save snapshots into its store: they play their own game for that.
    """
    if game_id not in _PLAYED:
        _PLAYED[game_id] = await _play(game_id, 8, snapshot_every=snapshots.EVERY)
    return _PLAYED[game_id]


async def cold_load(game: Game) -> tuple[Table, list[int]]:
    """The table as a fresh repository (empty cache) loads it, and the versions it read."""
    game.store.reads_from.clear()
    table = await TableRepository(game.store).load(game.table.table_id)
    return table, list(game.store.reads_from)


@pytest.mark.parametrize("game_id", GAMES)
async def test_a_finished_table_loads_from_its_final_snapshot_as_a_replay_folds_it(
    game_id: str,
) -> None:
    game = await played(game_id)
    snapshot = await game.store.read_snapshot(game.stream, fold_key())
    assert snapshot is not None
    assert snapshot.version == game.table.version

    table, reads_from = await cold_load(game)

    assert table == game.folds[-1]
    assert reads_from == [game.table.version]  # nothing before the snapshot was read
    assert table.is_over
    assert table.game.result(table.state) == game.table.game.result(game.table.state)


@pytest.mark.parametrize("game_id", GAMES)
async def test_every_snapshot_saved_during_play_is_the_replayed_table(game_id: str) -> None:
    game = await played(game_id)
    versions = [version for version, _ in game.saved]

    periodic = versions[:-1]  # at the first version 100 past the last (appends add several)
    gaps = [b - a for a, b in zip([0, *periodic], periodic, strict=False)]
    assert periodic
    assert all(100 <= gap < 120 for gap in gaps)
    assert versions[-1] == game.table.version  # and once more at the end
    for version, data in game.saved:
        assert decode_table(data) == game.folds[version - 1]


@pytest.mark.parametrize("game_id", GAMES)
async def test_every_version_of_a_whole_game_survives_the_snapshot_codec(game_id: str) -> None:
    for folded in (await played(game_id)).folds:
        stored = json.loads(json.dumps(encode_table(folded)))  # as jsonb gives it back
        assert decode_table(stored) == folded


@pytest.mark.parametrize("share", [0.1, 0.5, 0.9, 1.0])
async def test_a_snapshot_in_mid_game_plus_the_events_after_it_is_the_whole_table(
    share: float,
) -> None:
    game = await unsnapshotted()
    version = int(len(game.folds) * share)
    data = encode_table(game.folds[version - 1])
    assert await game.store.save_snapshot(game.stream, version, fold_key(), data)

    table, reads_from = await cold_load(game)

    assert table == game.folds[-1]
    assert reads_from == [version]


async def test_tables_in_play_are_snapshotted_every_so_many_events() -> None:
    game = await unsnapshotted()
    repository = TableRepository(game.store, snapshot_every=40)
    for folded in game.folds[: 2 * 40 + 7]:
        repository.remember(folded)
        await repository.snapshots.flush()
        snapshot = await game.store.read_snapshot(game.stream, fold_key())
        expected = folded.version - folded.version % 40
        assert (snapshot.version if snapshot else 0) == expected


@pytest.mark.parametrize(
    "spoil",
    [
        pytest.param(lambda data: data | {"format": 0}, id="other-format"),
        pytest.param(lambda data: data | {"game_id": "chess"}, id="unknown-game"),
        pytest.param(lambda data: data | {"fields": {"bogus": 1}}, id="bad-fields"),
        pytest.param(lambda data: _replace_state(data, {"o": ["Path", []]}), id="foreign-class"),
        pytest.param(lambda data: _replace_state(data, {"c": "1X"}), id="no-such-card"),
        pytest.param(lambda data: _set_field(data, "table_id", "another"), id="another-table"),
        pytest.param(lambda data: _set_field(data, "version", 3), id="another-version"),
    ],
)
async def test_an_unusable_snapshot_means_a_full_replay(spoil: Any) -> None:
    game = await unsnapshotted()
    version = len(game.folds) // 2
    data = spoil(encode_table(game.folds[version - 1]))
    await game.store.save_snapshot(game.stream, version, fold_key(), data)

    table, reads_from = await cold_load(game)

    assert table == game.folds[-1]
    assert reads_from == [0]


async def test_a_snapshot_of_another_fold_key_is_ignored() -> None:
    game = await unsnapshotted()
    data = encode_table(game.folds[100])
    await game.store.save_snapshot(game.stream, 101, "code-before-a-rule-change", data)

    table, reads_from = await cold_load(game)

    assert table == game.folds[-1]
    assert reads_from == [0]


def test_the_fold_key_covers_the_rules_the_table_model_and_the_codec() -> None:
    sources = set(snapshots.fold_sources())
    for module in (three_five_eight.transitions, khozor_teams.rules, model, seeding, snapshots):
        assert Path(module.__file__ or "") in sources
    assert len(fold_key()) == 32


def _copied(sources: list[Path], root: Path) -> list[Path]:
    """The files copied under `root`, each in a folder named as its own (names, bytes and
    modification times kept): the same code, installed somewhere else."""
    copies = []
    for number, path in enumerate(sources):
        copy = root / str(number) / path.parent.name / path.name
        copy.parent.mkdir(parents=True)
        shutil.copy2(path, copy)
        copies.append(copy)
    return copies


@contextlib.contextmanager
def _one_byte_changed(path: Path) -> Iterator[None]:
    """The file with one byte changed in place: same name, same size, same times."""
    original = path.read_bytes()
    times = path.stat()
    changed = bytearray(original)
    changed[len(changed) // 2] ^= 0x01
    path.write_bytes(bytes(changed))
    os.utime(path, ns=(times.st_atime_ns, times.st_mtime_ns))
    try:
        yield
    finally:
        path.write_bytes(original)


def test_the_fold_key_is_the_code_s_bytes_not_its_file_names(tmp_path: Path) -> None:
    """Change any one file of the fold, keeping its name, size and time (an edited rule,
    a new bytecode-level difference of the same module): the key changes. The same
    files elsewhere keep it."""
    sources = snapshots.fold_sources()
    copies = _copied(sources, tmp_path)
    key = snapshots.code_key(sources)
    assert snapshots.code_key(copies) == key, "where the code is installed does not matter"
    for copy in copies:
        with _one_byte_changed(copy):
            assert snapshots.code_key(copies) != key, copy.relative_to(tmp_path)
        assert snapshots.code_key(copies) == key


async def test_a_snapshot_of_the_fold_before_its_code_changed_is_ignored(tmp_path: Path) -> None:
    """A snapshot saved by the fold as it was is read by that same code, and ignored (a
    full replay) by the fold whose rules changed under the same file names."""
    game = await unsnapshotted()
    copies = _copied(snapshots.fold_sources(), tmp_path)
    rules = next(c for c in copies if c.name == "transitions.py")  # 3-5-8's own rules
    version = len(game.folds) // 2
    before = snapshots.code_key(copies)
    data = encode_table(game.folds[version - 1])
    assert await game.store.save_snapshot(game.stream, version, before, data)

    for changed, reads_from in ((False, [version]), (True, [0])):
        with _one_byte_changed(rules) if changed else contextlib.nullcontext():
            repository = TableRepository(game.store)
            repository.snapshots.key = snapshots.code_key(copies)
        game.store.reads_from.clear()
        assert await repository.load(game.table.table_id) == game.folds[-1]
        assert game.store.reads_from == reads_from, f"rules changed: {changed}"


async def test_a_table_holding_a_class_the_codec_cannot_name_is_not_snapshotted() -> None:
    @dataclass(frozen=True)
    class Foreign:
        value: int

    folded = (await played(three_five_eight.GAME_ID)).folds[10]
    with pytest.raises(SnapshotError):
        encode_table(dataclasses.replace(folded, state=Foreign(1)))
    with pytest.raises(SnapshotError):
        encode_table(dataclasses.replace(folded, options={"when": 1.5}))


def _replace_state(data: dict[str, Any], state: Any) -> dict[str, Any]:
    return _set_field(data, "state", state)


def _set_field(data: dict[str, Any], name: str, value: Any) -> dict[str, Any]:
    return data | {"fields": data["fields"] | {name: value}}
