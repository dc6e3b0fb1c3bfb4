"""The games a table can run, by game id: each is a pure decider module."""

from __future__ import annotations

from types import MappingProxyType
from typing import cast

from kozyr.games import khozor_teams, three_five_eight
from kozyr.games.base import Decider

GAMES: MappingProxyType[str, Decider] = MappingProxyType(
    {
        three_five_eight.GAME_ID: cast(Decider, three_five_eight),
        khozor_teams.GAME_ID: cast(Decider, khozor_teams),
    }
)


class UnknownGame(KeyError):
    """A game id that no decider implements."""


def game_by_id(game_id: str) -> Decider:
    try:
        return GAMES[game_id]
    except KeyError:
        raise UnknownGame(game_id) from None
