"""The web table page server's own settings (`KOZYR_WEBTABLE_*`) on the shared
`kozyr.runtime.Settings`.

Where the page finds the web edge is the page server's own knob
(`KOZYR_WEBTABLE_EDGE_URL`, else `KOZYR_WEBTABLE_EDGE_PORT` on the page's host), not
the edge's settings: services never read each other's classes, and the port a browser
reaches may differ from the one the edge binds (a proxy in front of it).
"""

from __future__ import annotations

from pydantic import Field

from kozyr.runtime.settings import Settings


class WebTableSettings(Settings):
    """What `python -m kozyr.webtable` reads: the shared settings and its own."""

    webtable_host: str = Field(
        "0.0.0.0", min_length=1, description="The web table page's server: the address it binds."
    )
    webtable_port: int = Field(
        8090, ge=0, le=65535, description="The web table page's HTTP port (0 picks a free one)."
    )
    webtable_edge_url: str | None = Field(
        None,
        description="The gRPC-Web edge as the page's browser reaches it "
        "(https://edge.example.com). Unset: the page's own host on KOZYR_WEBTABLE_EDGE_PORT.",
    )
    webtable_edge_port: int = Field(
        8080,
        ge=1,
        le=65535,
        description="The web edge's port on the page's own host, when KOZYR_WEBTABLE_EDGE_URL "
        "is unset: the edge's KOZYR_WEBEDGE_PORT (`make run` passes it on).",
    )
    webtable_dev_login: bool = Field(
        False,
        description="The web table page mints a player token for any name typed in "
        "(`POST /dev/token`, signed with the deployment's key): `make run` only, never in "
        "production, where players bring tokens of the deployment's own login.",
    )
    webtable_root: str | None = Field(
        None,
        description="The folder of the built page (default: clients/web/dist/page of the "
        "checkout, which `make install` builds).",
    )
