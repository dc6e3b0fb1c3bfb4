"""A table's game as a client reads it, for any registered game: the plugin of a view's
`game`, the game's own view message (its field of `TableView.game_view`, or unpacked
from `packed_game` for a game with no field there), and views and moves as neutral
data — what a game's computer players (`GameInfo.levels`) and a generic renderer read.

The bots, `kozyr play` and the dispute viewer find a game here and in its `GameInfo`,
never by its name.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from typing import Any

from google.protobuf import descriptor_pool, json_format, message_factory
from google.protobuf.message import Message

from kozyr.api.table.v1 import actions_pb2, views_pb2
from kozyr.games.catalogue import UnknownGame, game_by_code, registered
from kozyr.games.info import Move
from kozyr.games.plugin import AnyPlugin

__all__ = [
    "UnknownGame",
    "action_of",
    "game_view",
    "move_of",
    "neutral_view",
    "plugin_of",
    "registered",
    "set_game_options",
    "set_named_game_options",
]


def plugin_of(view: views_pb2.TableView) -> AnyPlugin:
    """The plugin of the view's game (UnknownGame for a game this client lacks)."""
    return game_by_code(view.game)


@functools.cache
def _message_class(full_name: str) -> type[Message]:
    descriptor = descriptor_pool.Default().FindMessageTypeByName(full_name)
    return message_factory.GetMessageClass(descriptor)


def game_view(view: views_pb2.TableView) -> Message:
    """The game's own view message in `view` (its field, or `packed_game` unpacked into
    the plugin's `view_message`)."""
    which = view.WhichOneof("game_view")
    if which is None:
        raise ValueError(f"table {view.table_id} has no game view")
    if which != "packed_game":
        held: Message = getattr(view, which)
        return held
    unpacked = _message_class(plugin_of(view).view_message)()
    if not view.packed_game.Unpack(unpacked):
        raise ValueError(f"table {view.table_id}: its game view is not {plugin_of(view).id}'s")
    return unpacked


def _data(message: Message) -> dict[str, Any]:
    return json_format.MessageToDict(
        message, preserving_proto_field_name=True, always_print_fields_with_no_presence=True
    )


def neutral_view(view: views_pb2.TableView) -> dict[str, Any]:
    """The game's view as neutral data: its message's fields by name (every one, its
    default where unset; 64-bit numbers as strings, enums by name, as proto JSON)."""
    return _data(game_view(view))


def action_of(move: Move) -> actions_pb2.Action:
    """A move of neutral data as its `Action` (enum values by their names; a value the
    `Action` cannot hold is a ValueError)."""
    kind, fields = move
    try:
        return json_format.ParseDict({kind: fields}, actions_pb2.Action())
    except json_format.ParseError as error:
        raise ValueError(f"not a move: {kind} {fields!r}") from error


def move_of(action: actions_pb2.Action) -> Move:
    """A listed move as neutral data: (its field in the `Action` oneof, that message's
    fields)."""
    kind = action.WhichOneof("action")
    if kind is None:
        raise ValueError("an action with no move")
    return kind, _data(getattr(action, kind))


def set_game_options(request: Message, options: Message) -> None:
    """Put a game's options message into the `options` oneof field of its type of a
    request (CreateTable, EnterQueue, CreatePrivateTable): any game's, by its type."""
    for field in request.DESCRIPTOR.oneofs_by_name["options"].fields:
        if field.message_type is not None and field.message_type is options.DESCRIPTOR:
            getattr(request, field.name).CopyFrom(options)
            return
    raise ValueError(
        f"{request.DESCRIPTOR.name} has no options field of {options.DESCRIPTOR.full_name}"
    )


def set_named_game_options(request: Message, named: Mapping[str, Message]) -> None:
    """Put options given by keyword into a request: each keyword is the request's field
    in its `options` oneof (the game's id, as `create_table(game, seats,
    <game id>=options)` has always taken them), its value that game's options message.
    A keyword naming no such field, or a message of another game's type, is a TypeError
    (as an unknown keyword argument was)."""
    fields = {f.name: f for f in request.DESCRIPTOR.oneofs_by_name["options"].fields}
    for name, options in named.items():
        field = fields.get(name)
        if field is None or field.message_type is not options.DESCRIPTOR:
            raise TypeError(f"{request.DESCRIPTOR.name} has no game options {name}=")
        getattr(request, name).CopyFrom(options)
