"""Commands and events as JSON: what the event store keeps of a game.

Commands and events are frozen dataclasses of ints, strings, bools, bytes, cards, enums
and tuples of these; `encode_event` writes one as (type name, JSON data) — cards as
text, bytes as hex, enums by value — and `decode_event` rebuilds it from its class's
type hints.
"""

from __future__ import annotations

import dataclasses
import enum
import functools
import types
import typing
from collections.abc import Mapping, Sequence
from typing import Any

from kozyr.games.cards import Card, parse_card


def to_json(value: Any) -> Any:
    """A command/event field value → JSON: cards as text, bytes as hex, enums by value."""
    if isinstance(value, Card):
        return str(value)
    if isinstance(value, bytes):
        return value.hex()
    if isinstance(value, enum.Enum):
        return value.value
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: to_json(getattr(value, f.name)) for f in dataclasses.fields(value)}
    if isinstance(value, Mapping):
        return {str(k): to_json(v) for k, v in value.items()}
    if isinstance(value, (tuple, list, frozenset, set)):
        return [to_json(v) for v in value]
    return value


def from_json(tp: Any, value: Any) -> Any:
    """Inverse of `to_json` guided by a type annotation (a resolved type hint)."""
    origin = typing.get_origin(tp)
    if tp is Any:
        return value
    if origin in (typing.Union, types.UnionType):
        if value is None:
            return None
        arms = [a for a in typing.get_args(tp) if a is not type(None)]
        return from_json(arms[0], value)
    if origin is tuple:
        args = typing.get_args(tp)
        if len(args) == 2 and args[1] is Ellipsis:
            return tuple(from_json(args[0], v) for v in value)
        return tuple(from_json(a, v) for a, v in zip(args, value, strict=True))
    if origin is frozenset:
        (arg,) = typing.get_args(tp)
        return frozenset(from_json(arg, v) for v in value)
    if origin is list:
        (arg,) = typing.get_args(tp)
        return [from_json(arg, v) for v in value]
    if tp is Card:
        return parse_card(value)
    if tp is bytes:
        return bytes.fromhex(value)
    if isinstance(tp, type) and issubclass(tp, enum.Enum):
        return tp(value)
    if dataclasses.is_dataclass(tp):
        return decode_fields(tp, value)
    return value


@functools.cache
def _field_types(cls: Any) -> dict[str, Any]:
    """Resolved field annotations of a dataclass (resolving them is slow: done once)."""
    return typing.get_type_hints(cls)


def decode_fields(cls: Any, data: Mapping[str, Any]) -> Any:
    """A dataclass from its JSON fields. A field missing from `data` takes its default:
    an event stored before the field was added reads as it was meant then."""
    hints = _field_types(cls)
    kwargs = {
        f.name: from_json(hints[f.name], data[f.name])
        for f in dataclasses.fields(cls)
        if f.name in data or not _has_default(f)
    }
    return cls(**kwargs)


def _has_default(field: dataclasses.Field[Any]) -> bool:
    return (
        field.default is not dataclasses.MISSING or field.default_factory is not dataclasses.MISSING
    )


def encode_event(event: Any) -> tuple[str, dict[str, Any]]:
    """(type name, JSON data) of an event or command dataclass."""
    data = to_json(event)
    assert isinstance(data, dict)
    return type(event).__name__, data


def decode_event(registry: Mapping[str, type], type_name: str, data: Mapping[str, Any]) -> Any:
    """Rebuild an event or command from its type name and JSON data.

    Raises KeyError for an unknown type; TypeError/ValueError for malformed data.
    """
    return decode_fields(registry[type_name], data)


def registry_of(classes: Sequence[type]) -> dict[str, type]:
    """Name → class table for `decode_event`."""
    return {cls.__name__: cls for cls in classes}
