"""The table's decision: what one command appends, as a pure function.

Given the table, the command, a source of fresh seeds and who acts, it returns the events
to append and the table after them — or raises the game's `RuleError`. Everything the
table itself adds around a player's command is here, so every caller (the service, the
tests, a replay) gets the same story:

1. a person acting for his own seat while a computer covers it (or it is marked absent)
   takes it back first (RULES.md, "Timeouts and absence");
2. the game's decider decides the command;
3. while the game waits for chance (a deal, a draw), the table supplies a fresh seed;
   under seed scheme 2 a deal's seed is derived from the committed server seed and the
   seats' client seeds instead, and the service commits to the next deal's server seed
   and reveals an ended deal's (kozyr.table.domain.seeding, docs/fair-deal.md §9);
   a table's first deal may wait for the players' client seeds (its seed window).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from kozyr.games.plugin import Dealt
from kozyr.table.domain import model, seeding
from kozyr.table.domain.model import SeatControl, SeatControlChanged, Table

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
    events: list[Any] = list(retake(table, acting_person))
    ready = table
    for event in events:
        ready = model.apply(ready, event, ready.turn_deadline)
    after = ready
    for event in ready.game.decide(ready.state, command):
        after = _fold(after, events, [event])
        after = _fold(after, events, _reveal_due(after))
    return draw_chance(after, events, seeds)


def retake(table: Table, seat: int | None) -> list[SeatControlChanged]:
    """A person who acts is back: he retakes a covered or absent seat at once."""
    if seat is None or table.control[seat] is SeatControl.PERSON:
        return []
    return [SeatControlChanged(seat, SeatControl.PERSON)]


def draw_chance(
    table: Table, events: Sequence[Any], seeds: Seeds, *, window_closed: bool = False
) -> Decision:
    """Let the table act while the game waits for chance: one fresh seed per draw (a
    deal's seed derived under scheme 2), with scheme 2's commitments and reveals.

    The first deal of a table with a seed window is held while players' seats have yet
    to set their client seeds (`Table.awaiting_seeds`), unless `window_closed` (the
    clock's ExpireTurn at the window's deadline): it is then dealt with "" for them.
    """
    drawn = list(events)
    table = _fold(table, drawn, _commitment_due(table, seeds))
    while not table.is_over and table.game.turn(table.state).is_chance:
        chance = _chance(table, seeds)
        held = not window_closed and table.awaiting_seeds
        if held and any(isinstance(e, seeding.DealSeeded) for e in chance):
            break
        table = _fold(table, drawn, chance)
        table = _fold(table, drawn, _commitment_due(table, seeds))
    return Decision(tuple(drawn), table)


def _fold(table: Table, drawn: list[Any], events: Sequence[Any]) -> Table:
    for event in events:
        drawn.append(event)
        table = model.apply(table, event)
    return table


def _chance(table: Table, seeds: Seeds) -> list[Any]:
    """The events of one chance draw. Under scheme 2 a draw that deals is dealt from
    the derived seed of the committed server seed, and `DealSeeded` records how; a
    one-off draw (a first dealer, an opening team) takes a fresh seed as under scheme 1."""
    game, plugin = table.game, table.plugin
    upcoming = seeding.pending(table.seedings, len(table.deals) + 1)
    if table.seed_scheme == seeding.CLIENT_SEEDS and upcoming is not None:
        seed, record = seeding.seeded(upcoming, table.table_id)
        dealt = list(game.decide(table.state, game.chance_command(table.state, seed)))
        if any(isinstance(plugin.fair_deal(e), Dealt) for e in dealt):
            return [*dealt, record]
    return list(game.decide(table.state, game.chance_command(table.state, seeds())))


def _commitment_due(table: Table, seeds: Seeds) -> list[seeding.ServerSeedCommitted]:
    """Scheme 2: the next deal's server seed is committed as soon as the current deal is
    dealt (at the table's opening, before its first), so the seats have the whole deal
    to set their client seeds for the next one, after the commitment."""
    if table.seed_scheme != seeding.CLIENT_SEEDS or table.is_over or table.next_seeding:
        return []
    return [seeding.committed(len(table.deals) + 1, seeds())]


def _reveal_due(table: Table) -> list[seeding.ServerSeedRevealed]:
    """Scheme 2: right after the game reveals a deal's seed, the table reveals the
    deal's server seed (the next deal's, committed already, stays secret: it is never
    revealed if the game ends before that deal)."""
    return [
        seeding.ServerSeedRevealed(s.deal, s.server_seed)
        for s in table.seedings
        if s.deal <= len(table.deals) and table.deals[s.deal - 1].seed is not None
    ]
