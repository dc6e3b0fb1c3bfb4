"""`kozyr health`: ask a service's gRPC health endpoint whether it serves.

The container image's HEALTHCHECK and compose's health checks run it inside the
container, so it must need nothing but the image: no grpc_health_probe binary, no
shell. Without `--target` it asks 127.0.0.1 on KOZYR_GRPC_PORT, the port the service
in the same container listens on, which makes one command right for every service.
"""

from __future__ import annotations

import asyncio
import os

import grpc
from grpc_health.v1 import health_pb2, health_pb2_grpc

from kozyr import stackfile
from kozyr.cli.problems import CliError, ExitCode

DEFAULT_PORT = "50051"


def default_target() -> str:
    """127.0.0.1 on the container's own service port (KOZYR_GRPC_PORT); outside a
    container, in a checkout running `make run`, its table service; else port 50051."""
    if os.environ.get("KOZYR_GRPC_PORT"):
        return f"127.0.0.1:{os.environ['KOZYR_GRPC_PORT']}"
    stack = stackfile.running()
    if stack is not None and "table" in stack.targets:
        return stack.targets["table"]
    return f"127.0.0.1:{DEFAULT_PORT}"


async def _status(target: str, service: str, seconds: float) -> str:
    async with grpc.aio.insecure_channel(target) as channel:
        stub = health_pb2_grpc.HealthStub(channel)
        try:
            reply = await stub.Check(
                health_pb2.HealthCheckRequest(service=service), timeout=seconds
            )
        except grpc.aio.AioRpcError as err:
            what = f"service {service!r}" if service else "the server"
            raise CliError(
                f"{target}: {what} did not answer ({err.code().name}: {err.details()})",
                ExitCode.FAILED,
            ) from None
    return str(health_pb2.HealthCheckResponse.ServingStatus.Name(reply.status))


def check(target: str, service: str = "", timeout: float = 3.0) -> str:
    """The status name; raises CliError (exit 1) unless it is SERVING."""
    status = asyncio.run(_status(target, service, timeout))
    if status != "SERVING":
        raise CliError(f"{target}: {status}", ExitCode.FAILED)
    return status
