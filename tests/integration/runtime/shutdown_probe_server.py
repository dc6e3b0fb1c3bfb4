"""A service process for the graceful-shutdown test (run as a script, never imported).

Protocol on stdout, one line each: "PORT <n>" once serving; "WAITING" when a
WaitForShutdown call is in flight; "HOLDING" when a HoldThroughShutdown call is;
"HOOK before" / "HOOK after" from its shutdown hooks. WaitForShutdown returns only once
shutdown has begun, proving that calls in flight complete during the grace period.
HoldThroughShutdown returns once shutdown has begun *and* a line arrives on stdin, so
the test can make new calls while it is still in flight. Echo answers at once.
Configured by KOZYR_* variables like any service.
"""

from __future__ import annotations

import asyncio
import sys
from typing import Any

import grpc

from kozyr.api.common.v1 import cards_pb2
from kozyr.runtime.interceptors import AuthPolicy
from kozyr.runtime.logging import configure_logging_for
from kozyr.runtime.server import GrpcServer, ServiceSpec
from kozyr.runtime.settings import load_settings

PROBE_SERVICE = "kozyr.testing.v1.ShutdownProbe"


def say(line: str) -> None:
    print(line, flush=True)


def probe_spec(server_ref: list[GrpcServer]) -> ServiceSpec:
    async def wait_for_shutdown(request: cards_pb2.Card, context: Any) -> cards_pb2.Card:
        say("WAITING")
        await server_ref[0].shutting_down.wait()
        return cards_pb2.Card(code="finished")

    async def hold_through_shutdown(request: cards_pb2.Card, context: Any) -> cards_pb2.Card:
        say("HOLDING")
        await server_ref[0].shutting_down.wait()
        await asyncio.to_thread(sys.stdin.readline)
        return cards_pb2.Card(code="finished")

    async def echo(request: cards_pb2.Card, context: Any) -> cards_pb2.Card:
        return request

    def register(server: grpc.aio.Server) -> None:
        handlers = {
            name: grpc.unary_unary_rpc_method_handler(
                behaviour,
                request_deserializer=cards_pb2.Card.FromString,
                response_serializer=cards_pb2.Card.SerializeToString,
            )
            for name, behaviour in {
                "WaitForShutdown": wait_for_shutdown,
                "HoldThroughShutdown": hold_through_shutdown,
                "Echo": echo,
            }.items()
        }
        server.add_generic_rpc_handlers(
            [grpc.method_handlers_generic_handler(PROBE_SERVICE, handlers)]
        )

    return ServiceSpec(PROBE_SERVICE, register)


async def main() -> None:
    settings = load_settings(required={"jwt_key"})
    configure_logging_for(settings)
    server_ref: list[GrpcServer] = []
    public = AuthPolicy(public_methods=frozenset({PROBE_SERVICE}))
    server = GrpcServer(settings, [probe_spec(server_ref)], auth=public)
    server_ref.append(server)

    async def before() -> None:
        say("HOOK before")

    async def after() -> None:
        say("HOOK after")

    server.add_shutdown_hook(before, before_stop=True)
    server.add_shutdown_hook(after)
    say(f"PORT {await server.start()}")
    await server.run_until_signal()


if __name__ == "__main__":
    asyncio.run(main())
