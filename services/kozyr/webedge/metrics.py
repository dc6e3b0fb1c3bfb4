"""The web edge's Prometheus metrics (served on KOZYR_METRICS_PORT, like a service's).

Its own series, not the services' `kozyr_grpc_server_*`: a call through the edge is
also counted by the service that answers it, and one series fed by both would count it
twice.
"""

from __future__ import annotations

from prometheus_client import Counter, Gauge

WEB_CALLS = Counter(
    "kozyr_webedge_calls_total",
    "gRPC-Web calls the edge answered, by service and final status code (its own "
    'refusals included: an unknown service\'s calls under grpc_service="").',
    ["grpc_service", "grpc_code"],
)
WEB_OPEN = Gauge(
    "kozyr_webedge_open_calls",
    "Calls being forwarded now, by kind (unary, stream).",
    ["kind"],
)
WEB_ORIGIN_REFUSED = Counter(
    "kozyr_webedge_origin_refused_total",
    "Requests (preflights and calls) refused for their Origin.",
)


def observe_call(service: str, code_name: str) -> None:
    """Record one answered call."""
    WEB_CALLS.labels(service, code_name).inc()
