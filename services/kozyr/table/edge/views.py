"""A game engine's view (a JSON-able dict) → its protobuf message in TableView's `game_view`.

Every game's plugin names its view message (`GamePlugin.view_message`, a full name found
in the default descriptor pool) and reshapes what protobuf cannot hold
(`GamePlugin.view_to_wire`: 3-5-8's `contracts_used`, a list of lists); the message
mirrors the engine's view key for key, so the conversion fills it field by field
(`_fill`). The message goes into its own field of TableView's `game_view` oneof, or,
for a game that has none there, packed into `packed_game` (`set_game_view`). No game is
named here.

A null leaves its field unset, and is accepted only where the proto can say "absent"
(`optional` scalars, messages) or "empty" (repeated fields: the engines' nullable
lists, which are never empty when present). Drift between an engine and the proto
fails loudly, as `ViewDriftError`: an unknown key, a missing top-level key, a value of
the wrong type (a bool is not a number), or a null where none may be.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from typing import Any, TypeVar

from google.protobuf import descriptor_pool, message_factory
from google.protobuf.descriptor import Descriptor, FieldDescriptor
from google.protobuf.message import Message

from kozyr.api.table.v1 import views_pb2
from kozyr.games.plugin import UnknownGame, plugin_by_id


class ViewDriftError(ValueError):
    """An engine's view no longer matches its proto message: engine and proto disagree."""


def game_view_to_proto(game_id: str, view: Mapping[str, Any]) -> Message:
    """The proto message of `view`, the dict the `game_id` game's `view(state, seat)` made.

    Raises ValueError for an unregistered game or a view message missing from the
    descriptor pool, ViewDriftError when the view does not fit its message exactly.
    """
    try:
        plugin = plugin_by_id(game_id)
    except UnknownGame:
        raise ValueError(f"no view message for game {game_id!r}") from None
    cls = _message_class(plugin.view_message)
    wire = plugin.view_to_wire(view)
    fast = _built(cls, wire) if wire.get("game_id") == game_id and _complete(cls, wire) else None
    return fast if fast is not None else _parse(wire, cls(), game_id)


@functools.cache
def _message_class(full_name: str) -> type[Message]:
    try:
        descriptor = descriptor_pool.Default().FindMessageTypeByName(full_name)
    except KeyError:
        raise ValueError(f"no message {full_name!r} in the descriptor pool") from None
    return message_factory.GetMessageClass(descriptor)


_GAME_VIEW_FIELDS = {
    field.message_type.full_name: field.name
    for field in views_pb2.TableView.DESCRIPTOR.oneofs_by_name["game_view"].fields
    if field.message_type is not None and field.name != "packed_game"
}
"""The game view messages with a field of their own in TableView, by full name."""


def game_view_fields(game_id: str, view: Mapping[str, Any]) -> tuple[str, Mapping[str, Any]] | None:
    """(TableView's field for the game, the view's data as it fills that field), when the
    game has a field of its own there and the data fits its message exactly: TableView's
    constructor then fills it in one call. None: use `game_view_to_proto`, which fills it
    strictly (or names the drift) — the same message either way."""
    try:
        plugin = plugin_by_id(game_id)
    except UnknownGame:
        return None
    name = _GAME_VIEW_FIELDS.get(plugin.view_message)
    if name is None:
        return None
    cls = _message_class(plugin.view_message)
    wire = plugin.view_to_wire(view)
    if wire.get("game_id") != game_id or not _complete(cls, wire):
        return None
    return (name, wire) if _fits(wire, _spec(cls.DESCRIPTOR)) else None


def fits(cls: type[Message], data: Mapping[str, Any]) -> bool:
    """True when `cls(**data)` builds exactly what `fill_message` would (see below)."""
    return _fits(data, _spec(cls.DESCRIPTOR))


def set_game_view(view: views_pb2.TableView, game_view: Message) -> None:
    """Put `game_view` into its own field of the `game_view` oneof, or packed into
    `packed_game` for a game that has none there (a plugin game added since)."""
    name = _GAME_VIEW_FIELDS.get(game_view.DESCRIPTOR.full_name)
    if name is None:
        view.packed_game.Pack(game_view)
    else:
        getattr(view, name).CopyFrom(game_view)


def fill_message(message: Message, data: Mapping[str, Any]) -> None:
    """Fill `message` from neutral data (keys = field names), as strictly as views."""
    _fill(message, data, message.DESCRIPTOR.name)


def message_from(cls: type[Message], data: Mapping[str, Any]) -> Message:
    """A new `cls` message filled from neutral data, as strictly as `fill_message`."""
    built = _built(cls, data)
    if built is None:
        built = cls()
        fill_message(built, data)
    return built


