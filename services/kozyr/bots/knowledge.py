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
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from kozyr.api.table.v1 import views_pb2

HistoryEntry = tuple[str, Mapping[str, Any]]
"""One event of a seat's history: its type name and its data as redacted for the seat."""

DEAL_STARTS = frozenset({"CardsDealt", "RoundDealt"})
"""The events that begin a 3-5-8 deal or a Khözör round: what came before is over."""


@dataclass(frozen=True, slots=True)
class Knowledge:
    """A seat's view and its redacted history since the current deal (or round) began."""

    view: views_pb2.TableView
    events: tuple[HistoryEntry, ...]

    @property
    def seat(self) -> int:
        return self.view.seat


def knowledge(view: views_pb2.TableView, history: Iterable[HistoryEntry]) -> Knowledge:
    """The seat's knowledge: `history` cut to the events of the current deal."""
    events = list(history)
    start = max((i for i, (kind, _) in enumerate(events) if kind in DEAL_STARTS), default=0)
    return Knowledge(view, tuple(events[start:]))


def deal_began(history: Iterable[HistoryEntry]) -> bool:
    """Whether `history` reaches back to the start of a deal (or round)."""
    return any(kind in DEAL_STARTS for kind, _ in history)


def decision_seed(table_id: str, turn: int, seat: int) -> int:
    """The search's random seed for one decision: the same on every replica and retry."""
    digest = hashlib.sha256(f"{table_id}:{turn}:{seat}".encode()).digest()
    return int.from_bytes(digest[:8], "big")
