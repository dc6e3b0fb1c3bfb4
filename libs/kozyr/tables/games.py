"""The games a table can run: every registered game plugin (`kozyr.games.plugin`).

Importing the two game packages registers them; a game defined elsewhere (the test-only
game of tests/support) registers itself the same way and is then playable like them.
"""

from __future__ import annotations

from kozyr.games import khozor_teams, three_five_eight
from kozyr.games.plugin import AnyPlugin, UnknownGame, plugin_by_id, registered

BUILT_IN = (three_five_eight.PLUGIN, khozor_teams.PLUGIN)
"""The games of the platform itself (importing them is what registers them)."""


def game_by_id(game_id: str) -> AnyPlugin:
    """The plugin of `game_id`; UnknownGame when no game is registered under it."""
    return plugin_by_id(game_id)


__all__ = ["BUILT_IN", "UnknownGame", "game_by_id", "registered"]
