"""What one seat knows: its view and its own redacted history of the current deal.

The `hard` level samples the cards it cannot see, so it needs more than the view: the
cards played earlier in the deal (and so the suits a seat has shown it lacks), the
exchanges it took part in, the talon it took. All of that, and nothing more, is in the
seat's own history — the table service's `GetHistory(seat)`, each event's data redacted
for that seat by the game's `redact` (`kozyr.table.domain.history.history_data`). The bots
service builds a `Knowledge` from `GetHistory`; the tournament harness builds it from
the same redaction in-process. Nothing here can reach another seat's cards: a
`Knowledge` holds only a seat's view and its redacted events.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable
from dataclasses import dataclass

from kozyr.api.table.v1 import views_pb2
from kozyr.client.games import UnknownGame, plugin_of
from kozyr.games.info import HistoryEntry

__all__ = ["HistoryEntry", "Knowledge", "deal_began", "decision_seed", "knowledge"]


@dataclass(frozen=True, slots=True)
class Knowledge:
    """A seat's view and its redacted history since the current deal (or round) began."""

    view: views_pb2.TableView
    events: tuple[HistoryEntry, ...]

    @property
    def seat(self) -> int:
        return self.view.seat


def knowledge(view: views_pb2.TableView, history: Iterable[HistoryEntry]) -> Knowledge:
    """The seat's knowledge: `history` cut to the events of the current deal (or round:
    from the last of the game's `GameInfo.history_starts`)."""
    starts = history_starts(view)
    events = list(history)
    start = max((i for i, (kind, _) in enumerate(events) if kind in starts), default=0)
    return Knowledge(view, tuple(events[start:]))


def deal_began(view: views_pb2.TableView, history: Iterable[HistoryEntry]) -> bool:
    """Whether `history` reaches back to the start of the view's deal (or round)."""
    starts = history_starts(view)
    return any(kind in starts for kind, _ in history)


def history_starts(view: views_pb2.TableView) -> frozenset[str]:
    """The events that begin the view's game's deal or round (`GameInfo.history_starts`):
    what came before is over. None for a game this process lacks (the whole history)."""
    try:
        return plugin_of(view).info.history_starts
    except UnknownGame:
        return frozenset()


def decision_seed(table_id: str, turn: int, seat: int) -> int:
    """The search's random seed for one decision: the same on every replica and retry."""
    digest = hashlib.sha256(f"{table_id}:{turn}:{seat}".encode()).digest()
    return int.from_bytes(digest[:8], "big")
