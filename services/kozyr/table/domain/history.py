"""The redaction of a table's history: what each seat may read of the log.

RULES.md "what every seat may know": table-level events (creation, seat control, seed
scheme 2's commitments and client seeds) are public but for a committed server seed, which
only a moderator reads before its reveal (`seeding.SECRET_FIELDS`); a game event is
shown to a seat only as the game's `redact` lets it (a seat
sees its own cards, nobody sees another's). The unredacted log is for admins only.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from kozyr.table.domain.model import TABLE_EVENTS, Table, decode
from kozyr.table.domain.seeding import SECRET_FIELDS

if TYPE_CHECKING:  # the domain does no I/O: the store's record is only a type here
    from kozyr.eventstore import RecordedEvent


def history_data(table: Table, event: RecordedEvent, seat: int | None, full: bool) -> Any:
    """An event's data as the caller may see it, or None when it must not see it.

    `seat` None is the spectator's redaction; `full` (an admin asking for no seat)
    shows the data as stored.
    """
    if full:
        return event.data
    if event.type in TABLE_EVENTS:
        secret = SECRET_FIELDS.get(event.type)
        return {k: v for k, v in event.data.items() if k != secret}
    return table.game.redact(decode(table, event.type, event.data), seat)
