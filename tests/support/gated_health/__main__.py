"""A service that has started but does not serve yet, for the dev stack's supervisor:
a gRPC health server on 127.0.0.1:$KOZYR_GRPC_PORT answering NOT_SERVING until the
process gets SIGUSR1, then SERVING; SIGTERM stops it. The signal handlers are in place
before the port listens, so a test that saw an answer may signal at once."""

from __future__ import annotations

import asyncio
import os
import signal

import grpc
from grpc_health.v1 import health, health_pb2, health_pb2_grpc


async def main() -> None:
    server = grpc.aio.server()
    servicer = health.aio.HealthServicer()
    health_pb2_grpc.add_HealthServicer_to_server(servicer, server)
    await servicer.set("", health_pb2.HealthCheckResponse.NOT_SERVING)
    loop = asyncio.get_running_loop()
    stop = asyncio.Event()
    serving: set[asyncio.Task[None]] = set()

    def serve() -> None:
        task = loop.create_task(servicer.set("", health_pb2.HealthCheckResponse.SERVING))
        serving.add(task)

    loop.add_signal_handler(signal.SIGUSR1, serve)
    loop.add_signal_handler(signal.SIGTERM, stop.set)
    server.add_insecure_port(f"127.0.0.1:{os.environ['KOZYR_GRPC_PORT']}")
    await server.start()
    await stop.wait()
    await server.stop(None)


if __name__ == "__main__":
    asyncio.run(main())
