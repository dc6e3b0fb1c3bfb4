"""Prometheus metrics of the gRPC edge, and the /metrics HTTP endpoint.

The metric objects are module-level (Prometheus' registry is process-wide, and creating a
metric twice is an error): every server in a process records into the same series,
labelled by gRPC service, method and status code. Other modules (event store, relay)
define their own metrics the same way, with the `kozyr_` prefix.
"""

from __future__ import annotations

import functools
import gc
import threading
import time
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


GC_PAUSE_SECONDS = Histogram(
    "kozyr_gc_pause_seconds",
    "How long each garbage collection stopped the process, by generation: every call in "
    "flight waits it out, so a long one is a latency tail no queue explains.",
    ["generation"],
    buckets=(0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5),
)


class _GcPauses:
    """A `gc.callbacks` entry timing each collection from its start to its stop."""

    def __init__(self) -> None:
        self.started = 0.0
        # Resolved once, never in the callback: `labels()` takes the metric's lock, and a
        # collection can start in a thread holding it (a scrape copying the children).
        self.series = [GC_PAUSE_SECONDS.labels(str(g)) for g in range(3)]

    def __call__(self, phase: str, info: dict[str, int]) -> None:
        if phase == "start":
            self.started = time.perf_counter()
        else:
            self.series[info["generation"]].observe(time.perf_counter() - self.started)


_GC_PAUSES = _GcPauses()


def watch_gc_pauses() -> None:
    """Record every garbage collection's pause in `kozyr_gc_pause_seconds` from now on
    (once per process, however often called: a process's metrics endpoint calls it)."""
    if _GC_PAUSES not in gc.callbacks:
        gc.callbacks.append(_GC_PAUSES)


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
    """Serve the process' metrics over HTTP at http://host:port/metrics (port 0: any free),
    garbage collections' pauses among them."""
    watch_gc_pauses()
    server, thread = start_http_server(port, addr=host)
    return MetricsServer(server, thread)
