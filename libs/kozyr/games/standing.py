"""Where a game stands, in terms every game shares: deals ended, scores, places.

Each decider offers `standing(state)`, so that the table library can tell other
services when a deal ended and how a table finished (the public table events) without
reading one game-specific event or result key. Pure data, no I/O.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Standing:
    """A game's score board, public to every seat.

    `deals_ended` counts finished deals (3-5-8 deals, Khözör rounds): it grows by one
    when a deal ends. `scores` and `places` are per seat; a higher score is better,
    place 1 is best and equal scores share a place. Before the end they are provisional.
    """

    deals_ended: int
    scores: tuple[int, ...]
    places: tuple[int, ...]
