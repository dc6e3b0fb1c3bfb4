"""Database rows → `RecordedEvent`: the hot loop of every replay, shared by store and relay.

Rows carry the columns of `statements.EVENT_COLUMNS`, in that order, first (a query may
add more columns after them, as the relay does with the subject).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from typing import Any

from kozyr.eventstore.model import RecordedEvent

_decode_json: Callable[[str, int], tuple[Any, int]] = json.JSONDecoder().scan_once  # type: ignore[attr-defined]
"""The C scanner behind json.loads minus its Python wrapper (jsonb text has no padding)."""


def events_from_rows(rows: Sequence[Sequence[Any]]) -> list[RecordedEvent]:
    """Rows starting with `statements.EVENT_COLUMNS` → events, in row order.

    Consecutive events of one append share their metadata text: it is parsed once and
    copied (a copy is ~5x cheaper than a parse), so no two events share a dict.
    """
    events: list[RecordedEvent] = []
    metadata_text = ""
    metadata: dict[str, Any] = {}
    for row in rows:
        if row[7] != metadata_text:
            metadata_text = row[7]
            metadata = _decode_json(metadata_text, 0)[0]
        events.append(
            RecordedEvent(
                event_id=row[1],
                stream=row[2],
                position=row[3],
                global_position=row[0],
                type=row[4],
                schema_version=row[5],
                data=_decode_json(row[6], 0)[0],
                metadata=metadata.copy(),
                recorded_at=row[8],
                hash=row[9].hex(),
            )
        )
    return events
