"""3-5-8's standing (`kozyr.games.standing`): deals scored, running totals, places."""

from __future__ import annotations

from kozyr.games.standing import Standing
from kozyr.games.three_five_eight.model import State
from kozyr.games.three_five_eight.scoring import places


def standing(state: State) -> Standing:
    """Scores are the running totals; places are final once the game is over."""
    return Standing(
        deals_ended=len(state.records),
        scores=tuple(state.totals),
        places=tuple(state.places or places(state.totals)),
    )
