"""Prometheus metrics of the gRPC edge, and the /metrics HTTP endpoint.

The metric objects are module-level (Prometheus' registry is process-wide, and creating a
metric twice is an error): every server in a process records into the same series,
labelled by gRPC service, method and status code. Other modules (event store, relay)
define their own metrics the same way, with the `kozyr_` prefix.
"""

from __future__ import annotations

import functools
import threading
from dataclasses import dataclass
from typing import Any
from wsgiref.simple_server import WSGIServer

import grpc
from prometheus_client import Counter, Histogram, start_http_server

GRPC_HANDLED = Counter(
    "kozyr_grpc_server_handled_total",
    "gRPC calls completed by the server, by final status code.",
    ["grpc_service", "grpc_method", "grpc_code"],
)
GRPC_HANDLING_SECONDS = Histogram(
    "kozyr_grpc_server_handling_seconds",
    "Time from a call's start to its end (for streams: the whole stream).",
    ["grpc_service", "grpc_method"],
    buckets=(0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30),
)


def split_method(full_method: str) -> tuple[str, str]:
    """Split a full method path into its service and method names.

    "/kozyr.table.v1.TableService/SubmitAction" → ("kozyr.table.v1.TableService", "SubmitAction")
    """
    service, _, method = full_method.lstrip("/").partition("/")
    return service, method


def observe_call(full_method: str, code: grpc.StatusCode, seconds: float) -> None:
    """Record one finished call."""
    handled, handling = _series(full_method, code)
    handled.inc()
    handling.observe(seconds)


@functools.cache
def _series(full_method: str, code: grpc.StatusCode) -> tuple[Any, Any]:
    """The labelled series of a method and code, looked up once (`labels()` validates
    and locks on every call; methods and codes are few and fixed)."""
    service, method = split_method(full_method)
    return (
        GRPC_HANDLED.labels(service, method, code.name),
        GRPC_HANDLING_SECONDS.labels(service, method),
    )


@dataclass
class MetricsServer:
    """The running /metrics endpoint (a daemon thread); `port` is the bound port."""

    server: WSGIServer
    thread: threading.Thread

    @property
    def port(self) -> int:
        return int(self.server.server_port)

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()
        self.thread.join()


def start_metrics_server(host: str, port: int) -> MetricsServer:
    """Serve the process' metrics over HTTP at http://host:port/metrics (port 0: any free)."""
    server, thread = start_http_server(port, addr=host)
    return MetricsServer(server, thread)