# -- the fast path -------------------------------------------------------------------------
#
# Filling a message field by field from Python (`_fill`) took most of a view's cost. Data
# that fits its message exactly is handed whole to the message's constructor instead
# (protobuf's C code fills nested messages from dicts, repeated fields from lists, enums
# from their names), after one lean pass that checks what the constructor does not: no
# unknown key, no null where the field cannot be unset, no bool for a number, exact
# types. Anything that pass does not accept goes the strict way (`_fill`), which either
# fills the message the same way or raises the ViewDriftError naming the misfit.

_NULLABLE = 1
_REPEATED = 2
_MESSAGE = 4
_MAP = 8
_ENUM = 16

_Spec = dict[str, tuple[int, Any]]
"""Per field name: flags, and what its values must be (a type set, enum names, a _Spec)."""

_FAST_TYPES: dict[int, frozenset[type]] = {
    FieldDescriptor.CPPTYPE_BOOL: frozenset({bool}),
    FieldDescriptor.CPPTYPE_STRING: frozenset({str}),
    FieldDescriptor.CPPTYPE_INT32: frozenset({int}),
    FieldDescriptor.CPPTYPE_INT64: frozenset({int}),
    FieldDescriptor.CPPTYPE_UINT32: frozenset({int}),
    FieldDescriptor.CPPTYPE_UINT64: frozenset({int}),
    FieldDescriptor.CPPTYPE_DOUBLE: frozenset({int, float}),
    FieldDescriptor.CPPTYPE_FLOAT: frozenset({int, float}),
}
"""Exact types (`type(v) in ...`): a bool is no int here, nor is any subclass."""


@functools.cache
def _spec(descriptor: Descriptor) -> _Spec:
    spec: _Spec = {}
    for field in descriptor.fields:
        flags = _NULLABLE if field.has_presence or field.is_repeated else 0
        if field.is_repeated:
            flags |= _REPEATED
        if field.message_type is not None and field.message_type.GetOptions().map_entry:
            spec[field.name] = (
                flags | _MAP,
                _value_check(field.message_type.fields_by_name["value"]),
            )
        elif field.message_type is not None:
            spec[field.name] = (flags | _MESSAGE, _spec(field.message_type))
        else:
            spec[field.name] = _value_check(field, flags)
    return spec


def _value_check(field: FieldDescriptor, flags: int = 0) -> tuple[int, Any]:
    if field.enum_type is not None:
        return flags | _ENUM, frozenset(field.enum_type.values_by_name)
    return flags, _FAST_TYPES.get(field.cpp_type, frozenset())


@functools.cache
def _top_level(descriptor: Descriptor) -> frozenset[str]:
    return frozenset(descriptor.fields_by_name)


def _complete(cls: type[Message], view: Mapping[str, Any]) -> bool:
    """Every field of a view message is a key of the view (the strict path says which
    one is missing)."""
    return view.keys() >= _top_level(cls.DESCRIPTOR)


def _built(cls: type[Message], data: Mapping[str, Any]) -> Message | None:
    """`cls(**data)` when `data` fits exactly; None: take the strict way."""
    return constructed(cls, data) if _fits(data, _spec(cls.DESCRIPTOR)) else None


M = TypeVar("M", bound=Message)


def constructed(cls: type[M], data: Mapping[str, Any]) -> M | None:
    """`cls(**data)`, for data whose parts were each found to fit (`fits`); None when
    the constructor still refuses it — what the lean pass does not check, such as a
    number out of its field's range: take the strict way, which names the misfit."""
    try:
        return cls(**data)
    except (TypeError, ValueError):
        return None


def _fits(data: Any, spec: _Spec) -> bool:
    if type(data) is not dict:
        return False
    for key, value in data.items():
        found = spec.get(key)
        if found is None:
            return False
        flags, check = found
        if value is None:
            if not flags & _NULLABLE:
                return False
            continue
        if flags & _MAP:
            if type(value) is not dict or not all(type(k) is str for k in value):
                return False
            if not _all_fit(list(value.values()), *check):
                return False
        elif flags & _REPEATED:
            if type(value) is not list:
                return False
            if flags & _MESSAGE:
                if not all(_fits(item, check) for item in value):
                    return False
            elif not _all_fit(value, flags, check):
                return False
        elif flags & _MESSAGE:
            if not _fits(value, check):
                return False
        elif flags & _ENUM:
            if type(value) is not str or value not in check:
                return False
        elif type(value) not in check:
            return False
    return True


