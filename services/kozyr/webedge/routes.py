"""Which backend answers which gRPC-Web path, and which methods stream.

A path is `/<package>.<Service>/<Method>`, as in gRPC. The edge serves the
client-facing services alone — table, matchmaking, bots (hints) and clock — each on the
target the settings give it (KOZYR_TABLE_TARGET, …); any other service (reflection,
health, a service whose target is unset) is UNIMPLEMENTED here, as a gRPC server
answers a service it does not host.

Whether a method streams its answers is read from the protos' descriptors: a stream
counts against the edge's stream limit, a unary call against its call limit (as the
services count them, kozyr.runtime.limits). The call itself is forwarded the same way
either way (one request, answers until the status), so a method the protos here do not
know yet still goes through, counted as a call.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass

from google.protobuf import descriptor_pool

from kozyr.api.bots.v1 import bots_service_pb2
from kozyr.api.clock.v1 import clock_service_pb2
from kozyr.api.matchmaking.v1 import matchmaking_service_pb2
from kozyr.api.table.v1 import table_service_pb2
from kozyr.runtime import Settings

SERVICES: Mapping[str, str] = {
    table_service_pb2.DESCRIPTOR.services_by_name["TableService"].full_name: "table",
    matchmaking_service_pb2.DESCRIPTOR.services_by_name["MatchmakingService"].full_name: (
        "matchmaking"
    ),
    bots_service_pb2.DESCRIPTOR.services_by_name["BotsService"].full_name: "bots",
    clock_service_pb2.DESCRIPTOR.services_by_name["ClockService"].full_name: "clock",
}
"""The services a browser may call, by proto full name → the backend that hosts it."""

_PATH = re.compile(r"^/(?P<service>[A-Za-z_][\w.]*)/(?P<method>[A-Za-z_]\w*)$")


@dataclass(frozen=True)
class Route:
    """Where one call goes: the backend's name and target, the gRPC method path."""

    backend: str
    target: str
    path: str
    streaming: bool


def targets_of(settings: Settings) -> dict[str, str]:
    """Backend name → host:port, for the backends whose target is set."""
    given = {
        "table": settings.table_target,
        "matchmaking": settings.matchmaking_target,
        "bots": settings.bots_target,
        "clock": settings.clock_target,
    }
    return {name: target for name, target in given.items() if target}


def service_name(path: str) -> str:
    """The client-facing service a path names, for the metrics; "" for any other (an
    unknown path's text must not become a label: clients choose it)."""
    matched = _PATH.match(path)
    return matched["service"] if matched and matched["service"] in SERVICES else ""


def route(path: str, targets: Mapping[str, str]) -> Route | None:
    """The route of a request path; None when no backend of this edge hosts it."""
    matched = _PATH.match(path)
    if matched is None:
        return None
    backend = SERVICES.get(matched["service"])
    if backend is None or backend not in targets:
        return None
    return Route(backend, targets[backend], path, _streams(matched["service"], matched["method"]))


def _streams(service: str, method: str) -> bool:
    """True when the protos say the method streams its answers."""
    found = descriptor_pool.Default().FindServiceByName(service).methods_by_name.get(method)
    return bool(found and found.server_streaming)
