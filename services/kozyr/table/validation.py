"""Shape checks of incoming requests: INVALID_ARGUMENT before anything is read or written."""

from __future__ import annotations

import re
import uuid

from kozyr.runtime.errors import InvalidArgument

MAX_REQUEST_ID = 128
MAX_PLAYER_ID = 128
MAX_PAGE = 1000
DEFAULT_PAGE = 200
_REQUEST_ID = re.compile(r"[\x21-\x7e]{1,128}")


def table_id(value: str) -> str:
    """Table ids are UUIDs (canonical lowercase text)."""
    try:
        return str(uuid.UUID(value))
    except ValueError:
        raise InvalidArgument("INVALID_TABLE_ID", "table_id must be a UUID") from None


def request_id(value: str) -> str:
    if not _REQUEST_ID.fullmatch(value):
        raise InvalidArgument(
            "INVALID_REQUEST_ID",
            f"request_id must be 1 to {MAX_REQUEST_ID} printable ASCII characters",
        )
    return value


def player_id(value: str) -> str:
    if not value or len(value) > MAX_PLAYER_ID or not value.isprintable():
        raise InvalidArgument(
            "INVALID_PLAYER_ID", f"a player id is 1 to {MAX_PLAYER_ID} printable characters"
        )
    return value


def version(value: int, field: str) -> int:
    if value < 0:
        raise InvalidArgument("INVALID_VERSION", f"{field} cannot be negative")
    return value


def page_size(value: int) -> int:
    if value < 0:
        raise InvalidArgument("INVALID_PAGE_SIZE", "page_size cannot be negative")
    return min(value or DEFAULT_PAGE, MAX_PAGE)
