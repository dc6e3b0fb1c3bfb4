"""The clock service's own settings (`KOZYR_CLOCK_*`, `KOZYR_LIVEKIT_*`) on the shared
`kozyr.runtime.Settings`.
"""

from __future__ import annotations

from pydantic import Field, SecretStr

from kozyr.runtime.settings import Settings


class ClockSettings(Settings):
    """What `python -m kozyr.clock` reads: the shared settings and its own."""

    clock_offline_after_seconds: float = Field(
        30.0,
        gt=0,
        description="The clock service: a player without a heartbeat for this long is offline.",
    )
    clock_cover_after_seconds: float = Field(
        180.0,
        ge=0,
        description="The clock service: a player offline this long has his seats covered by "
        "a computer.",
    )
    clock_time_offset_seconds: float = Field(
        0.0,
        ge=0,
        description="Tests only: the clock service runs this far ahead of the wall clock, so "
        "every deadline fires this much early (time skipping). 0 in production.",
    )
    livekit_url: str | None = Field(None, description="The LiveKit server clients join (wss://).")
    livekit_api_key: str | None = Field(None, description="LiveKit API key (token issuer).")
    livekit_api_secret: SecretStr | None = Field(None, description="LiveKit API secret.")
