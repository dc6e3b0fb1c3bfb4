"""Khözör's standing (`kozyr.games.standing`): rounds won, per seat by its team."""

from __future__ import annotations

from kozyr.games.khozor_teams.model import SEATS, State, team_of
from kozyr.games.standing import Standing


def standing(state: State) -> Standing:
    """A round is a deal; a seat's score is its team's rounds won. The team ahead (both,
    when level) has place 1, the other place 2: the seats of a team share them."""
    scores = tuple(state.wins(team_of(seat)) for seat in range(SEATS))
    best = max(scores)
    return Standing(
        deals_ended=len(state.results),
        scores=scores,
        places=tuple(1 if score == best else 2 for score in scores),
    )
