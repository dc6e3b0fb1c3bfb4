"""The games a table can run: every registered game plugin (`kozyr.games.catalogue`)."""

from __future__ import annotations

from kozyr.games.catalogue import BUILT_IN, UnknownGame, game_by_id, registered

__all__ = ["BUILT_IN", "UnknownGame", "game_by_id", "registered"]