def _all_fit(items: list[Any], flags: int, check: frozenset[Any]) -> bool:
    types = set(map(type, items))  # in C: no Python call per item
    if flags & _ENUM:
        return types <= {str} and check.issuperset(items)
    return types <= check


def _parse(view: Mapping[str, Any], message: Message, game_id: str) -> Message:
    """Fill `message` from `view`, refusing a wrong game, a missing key or any misfit."""
    descriptor = message.DESCRIPTOR
    if view.get("game_id") != game_id:
        raise ViewDriftError(f"a {game_id} view has game_id {view.get('game_id')!r}")
    missing = sorted(set(descriptor.fields_by_name) - set(view))
    if missing:
        raise ViewDriftError(f"{descriptor.full_name}: the view lacks {', '.join(missing)}")
    _fill(message, view, descriptor.name)
    return message


def _fill(message: Any, data: Mapping[str, Any], path: str) -> None:
    """Set `message`'s fields from `data`, key by key, checking every value's type.

    The job of `json_format.ParseDict` (which it replaced: ParseDict took a third of the
    table service's CPU), strict in the same ways: an unknown key, a null where the field
    cannot be unset, or a value of the wrong type is drift.
    """
    fields = message.DESCRIPTOR.fields_by_name
    for key, value in data.items():
        field = fields.get(key)
        where = f"{path}.{key}"
        if field is None:
            raise ViewDriftError(f"{path}: no field named {key!r}")
        if value is None:
            if not (field.has_presence or field.is_repeated):
                raise ViewDriftError(f"{where} is null, but the field cannot be unset")
            continue
        if field.message_type is not None and field.message_type.GetOptions().map_entry:
            _fill_map(getattr(message, key), value, field.message_type, where)
        elif field.message_type is not None:
            _fill_messages(message, field, value, where)
        elif field.is_repeated:
            items = _expect(list, value, where)
            getattr(message, key).extend(
                _scalar(field, item, f"{where}[{i}]") for i, item in enumerate(items)
            )
        else:
            setattr(message, key, _scalar(field, value, where))


def _fill_messages(message: Any, field: FieldDescriptor, value: Any, where: str) -> None:
    if field.is_repeated:
        target = getattr(message, field.name)
        for i, item in enumerate(_expect(list, value, where)):
            _fill(target.add(), _expect(Mapping, item, f"{where}[{i}]"), f"{where}[{i}]")
        return
    child = getattr(message, field.name)
    child.SetInParent()
    _fill(child, _expect(Mapping, value, where), where)


def _fill_map(target: Any, value: Any, entry: Descriptor, where: str) -> None:
    value_field = entry.fields_by_name["value"]
    for k, v in _expect(Mapping, value, where).items():
        target[_expect(str, k, where)] = _scalar(value_field, v, f"{where}[{k!r}]")


_SCALAR_TYPES: dict[int, tuple[type, ...]] = {
    FieldDescriptor.CPPTYPE_BOOL: (bool,),
    FieldDescriptor.CPPTYPE_STRING: (str,),
    FieldDescriptor.CPPTYPE_INT32: (int,),
    FieldDescriptor.CPPTYPE_INT64: (int,),
    FieldDescriptor.CPPTYPE_UINT32: (int,),
    FieldDescriptor.CPPTYPE_UINT64: (int,),
    FieldDescriptor.CPPTYPE_DOUBLE: (int, float),
    FieldDescriptor.CPPTYPE_FLOAT: (int, float),
}


def _scalar(field: FieldDescriptor, value: Any, where: str) -> Any:
    """`value` if it fits the scalar field (a bool is not a number here); an enum is
    given by its value's name."""
    if field.enum_type is not None:
        known = field.enum_type.values_by_name.get(value) if isinstance(value, str) else None
        if known is None:
            raise ViewDriftError(f"{where}: {value!r} is not a {field.enum_type.name}")
        return known.number
    allowed = _SCALAR_TYPES.get(field.cpp_type)
    if allowed is None:
        raise ViewDriftError(f"{where}: unsupported field type {field.cpp_type}")
    numeric = field.cpp_type != FieldDescriptor.CPPTYPE_BOOL
    if not isinstance(value, allowed) or (numeric and isinstance(value, bool)):
        raise ViewDriftError(f"{where}: {value!r} does not fit a {field.type} field")
    return value


def _expect(kind: Any, value: Any, where: str) -> Any:
    if not isinstance(value, kind):
        raise ViewDriftError(f"{where}: expected {getattr(kind, '__name__', kind)}, got {value!r}")
    return value
