"""The outcome of a match: rounds won per team, the winner, who won each round."""

from __future__ import annotations

from typing import Any

from kozyr.games.khozor_teams.model import Phase, State, Team


def is_over(state: State) -> bool:
    return state.phase is Phase.OVER


def result(state: State) -> dict[str, Any]:
    """JSON-able summary; `winner` is None until a team has won 5 rounds."""
    return {
        "wins": {team.value: state.wins(team) for team in Team},
        "winner": state.winner.value if state.winner else None,
        "rounds": [
            {"round": r.round_no, "team": r.team.value, "seat": r.seat} for r in state.results
        ],
    }
