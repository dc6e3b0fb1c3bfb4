"""Matchmaking's own knobs, `KOZYR_MATCHMAKING_*` (the shared ones — database, NATS,
keys, the table service's address — are `kozyr.runtime.Settings`).

Kept beside the service rather than in the shared settings object: only this process
reads them, and `load_settings` ignores variables it does not know.
"""

from __future__ import annotations

from pathlib import Path

from pydantic import Field, ValidationError
from pydantic_settings import BaseSettings, SettingsConfigDict

from kozyr.matchmaking.matching import MatchRules
from kozyr.runtime.settings import SettingsError, SettingsProblem

PREFIX = "KOZYR_MATCHMAKING_"


class MatchmakingSettings(BaseSettings):
    model_config = SettingsConfigDict(env_prefix=PREFIX, env_ignore_empty=True, frozen=True)

    fill_after_seconds: float = Field(
        60.0, ge=0, description="A ticket waiting this long is matched with computers."
    )
    search_base_gap: float = Field(
        3.0, ge=0, description="The rating spread (mu) a new ticket accepts."
    )
    search_widen_per_second: float = Field(
        0.25, ge=0, description="How fast the accepted spread widens while a ticket waits."
    )
    search_max_gap: float = Field(25.0, ge=0, description="The widest accepted spread.")
    ticket_ttl_seconds: float = Field(
        900.0, gt=0, description="A ticket still unmatched this long expires."
    )
    tick_seconds: float = Field(
        0.5, gt=0, description="How often a replica looks for matches and follows the lobby."
    )
    complete_after_seconds: float = Field(
        5.0,
        ge=0,
        description="A decided match whose table is still not open this long after is "
        "completed by any replica (its decider died).",
    )
    private_table_wait_seconds: float = Field(
        10.0,
        gt=0,
        description="How long CreatePrivateTable waits for its table before answering "
        "UNAVAILABLE TABLE_OPENING (the table is still opened: a retry returns it).",
    )
    clock_offset_file: Path | None = Field(
        None, description="Tests only: a file with the seconds the clock runs ahead."
    )
    create_delay_seconds: float = Field(
        0.0,
        ge=0,
        description="Tests only: wait this long between deciding a match and opening its "
        "table (to kill the process in between).",
    )

    @property
    def rules(self) -> MatchRules:
        return MatchRules(
            fill_after=self.fill_after_seconds,
            base_gap=self.search_base_gap,
            widen_per_second=self.search_widen_per_second,
            max_gap=self.search_max_gap,
            ticket_ttl=self.ticket_ttl_seconds,
        )


def load_matchmaking_settings() -> MatchmakingSettings:
    """The settings, or a SettingsError naming each bad variable."""
    try:
        return MatchmakingSettings()
    except ValidationError as error:
        problems = [
            SettingsProblem(f"{PREFIX}{str(e['loc'][0]).upper()}", str(e["msg"]))
            for e in error.errors()
        ]
        raise SettingsError(problems) from None
