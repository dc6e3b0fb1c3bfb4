"""Tables as snapshots: a folded `Table` to JSON and back, and the key of the fold's code.

A snapshot only saves a cold load from replaying a whole stream (DESIGN.md §4): the log
stays the truth, a snapshot is used only when it was made by exactly this code (`fold_key()`)
and still matches the log's event at its version (the event store checks the hash), and
anything odd about one (unknown class, bad shape) means a full replay instead. Tests
check that a table loaded from a snapshot equals the same table replayed from scratch.

Tables and game states are frozen dataclasses and NamedTuples of tuples, frozensets,
enums, cards, bytes and datetimes, so the encoding tags each non-JSON value:
`{"o": [class, [fields…]]}` for a dataclass or NamedTuple, `{"e": [class, value]}` for
an enum, `{"c": "AS"}` for a card, `{"b": hex}`, `{"t": ISO 8601}`, `{"f": […]}` for a
frozenset, `{"l": […]}` for a list, `{"d": {…}}` for a dict; tuples are JSON arrays.
Classes are named only among those reachable from the type hints of `Table` and of the
game's state, both ways: a snapshot can build nothing else, and a table holding another
class is not snapshotted at all.
"""

from __future__ import annotations

import asyncio
import dataclasses
import enum
import functools
import hashlib
import sys
import typing
from collections.abc import Iterable, Iterator, Mapping
from datetime import datetime
from pathlib import Path
from types import ModuleType
from typing import Any

from kozyr.eventstore import EventStore
from kozyr.games.cards import Card, parse_card
from kozyr.games.codec import decode_event
from kozyr.games.decider import Decider
from kozyr.games.plugin import GamePlugin
from kozyr.runtime.logging import get_logger
from kozyr.table.domain.games import game_by_id, registered
from kozyr.table.domain.model import Table

log = get_logger("kozyr.table.snapshots")

FORMAT = 1
"""The layout of `encode_table`'s output; part of `fold_key()`."""

EVERY = 100
"""Events between two snapshots of a table in play: a cold load folds at most this many
events after its snapshot (about 1 ms); a finished table is snapshotted at its end."""


class SnapshotError(ValueError):
    """A table that cannot be snapshotted, or a snapshot this code cannot read."""


# ------------------------------------------------------------------ the fold's key


def _sources(module: ModuleType) -> Iterator[Path]:
    """The source files of a module, or of every module of a package."""
    file = getattr(module, "__file__", None)
    if file is None:
        raise SnapshotError(f"{module.__name__} has no source file")
    path = Path(file)
    if path.name == "__init__.py":
        yield from sorted(path.parent.rglob("*.py"))
    else:
        yield path


def fold_sources() -> list[Path]:
    """Every source file a table's fold runs: the games (every registered one), the
    table model and its seeding events, this codec."""
    from kozyr.table.adapters import repository  # repository imports this module
    from kozyr.table.domain import seeding

    modules = [sys.modules[Decider.__module__], sys.modules[Card.__module__]]
    modules.append(sys.modules[decode_event.__module__])  # events are decoded by this codec
    modules.append(sys.modules[GamePlugin.__module__])  # the fold reads fair_deal's marks
    modules += [sys.modules[Table.__module__], seeding, repository, sys.modules[__name__]]
    modules += [_module_of(plugin.rules) for plugin in registered()]
    return [path for module in modules for path in _sources(module)]


def _module_of(rules: object) -> ModuleType:
    """The module (or package) of a game's rules: the rules are usually the module."""
    if isinstance(rules, ModuleType):
        return rules
    return sys.modules[type(rules).__module__]


@functools.cache
def fold_key() -> str:
    """The `code_key` of `fold_sources()`, computed once per process.

    Any change to that code (a rule, a field, an event) gives new snapshots a new key, and
    the old ones are ignored (then replaced): nobody has to remember to bump a version.
    """
    return code_key(fold_sources())


def code_key(sources: Iterable[Path]) -> str:
    """A digest of what the files say, each under its folder's and its own name.

    The bytes are the key, not the names: a fold changed under the same file names is
    another fold. The folders above are not: the same code installed elsewhere (another
    virtualenv, another replica's image) gives the same key, so replicas share their
    snapshots instead of each dropping the others' (a store keeps one key per stream).
    """
    digest = hashlib.sha256(f"table-snapshot-format-{FORMAT}".encode())
    for path in sources:
        digest.update(f"{path.parent.name}/{path.name}".encode())
        digest.update(path.read_bytes())
    return digest.hexdigest()[:32]


