"""The bots service's own settings (`KOZYR_BOTS_*`) on the shared `kozyr.runtime.Settings`."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from kozyr.runtime.settings import Settings


class BotsSettings(Settings):
    """What `python -m kozyr.bots` reads: the shared settings and its own."""

    bots_think_seconds: float = Field(
        1.5,
        ge=0,
        description="The bots service: how long a computer seat waits before its move "
        "(human-like pacing); 0 in tests and benchmarks.",
    )
    bots_level: Literal["easy", "normal", "hard"] = Field(
        "normal",
        description="The bots service: the level of a computer seat whose view names none "
        "(tables name one for every computer seat: CreateTable's levels, docs/bots.md).",
    )
    bots_hard_budget_ms: float = Field(
        200.0,
        gt=0,
        description="The bots service: how long the hard level searches one decision, in "
        "milliseconds of one core (docs/bots.md).",
    )
    bots_hints_per_second: float = Field(
        1.0,
        gt=0,
        description="The bots service: SuggestAction calls a player may make per second, "
        "on average (a token bucket per player and replica).",
    )
    bots_hints_burst: int = Field(
        5, ge=1, description="The bots service: SuggestAction calls a player may make at once."
    )
    bots_input_log: str | None = Field(
        None,
        description="Tests only: the bots service appends every input it receives (public "
        "events, the table service's answers) to this file as JSON lines, so a test can "
        "check that no hidden card reached it. Unset in production.",
    )
