"""A gRPC health server that answers SERVING, for what only needs one to probe (the
`kozyr health` command, a stack's table service), without starting a kozyr service."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor

import grpc
from grpc_health.v1 import health, health_pb2, health_pb2_grpc


@contextlib.contextmanager
def serving_health_port() -> Iterator[int]:
    """The port of a health server on 127.0.0.1 answering SERVING, stopped after."""
    server = grpc.server(ThreadPoolExecutor(max_workers=2))
    servicer = health.HealthServicer()
    health_pb2_grpc.add_HealthServicer_to_server(servicer, server)
    port = server.add_insecure_port("127.0.0.1:0")
    server.start()
    servicer.set("", health_pb2.HealthCheckResponse.SERVING)
    try:
        yield port
    finally:
        server.stop(None)
