"""The refusals about a table's id that every service answering for tables gives (the
table service, and the clock for voice): one check, one wording in every language."""

from __future__ import annotations

import re

from kozyr.runtime.errors import InvalidArgument, NotFound
from kozyr.texts import Texts

_TABLE_ID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")


def table_id(value: str) -> str:
    """Table ids are UUIDs in their one canonical text: lowercase, hyphenated, bare.

    `uuid.UUID` also reads "{…}", "urn:uuid:…", uppercase and hyphenless text; a table
    with several names would be cached, logged and watched under each, so those
    spellings are refused rather than translated.
    """
    if not _TABLE_ID.fullmatch(value):
        raise invalid_table_id()
    return value


def invalid_table_id() -> InvalidArgument:
    return InvalidArgument(
        "INVALID_TABLE_ID",
        Texts(
            en="table_id must be a UUID in lowercase hyphenated form "
            "(xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx).",
            ro="table_id trebuie să fie un UUID cu litere mici și cratime "
            "(xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx).",
            it="table_id deve essere un UUID in minuscolo con trattini "
            "(xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx).",
        ),
    )


def table_not_found(table_id: str) -> NotFound:
    return NotFound(
        "TABLE_NOT_FOUND",
        Texts(
            en=f"There is no table {table_id}.",
            ro=f"Nu există masa {table_id}.",
            it=f"Non esiste il tavolo {table_id}.",
        ),
    )
