"""Matchmaking's settings: the shared ones (database, NATS, keys, the table service's
address: `kozyr.runtime.Settings`) and its own knobs, `KOZYR_MATCHMAKING_*`.

Kept beside the service: only this process reads them; the others ignore them.
"""

from __future__ import annotations

from pathlib import Path

from pydantic import Field

from kozyr.matchmaking.matching import MatchRules
from kozyr.runtime.settings import Settings


class MatchmakingSettings(Settings):
    """What `python -m kozyr.matchmaking` reads: the shared settings and its own."""

    matchmaking_fill_after_seconds: float = Field(
        60.0, ge=0, description="A ticket waiting this long is matched with computers."
    )
    matchmaking_search_base_gap: float = Field(
        3.0, ge=0, description="The rating spread (mu) a new ticket accepts."
    )
    matchmaking_search_widen_per_second: float = Field(
        0.25, ge=0, description="How fast the accepted spread widens while a ticket waits."
    )
    matchmaking_search_max_gap: float = Field(25.0, ge=0, description="The widest accepted spread.")
    matchmaking_ticket_ttl_seconds: float = Field(
        900.0, gt=0, description="A ticket still unmatched this long expires."
    )
    matchmaking_tick_seconds: float = Field(
        0.5, gt=0, description="How often a replica looks for matches and follows the lobby."
    )
    matchmaking_complete_after_seconds: float = Field(
        5.0,
        ge=0,
        description="A decided match whose table is still not open this long after is "
        "completed by any replica (its decider died).",
    )
    matchmaking_private_table_wait_seconds: float = Field(
        10.0,
        gt=0,
        description="How long CreatePrivateTable waits for its table before answering "
        "UNAVAILABLE TABLE_OPENING (the table is still opened: a retry returns it).",
    )
    matchmaking_seed_window_seconds: int = Field(
        15,
        ge=0,
        le=600,
        description="Seconds every table's first deal waits for its players' client seeds "
        "(TableOptions.seed_window_seconds; dealt at once when all have set one); 0: none.",
    )
    matchmaking_clock_offset_file: Path | None = Field(
        None, description="Tests only: a file with the seconds the clock runs ahead."
    )
    matchmaking_create_delay_seconds: float = Field(
        0.0,
        ge=0,
        description="Tests only: wait this long between deciding a match and opening its "
        "table (to kill the process in between).",
    )

    @property
    def rules(self) -> MatchRules:
        return MatchRules(
            fill_after=self.matchmaking_fill_after_seconds,
            base_gap=self.matchmaking_search_base_gap,
            widen_per_second=self.matchmaking_search_widen_per_second,
            max_gap=self.matchmaking_search_max_gap,
            ticket_ttl=self.matchmaking_ticket_ttl_seconds,
        )