# ------------------------------------------------------------------ classes a snapshot may name


def _is_record(tp: type) -> bool:
    """A frozen dataclass or a NamedTuple: rebuilt from its fields in order."""
    return dataclasses.is_dataclass(tp) or (issubclass(tp, tuple) and hasattr(tp, "_fields"))


def _field_names(tp: type) -> tuple[str, ...]:
    if dataclasses.is_dataclass(tp):
        fields = dataclasses.fields(tp)
        if any(not f.init for f in fields):
            raise SnapshotError(f"{tp.__qualname__} has a field its constructor does not take")
        return tuple(f.name for f in fields)
    return tuple(getattr(tp, "_fields"))  # noqa: B009 — a NamedTuple's, typed as tuple


@functools.cache
def classes_of(game_id: str) -> Mapping[str, type]:
    """Every dataclass, NamedTuple and enum reachable from the game's state type hints."""
    found: dict[str, type] = {}

    def visit(tp: Any) -> None:
        for arg in typing.get_args(tp):
            visit(arg)
        if not isinstance(tp, type) or tp is Card or found.get(tp.__qualname__) is tp:
            return
        if issubclass(tp, enum.Enum) or _is_record(tp):
            if tp.__qualname__ in found:
                raise SnapshotError(f"two classes named {tp.__qualname__} in {game_id}")
            found[tp.__qualname__] = tp
        if _is_record(tp):
            try:
                hints = typing.get_type_hints(tp)
            except (NameError, TypeError) as error:
                raise SnapshotError(f"type hints of {tp.__qualname__}: {error}") from error
            for hint in hints.values():
                visit(hint)

    visit(Table)
    visit(type(game_by_id(game_id).rules.initial_state({})))
    return found


# ------------------------------------------------------------------ values


def _encode(value: Any, classes: Mapping[str, type]) -> Any:
    if value is None or type(value) in (str, int, bool):
        return value
    if isinstance(value, Card):
        return {"c": str(value)}
    if isinstance(value, bytes):
        return {"b": value.hex()}
    if type(value) is datetime:
        return {"t": value.isoformat()}
    if isinstance(value, (tuple, list, frozenset, dict)) and not _is_record(type(value)):
        return _encode_collection(value, classes)
    name = type(value).__qualname__
    if classes.get(name) is not type(value):
        raise SnapshotError(f"cannot snapshot a {name}: not a class of this game's state")
    if isinstance(value, enum.Enum):
        return {"e": [name, value.value]}
    return {"o": [name, [_encode(getattr(value, f), classes) for f in _field_names(type(value))]]}


def _encode_collection(value: Any, classes: Mapping[str, type]) -> Any:
    if type(value) is tuple:
        return [_encode(v, classes) for v in value]
    if type(value) is list:
        return {"l": [_encode(v, classes) for v in value]}
    if type(value) is frozenset:
        return {"f": [_encode(v, classes) for v in value]}
    if type(value) is dict and all(type(k) is str for k in value):
        return {"d": {k: _encode(v, classes) for k, v in value.items()}}
    raise SnapshotError(f"cannot snapshot a {type(value).__qualname__}")


def _decode(raw: Any, classes: Mapping[str, type]) -> Any:
    if isinstance(raw, list):
        return tuple(_decode(v, classes) for v in raw)
    if not isinstance(raw, dict):
        return raw
    ((tag, body),) = raw.items()
    if tag == "c":
        return parse_card(body)
    if tag == "b":
        return bytes.fromhex(body)
    if tag == "f":
        return frozenset(_decode(v, classes) for v in body)
    if tag == "l":
        return [_decode(v, classes) for v in body]
    if tag == "d":
        return {k: _decode(v, classes) for k, v in body.items()}
    if tag == "t":
        return datetime.fromisoformat(body)
    name, inner = body
    cls = classes[name]
    if tag == "e" and issubclass(cls, enum.Enum):
        return cls(inner)
    if tag == "o" and _is_record(cls):
        return cls(*(_decode(v, classes) for v in inner))
    raise SnapshotError(f"unknown snapshot tag {tag!r} for {name}")


