"""The test game's own view message, `kozyr.test.v1.HigherCardView`, added to protobuf's
default descriptor pool at import (no .proto file, no generated code, no change to
protos/): a game's view message only has to be findable by its full name."""

from __future__ import annotations

from google.protobuf import descriptor_pb2, descriptor_pool, message_factory
from google.protobuf.message import Message

FILE = "kozyr/test/v1/higher_card.proto"
VIEW = "kozyr.test.v1.HigherCardView"

_F = descriptor_pb2.FieldDescriptorProto


def _field(
    message: descriptor_pb2.DescriptorProto,
    name: str,
    number: int,
    kind: int,
    *,
    repeated: bool = False,
    optional: bool = False,
    type_name: str = "",
) -> None:
    field = message.field.add(name=name, number=number, type=kind, json_name=name)
    field.label = _F.LABEL_REPEATED if repeated else _F.LABEL_OPTIONAL
    if type_name:
        field.type_name = type_name
    if optional:  # proto3 `optional`: a synthetic oneof gives the field presence
        field.proto3_optional = True
        field.oneof_index = len(message.oneof_decl)
        message.oneof_decl.add(name=f"_{name}")


def _file() -> descriptor_pb2.FileDescriptorProto:
    file = descriptor_pb2.FileDescriptorProto(name=FILE, package="kozyr.test.v1", syntax="proto3")
    play = file.message_type.add(name="Play")
    _field(play, "seat", 1, _F.TYPE_INT32)
    _field(play, "card", 2, _F.TYPE_STRING)
    view = file.message_type.add(name="HigherCardView")
    _field(view, "game_id", 1, _F.TYPE_STRING)
    _field(view, "seat", 2, _F.TYPE_INT32, optional=True)
    _field(view, "deal", 3, _F.TYPE_INT32)
    _field(view, "deals_total", 4, _F.TYPE_INT32)
    _field(view, "hand", 5, _F.TYPE_STRING, repeated=True)
    _field(view, "hand_counts", 6, _F.TYPE_INT32, repeated=True)
    _field(view, "played", 7, _F.TYPE_MESSAGE, repeated=True, type_name=".kozyr.test.v1.Play")
    _field(view, "scores", 8, _F.TYPE_INT32, repeated=True)
    _field(view, "winner", 9, _F.TYPE_INT32, optional=True)
    _field(view, "over", 10, _F.TYPE_BOOL)
    return file


def _register() -> type[Message]:
    pool = descriptor_pool.Default()
    try:
        descriptor = pool.FindMessageTypeByName(VIEW)
    except KeyError:
        pool.Add(_file())
        descriptor = pool.FindMessageTypeByName(VIEW)
    return message_factory.GetMessageClass(descriptor)


HigherCardView = _register()
"""The message class (use `HigherCardView()`, or `any.Unpack(HigherCardView())`)."""
