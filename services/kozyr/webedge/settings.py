"""The web edge's own settings (`KOZYR_WEBEDGE_*`) on the shared `kozyr.runtime.Settings`.

The backends' addresses (`KOZYR_TABLE_TARGET`, `KOZYR_BOTS_TARGET`, …), TLS to them and
the admission limits it applies are the shared ones.
"""

from __future__ import annotations

from pydantic import Field

from kozyr.runtime.settings import Settings


class WebEdgeSettings(Settings):
    """What `python -m kozyr.webedge` reads: the shared settings and its own."""

    webedge_host: str = Field(
        "0.0.0.0", min_length=1, description="The web edge: the address its HTTP server binds."
    )
    webedge_port: int = Field(
        8080,
        ge=0,
        le=65535,
        description="The web edge: its HTTP port for gRPC-Web calls (0 picks a free one).",
    )
    webedge_allowed_origins: str | None = Field(
        None,
        description="The web edge: comma-separated origins whose pages may call it "
        "(https://play.example.com; `http://127.0.0.1:*` for any port of a host; `*` for "
        'any origin). Unset: no cross-origin page may (docs/api.md, "Calling kozyr from '
        'a browser").',
    )
