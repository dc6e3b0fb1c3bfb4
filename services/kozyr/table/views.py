"""A game engine's view (a JSON-able dict) → its protobuf message in TableView's `game_view`.

The proto messages (protos/kozyr/table/v1/views.proto) mirror the engines' views key for
key, so the conversion fills the message field by field (`_fill`) after one reshape:
3-5-8's `contracts_used` is a list of lists, which protobuf cannot hold, so each inner
list becomes a `ContractList` (`{"contracts": [...]}`).

A null leaves its field unset, and is accepted only where the proto can say "absent"
(`optional` scalars, messages) or "empty" (repeated fields: the engines' nullable
lists, which are never empty when present). Drift between an engine and the proto
fails loudly, as `ViewDriftError`: an unknown key, a missing top-level key, a value of
the wrong type (a bool is not a number), or a null where none may be.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar

from google.protobuf.descriptor import Descriptor, FieldDescriptor

from kozyr.api.table.v1 import views_pb2
from kozyr.games.khozor_teams import GAME_ID as KHOZOR_TEAMS
from kozyr.games.three_five_eight import GAME_ID as THREE_FIVE_EIGHT

GameViewMessage = views_pb2.ThreeFiveEightView | views_pb2.KhozorTeamsView
_M = TypeVar("_M", views_pb2.ThreeFiveEightView, views_pb2.KhozorTeamsView)


class ViewDriftError(ValueError):
    """An engine's view no longer matches its proto message: engine and proto disagree."""


def game_view_to_proto(game_id: str, view: Mapping[str, Any]) -> GameViewMessage:
    """The proto message of `view`, the dict `kozyr.games.<game_id>.view(state, seat)` made.

    Raises ValueError for a game without a view message, ViewDriftError when the view
    does not fit its message exactly.
    """
    if game_id == THREE_FIVE_EIGHT:
        return _parse(_wrap_contract_lists(view), views_pb2.ThreeFiveEightView(), game_id)
    if game_id == KHOZOR_TEAMS:
        return _parse(view, views_pb2.KhozorTeamsView(), game_id)
    raise ValueError(f"no view message for game {game_id!r}")


def _parse(view: Mapping[str, Any], message: _M, game_id: str) -> _M:
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
    """`value` if it fits the scalar field (a bool is not a number here)."""
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


def _wrap_contract_lists(view: Mapping[str, Any]) -> dict[str, Any]:
    """3-5-8's `contracts_used` [[...], ...] → [{"contracts": [...]}, ...]."""
    data = dict(view)
    used = data.get("contracts_used")
    if isinstance(used, list):
        data["contracts_used"] = [{"contracts": row} for row in used]
    return data
