"""The games the platform plays: importing this registers the built-in ones; a game
defined elsewhere (the test-only game of tests/support) registers itself the same way
and is then found here like them.

The one module outside the game packages that names the built-in games: every service
and tool looks games up here (by id, by their `kozyr.common.v1.Game` number, or by the
word a person typed) and reads what it needs of them from `GamePlugin.info`.
"""

from __future__ import annotations

from kozyr.games import khozor_teams, three_five_eight
from kozyr.games.info import GameInfo
from kozyr.games.plugin import (
    AnyPlugin,
    UnknownGame,
    plugin_by_code,
    plugin_by_id,
    plugin_by_word,
    registered,
)

BUILT_IN = (three_five_eight.PLUGIN, khozor_teams.PLUGIN)
"""The games of the platform itself (importing them is what registers them)."""


def game_by_id(game_id: str) -> AnyPlugin:
    """The plugin of `game_id`; UnknownGame when no game is registered under it."""
    return plugin_by_id(game_id)


def game_by_code(code: int) -> AnyPlugin:
    """The plugin whose `kozyr.common.v1.Game` number is `code`; UnknownGame if none."""
    return plugin_by_code(code)


def info_of(game_id: str) -> GameInfo:
    """What the services know of game `game_id` (UnknownGame if none is registered)."""
    return plugin_by_id(game_id).info


def game_words() -> str:
    """The games a person may name, by their short words in the order of their numbers:
    "358 or khozor" (what `kozyr play --game` takes)."""
    words = [p.info.short for p in sorted(registered(), key=lambda p: p.code)]
    return ", ".join(words[:-1]) + " or " + words[-1] if len(words) > 1 else "".join(words)


__all__ = [
    "BUILT_IN",
    "UnknownGame",
    "game_by_code",
    "game_by_id",
    "game_words",
    "info_of",
    "plugin_by_word",
    "registered",
]
