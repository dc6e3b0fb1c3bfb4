"""Server reflection in both protocol versions: `grpc.reflection.v1` and `v1alpha`.

grpcio-reflection (1.81) serves only `grpc.reflection.v1alpha.ServerReflection`, while
today's tools ask `grpc.reflection.v1` (buf curl first, then v1alpha; clients in other
languages often v1 only). The two versions are one protocol under two package names —
the same messages, field for field and number for number — so one servicer answers
both: a v1 call is decoded and encoded with the v1alpha message classes. The v1 proto
itself is put in the descriptor pool too (v1alpha's, with the package renamed), so a
client can list and describe the v1 service like any other.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import grpc
from google.protobuf import descriptor_pb2, descriptor_pool
from grpc_reflection.v1alpha import reflection_pb2, reflection_pb2_grpc
from grpc_reflection.v1alpha._async import ReflectionServicer

V1ALPHA_SERVICE = "grpc.reflection.v1alpha.ServerReflection"
V1_SERVICE = "grpc.reflection.v1.ServerReflection"
V1_FILE = "grpc/reflection/v1/reflection.proto"


def enable_reflection(service_names: Sequence[str], server: grpc.aio.Server) -> None:
    """Serve reflection (v1 and v1alpha) for `service_names` and itself on `server`."""
    pool = descriptor_pool.Default()
    add_v1_descriptor(pool)
    servicer = ReflectionServicer([*service_names, V1_SERVICE, V1ALPHA_SERVICE], pool=pool)
    reflection_pb2_grpc.add_ServerReflectionServicer_to_server(servicer, server)
    v1 = grpc.stream_stream_rpc_method_handler(
        servicer.ServerReflectionInfo,
        request_deserializer=reflection_pb2.ServerReflectionRequest.FromString,
        response_serializer=reflection_pb2.ServerReflectionResponse.SerializeToString,
    )
    server.add_generic_rpc_handlers(
        (grpc.method_handlers_generic_handler(V1_SERVICE, {"ServerReflectionInfo": v1}),)
    )


def add_v1_descriptor(pool: Any) -> None:
    """Add grpc/reflection/v1/reflection.proto to `pool`, unless it is there already."""
    try:
        pool.FindFileByName(V1_FILE)
        return
    except KeyError:
        pass
    proto = descriptor_pb2.FileDescriptorProto()
    reflection_pb2.DESCRIPTOR.CopyToProto(proto)
    proto.name = V1_FILE
    proto.package = "grpc.reflection.v1"
    proto.ClearField("options")
    old, new = ".grpc.reflection.v1alpha.", ".grpc.reflection.v1."
    for message in proto.message_type:
        for field in message.field:
            if field.HasField("type_name"):
                field.type_name = field.type_name.replace(old, new)
    for service in proto.service:
        for method in service.method:
            method.input_type = method.input_type.replace(old, new)
            method.output_type = method.output_type.replace(old, new)
    pool.AddSerializedFile(proto.SerializeToString())
