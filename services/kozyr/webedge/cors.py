"""Cross-origin rules: which web pages may call the edge, and what they may read.

A browser sends `Origin` with every cross-origin call and first asks with an `OPTIONS`
preflight (a gRPC-Web call is never a "simple" request). An origin is allowed when it
equals one of the configured origins (`https://play.example.com`), when a configured one
ends in `:*` and the origin differs only by its port (`http://127.0.0.1:*`, for a
developer's pages on any port), or when `*` is configured. A request without `Origin`
is not a browser's cross-origin call (a tool, a server, the same origin) and is let
through: the bearer token, not CORS, is what guards the services.

No cookie is ever used (`Access-Control-Allow-Credentials` is not sent): the token
travels in `authorization`, which the page sets itself.
"""

from __future__ import annotations

from collections.abc import Iterable

ALLOWED_METHODS = "POST, OPTIONS"
ALLOWED_HEADERS = (
    "authorization",
    "accept-language",
    "content-type",
    "grpc-timeout",
    "traceparent",
    "tracestate",
    "x-grpc-web",
    "x-request-id",
    "x-user-agent",
)
"""What a page may send: the token, the language, the request id and trace context,
and what gRPC-Web clients add themselves."""
EXPOSED_HEADERS = ("grpc-status", "grpc-message", "grpc-status-details-bin", "x-request-id")
"""What a page may read of the answer's headers: the status of a trailers-only answer
and the request id the service echoes."""
PREFLIGHT_MAX_AGE_SECONDS = 600


class OriginPolicy:
    """The configured origins (KOZYR_WEBEDGE_ALLOWED_ORIGINS, comma-separated)."""

    def __init__(self, origins: Iterable[str]) -> None:
        cleaned = [o.strip().rstrip("/").lower() for o in origins if o.strip()]
        self.any = "*" in cleaned
        self.exact = frozenset(o for o in cleaned if not o.endswith(":*") and o != "*")
        self.any_port = frozenset(o[:-2] for o in cleaned if o.endswith(":*"))

    @classmethod
    def parse(cls, value: str | None) -> OriginPolicy:
        return cls((value or "").split(","))

    def allows(self, origin: str) -> bool:
        """True when a page of `origin` may call the edge."""
        origin = origin.lower()
        if self.any or origin in self.exact:
            return True
        host, _, port = origin.rpartition(":")
        return port.isdigit() and host in self.any_port

    def preflight_headers(self, origin: str) -> dict[str, str]:
        """The answer to an allowed origin's preflight."""
        return {
            **self.response_headers(origin),
            "Access-Control-Allow-Methods": ALLOWED_METHODS,
            "Access-Control-Allow-Headers": ", ".join(ALLOWED_HEADERS),
            "Access-Control-Max-Age": str(PREFLIGHT_MAX_AGE_SECONDS),
        }

    @staticmethod
    def response_headers(origin: str) -> dict[str, str]:
        """The CORS headers of an allowed origin's call: the origin itself, never `*`,
        so that caches keep answers apart by origin (`Vary`)."""
        return {
            "Access-Control-Allow-Origin": origin,
            "Access-Control-Expose-Headers": ", ".join(EXPOSED_HEADERS),
            "Vary": "Origin",
        }