# ------------------------------------------------------------------ tables

_TABLE_FIELDS = tuple(f.name for f in dataclasses.fields(Table) if f.name != "game")
"""Every field of a table but its game (a module, found again by `game_id`)."""


def encode_table(table: Table) -> dict[str, Any]:
    """A table as a JSON object (raises SnapshotError for a value the codec does not know)."""
    classes = classes_of(table.game_id)
    fields = {name: _encode(getattr(table, name), classes) for name in _TABLE_FIELDS}
    return {"format": FORMAT, "game_id": table.game_id, "fields": fields}


def decode_table(data: Mapping[str, Any]) -> Table:
    """The table `encode_table` saved; SnapshotError when it cannot be rebuilt."""
    try:
        if data["format"] != FORMAT:
            raise SnapshotError(f"snapshot format {data['format']!r}, expected {FORMAT}")
        game_id = data["game_id"]
        classes = classes_of(game_id)
        fields = {name: _decode(raw, classes) for name, raw in data["fields"].items()}
        return Table(game=game_by_id(game_id).rules, **fields)
    except SnapshotError:
        raise
    except (KeyError, TypeError, ValueError) as error:
        raise SnapshotError(f"unreadable table snapshot: {error!r}") from error


# ------------------------------------------------------------------ when to save, how to read


class TableSnapshots:
    """Reads a table's snapshot for a cold load, and saves new ones in the background.

    Never fails a load: a snapshot that is missing, of other code, or unreadable means a
    full replay. Saving happens off the caller's path (a task per snapshot), when a table
    is `every` events past its last known snapshot or has just finished; a failed save is
    only logged, and tried again later.
    """

    def __init__(self, store: EventStore, every: int = EVERY) -> None:
        self._store = store
        self._every = every
        self.key = ""
        if every > 0:
            try:
                self.key = fold_key()
            except (SnapshotError, OSError) as error:  # e.g. installed without sources
                log.warning("table snapshots off", error=str(error))
                self._every = 0
        self._saved: dict[str, int] = {}
        """table id → the version of its newest snapshot this process knows of."""
        self._pending: set[asyncio.Task[None]] = set()

    async def read(self, stream: str, table_id: str) -> Table | None:
        """The table as its newest usable snapshot has it, or None."""
        if self._every <= 0:
            return None
        snapshot = await self._store.read_snapshot(stream, self.key)
        if snapshot is None:
            return None
        try:
            table = decode_table(snapshot.data)
        except SnapshotError as error:
            log.warning("table snapshot ignored", table_id=table_id, error=str(error))
            return None
        if table.table_id != table_id or table.version != snapshot.version:
            log.warning("table snapshot ignored", table_id=table_id, error="another table")
            return None
        self._saved[table_id] = snapshot.version
        return table

    def consider(self, stream: str, table: Table) -> None:
        """Save a snapshot of `table` if it is due (from a running event loop only)."""
        if self._every <= 0:
            return
        saved = self._saved.get(table.table_id, 0)
        if table.version - saved < self._every and not (table.is_over and saved < table.version):
            return
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            return
        self._saved[table.table_id] = table.version
        task = loop.create_task(self._save(stream, table, saved))
        self._pending.add(task)
        task.add_done_callback(self._pending.discard)

    def forget(self, table_id: str) -> None:
        """The table left the cache: its snapshot version is read again with it."""
        self._saved.pop(table_id, None)

    async def flush(self) -> None:
        """Wait for the snapshots being saved (tests, benchmarks, shutdown)."""
        while self._pending:
            await asyncio.gather(*self._pending, return_exceptions=True)

    async def _save(self, stream: str, table: Table, previous: int) -> None:
        try:
            data = encode_table(table)
        except SnapshotError as error:  # a code problem: retried only `every` events later
            log.warning("table snapshot not saved", table_id=table.table_id, error=str(error))
            return
        try:
            await self._store.save_snapshot(stream, table.version, self.key, data)
        except Exception as error:  # an optimisation never fails its caller
            log.warning("table snapshot not saved", table_id=table.table_id, error=repr(error))
            if self._saved.get(table.table_id) == table.version:
                self._saved[table.table_id] = previous
