"""What the auditor must know of each game beyond the `Decider` protocol: the game
plugin's `AuditProfile` (`kozyr.games.plugin`) — the deal and result events, the field
numbering deals, which player command opens each move (so that `verify` can re-decide a
recorded move and compare the outcome) and the texts of a replay.
"""

from __future__ import annotations

import hashlib
from typing import Any

from kozyr.games.plugin import AuditProfile, UnknownGame, plugin_by_id

Data = dict[str, Any]

GameProfile = AuditProfile[Any]
"""A game's audit profile, whatever its command type."""


class AuditError(ValueError):
    """The events cannot be replayed at all (not a table, undecodable, does not fold)."""


class NoSuchViewer(AuditError):
    """A replay asked for a viewer the table does not have."""


class NoSuchSeat(NoSuchViewer):
    """A replay asked for a seat the table does not have."""


class NoOpenHand(NoSuchViewer):
    """An open-hand spectator's replay of a table without open-hand spectating."""


def profile_of(game_id: str) -> GameProfile:
    """The audit profile of a registered game; AuditError for any other game id."""
    try:
        return plugin_by_id(game_id).audit
    except UnknownGame:
        raise AuditError(f"no audit support for game {game_id!r}") from None


def is_audited(game_id: str) -> bool:
    try:
        profile_of(game_id)
    except AuditError:
        return False
    return True


def commitment_of(seed: bytes) -> str:
    """docs/fair-deal.md §5: the commitment is the plain SHA-256 of the seed, in hex."""
    return hashlib.sha256(seed).hexdigest()
