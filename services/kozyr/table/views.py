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
from typing import Any

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
    message = _message_class(plugin.view_message)()
    return _parse(plugin.view_to_wire(view), message, game_id)


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
