"""Moves on the wire ↔ the games' commands, for every game through its plugin.

An `Action` is read as neutral data — the name of its oneof field and that message's
fields as a dict (`fields_of`) — which the game's plugin turns into a command; the
plugin's (field name, fields) of a command fill an `Action` back (`action_from_command`,
for the legal moves a view lists). No game is named here: a new game's moves need no
line of this module, only its plugin (`kozyr.games.plugin`).

Malformed input (an empty oneof, an unknown card text, a move of another game, an
unspecified enum) is refused with INVALID_ARGUMENT before any rule runs; whether a
well-formed move is legal is the decider's business (FAILED_PRECONDITION).
"""

from __future__ import annotations

from typing import Any

from google.protobuf.message import Message

from kozyr.api.table.v1 import actions_pb2
from kozyr.games.plugin import AnyPlugin, MalformedAction, plugin_by_id, registered
from kozyr.runtime.errors import InvalidArgument
from kozyr.table.edge.views import message_from


def fields_of(message: Message) -> dict[str, Any]:
    """Every field of `message` as neutral data, defaults included (proto3 reads an unset
    field as its default): nested messages as dicts, enums by value name (the number when
    the value has no name), repeated fields as lists."""
    data: dict[str, Any] = {}
    for field in message.DESCRIPTOR.fields:
        value = getattr(message, field.name)
        if field.message_type is not None:
            data[field.name] = (
                [fields_of(v) for v in value] if field.is_repeated else fields_of(value)
            )
        elif field.enum_type is not None:
            names = field.enum_type.values_by_number
            read = [
                names[v].name if v in names else v
                for v in (value if field.is_repeated else [value])
            ]
            data[field.name] = read if field.is_repeated else read[0]
        else:
            data[field.name] = list(value) if field.is_repeated else value
    return data


def command_from_action(game_id: str, seat: int, action: actions_pb2.Action) -> Any:
    """The decider command for `action` played by `seat` at a `game_id` table."""
    kind = action.WhichOneof("action")
    if kind is None:
        raise InvalidArgument("EMPTY_ACTION", "the action names no move")
    try:
        return plugin_by_id(game_id).command_of(kind, seat, fields_of(getattr(action, kind)))
    except MalformedAction as err:
        raise InvalidArgument(err.reason, str(err)) from None


def action_from_command(command: Any, plugin: AnyPlugin | None = None) -> actions_pb2.Action:
    """The wire form of a player command (views list the legal moves this way); the game
    is found from the command's type unless its plugin is given."""
    game = plugin or _plugin_of(command)
    kind, fields = game.action_of(command)
    action = message_from(actions_pb2.Action, {kind: fields})
    assert isinstance(action, actions_pb2.Action)
    return action


def _plugin_of(command: Any) -> AnyPlugin:
    for plugin in registered():
        if type(command) in plugin.rules.COMMANDS:
            return plugin
    raise ValueError(f"not a player command: {command!r}")
