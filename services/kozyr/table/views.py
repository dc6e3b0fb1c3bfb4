"""A game engine's view (a JSON-able dict) → its protobuf message in TableView's `game_view`.

The proto messages (protos/kozyr/table/v1/views.proto) mirror the engines' views key for
key, so the conversion is `json_format.ParseDict` after two small reshapes:

* 3-5-8's `contracts_used` is a list of lists, which protobuf cannot hold: each inner
  list becomes a `ContractList` (`{"contracts": [...]}`).
* Nulls are dropped. ParseDict would quietly read a null as "unset" for ANY field, so a
  null in a field that cannot be unset (an `int32 talon_count`, say) would silently
  become 0. Here a null is accepted only where the proto can say "absent" (`optional`
  scalars, messages) or "empty" (repeated fields: the engines' nullable lists, which
  are never empty when present); anywhere else it is drift.

Drift between an engine and the proto fails loudly, as `ViewDriftError`: an unknown key
(ParseDict with `ignore_unknown_fields=False`), a missing top-level key, a value of the
wrong type, or a null where none may be.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar

from google.protobuf import json_format
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
    data = _without_nulls(view, descriptor, descriptor.name)
    try:
        return json_format.ParseDict(data, message, ignore_unknown_fields=False)
    except json_format.ParseError as error:
        raise ViewDriftError(f"{descriptor.full_name}: {error}") from error


def _wrap_contract_lists(view: Mapping[str, Any]) -> dict[str, Any]:
    """3-5-8's `contracts_used` [[...], ...] → [{"contracts": [...]}, ...]."""
    data = dict(view)
    used = data.get("contracts_used")
    if isinstance(used, list):
        data["contracts_used"] = [{"contracts": row} for row in used]
    return data


def _without_nulls(data: Mapping[str, Any], descriptor: Descriptor, path: str) -> dict[str, Any]:
    """`data` without its null values, recursively; a null a field cannot hold is drift.

    Keys that name no field are kept: ParseDict reports them with their path.
    """
    out: dict[str, Any] = {}
    for key, value in data.items():
        field = descriptor.fields_by_name.get(key)
        if field is None:
            out[key] = value
        elif value is not None:
            out[key] = _nested_without_nulls(value, field, f"{path}.{key}")
        elif not (field.has_presence or field.is_repeated):
            raise ViewDriftError(f"{path}.{key} is null, but the field cannot be unset")
    return out


def _nested_without_nulls(value: Any, field: FieldDescriptor, path: str) -> Any:
    """The value of one field, with nulls dropped inside its messages (not inside maps)."""
    sub = field.message_type
    if sub is None or sub.GetOptions().map_entry:
        return value
    if isinstance(value, list):
        return [_message_without_nulls(item, sub, f"{path}[{i}]") for i, item in enumerate(value)]
    return _message_without_nulls(value, sub, path)


def _message_without_nulls(value: Any, descriptor: Descriptor, path: str) -> Any:
    """A nested message's dict without nulls; any other value is left for ParseDict to refuse."""
    return _without_nulls(value, descriptor, path) if isinstance(value, Mapping) else value
