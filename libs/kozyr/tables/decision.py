"""The table's decision: what one command appends, as a pure function.

Given the table, the command, a source of fresh seeds and who acts, it returns the events
to append and the table after them — or raises the game's `RuleError`. Everything the
table itself adds around a player's command is here, so every caller (the service, the
tests, a replay) gets the same story:

1. a person acting for his own seat while a computer covers it (or it is marked absent)
   takes it back first (RULES.md, "Timeouts and absence");
2. the game's decider decides the command;
3. while the game waits for chance (a deal, a draw), the table supplies a fresh seed.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from kozyr.tables import model
from kozyr.tables.model import SeatControl, SeatControlChanged, Table

Seeds = Callable[[], bytes]
"""Fresh 32-byte seeds (the service draws them with `secrets`; tests fix them)."""


@dataclass(frozen=True, slots=True)
class Decision:
    """The events one command appends, and the table after them."""

    events: tuple[Any, ...]
    after: Table


def decide(
    table: Table, command: Any, *, seeds: Seeds, acting_person: int | None = None
) -> Decision:
    """The events of `command` at `table` (raises the game's RuleError when illegal).

    `acting_person` is the seat of a person acting for himself: if his seat is not his
    to play right now, he takes it back in the same append, before his move.
    """
    events = retake(table, acting_person)
    ready = table
    for event in events:
        ready = model.apply(ready, event, ready.turn_deadline)
    decided = ready.game.decide(ready.state, command)
    after = ready
    for event in decided:
        after = model.apply(after, event)
    return draw_chance(after, [*events, *decided], seeds)


def retake(table: Table, seat: int | None) -> list[SeatControlChanged]:
    """A person who acts is back: he retakes a covered or absent seat at once."""
    if seat is None or table.control[seat] is SeatControl.PERSON:
        return []
    return [SeatControlChanged(seat, SeatControl.PERSON)]


def draw_chance(table: Table, events: Sequence[Any], seeds: Seeds) -> Decision:
    """Let the table act while the game waits for chance: one fresh seed per draw."""
    drawn = list(events)
    while not table.is_over and table.game.turn(table.state).is_chance:
        command = table.game.chance_command(table.state, seeds())
        for event in table.game.decide(table.state, command):
            drawn.append(event)
            table = model.apply(table, event)
    return Decision(tuple(drawn), table)
