"""Reading the bots process's record of its inputs (`KOZYR_BOTS_INPUT_LOG`,
`kozyr.bots.inputs`): one JSON line per public event it was handed and per answer or
refusal of the table service to it, the messages base64-encoded as received."""

from __future__ import annotations

import base64
import json
from pathlib import Path
from typing import Any

from google.protobuf import descriptor_pool, message_factory


def decoded(type_name: str, data: str) -> Any:
    """The message of full type name `type_name` in the base64 `data` of an entry."""
    descriptor = descriptor_pool.Default().FindMessageTypeByName(type_name)
    return message_factory.GetMessageClass(descriptor).FromString(base64.b64decode(data))


def inputs(path: Path) -> list[dict[str, Any]]:
    """Every entry of the record, in the order received."""
    return [json.loads(line) for line in path.read_text().splitlines()]


def requested_seats(path: Path, table_id: str) -> dict[str, set[int | None]]:
    """Per kind ("answer", "refusal"), the seats the bots' calls about `table_id` named
    (None: a call for no seat)."""
    seats: dict[str, set[int | None]] = {"answer": set(), "refusal": set()}
    for entry in inputs(path):
        if entry["kind"] in seats:
            request = decoded(entry["request_type"], entry["request"])
            if request.table_id == table_id:
                seats[entry["kind"]].add(request.seat if request.HasField("seat") else None)
    return seats
