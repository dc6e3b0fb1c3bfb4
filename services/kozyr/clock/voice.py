"""The voice channel of a table: a LiveKit room per table, a token per seated player.

The backend never carries audio: it names the room and signs a LiveKit access token
(PyPI `livekit-api`) whose identity is the player id and whose only grant is joining
that one room (publish and subscribe audio). Spectators get none.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta

from livekit import api

from kozyr.clock.settings import ClockSettings

TOKEN_TTL = timedelta(hours=6)
"""How long a token lets its holder join (a long Khözör match, with reconnects)."""


@dataclass(frozen=True, slots=True)
class VoicePass:
    url: str
    room: str
    token: str
    expires_at: datetime


@dataclass(frozen=True, slots=True)
class VoiceRooms:
    """Mints room tokens with the deployment's LiveKit key."""

    url: str
    api_key: str
    api_secret: str
    root: str

    @classmethod
    def from_settings(cls, settings: ClockSettings) -> VoiceRooms | None:
        """None unless KOZYR_LIVEKIT_URL, _API_KEY and _API_SECRET are all set."""
        if not (settings.livekit_url and settings.livekit_api_key and settings.livekit_api_secret):
            return None
        secret = settings.livekit_api_secret.get_secret_value()
        return cls(settings.livekit_url, settings.livekit_api_key, secret, settings.subject_root)

    def room_of(self, table_id: str) -> str:
        """ "<root>-table-<table_id>": deployments sharing a LiveKit project never meet."""
        return f"{self.root}-table-{table_id}"

    def admit(self, player_id: str, table_id: str, now: datetime) -> VoicePass:
        room = self.room_of(table_id)
        grants = api.VideoGrants(
            room_join=True,
            room=room,
            can_publish=True,
            can_subscribe=True,
            can_publish_data=False,
            can_publish_sources=["microphone"],
        )
        token = (
            api.AccessToken(self.api_key, self.api_secret)
            .with_identity(player_id)
            .with_ttl(TOKEN_TTL)
            .with_grants(grants)
            .to_jwt()
        )
        return VoicePass(self.url, room, token, now + TOKEN_TTL)
