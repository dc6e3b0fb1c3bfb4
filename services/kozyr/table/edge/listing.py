"""ListTables at the edge: the request checked and turned into a directory query, the
page token, and the reply (the directory itself is `kozyr.table.adapters.directory`).

Pages are keyset pages (newest first, by creation time then table id): the token names
the last table listed and the filters it was made for, so a page is never skipped or
repeated however many tables open meanwhile, and a token reused with other filters is
refused instead of silently listing something else.
"""

from __future__ import annotations

import base64
import hashlib
import json
from datetime import UTC, datetime

from google.protobuf.timestamp_pb2 import Timestamp

from kozyr.api.table.v1 import table_service_pb2 as pb
from kozyr.runtime.errors import FailedPrecondition, InvalidArgument
from kozyr.table.adapters.directory import Cursor, ListedTable, TableQuery
from kozyr.table.domain.games import UnknownGame, game_by_id
from kozyr.table.edge import validation
from kozyr.texts import Texts

DEFAULT_PAGE = 50
MAX_PAGE = 500
FINISHED = {
    pb.TABLE_STATE_UNSPECIFIED: None,
    pb.TABLE_STATE_OPEN: False,
    pb.TABLE_STATE_FINISHED: True,
}
_EARLIEST = datetime(2000, 1, 1, tzinfo=UTC)
"""No table is older: an earlier `created_since` is a mistake (seconds for milliseconds)."""


def query_of(request: pb.ListTablesRequest) -> TableQuery:
    """The directory query a request asks for; INVALID_ARGUMENT for a bad filter."""
    player = validation.player_id(request.player_id) if request.player_id else None
    if request.state not in FINISHED:
        raise _invalid(
            "INVALID_TABLE_STATE",
            "state must be OPEN, FINISHED or unset (both).",
            "state trebuie să fie OPEN, FINISHED sau nesetat (ambele).",
            "state deve essere OPEN, FINISHED o non impostato (entrambi).",
        )
    since = _since(request) if request.HasField("created_since") else None
    return TableQuery(player, since, FINISHED[request.state])


def page_size(value: int) -> int:
    """1 to MAX_PAGE tables a page (0: the default)."""
    if not 0 <= value <= MAX_PAGE:
        raise _invalid(
            "INVALID_PAGE_SIZE",
            f"page_size must be between 1 and {MAX_PAGE} (0: {DEFAULT_PAGE}).",
            f"page_size trebuie să fie între 1 și {MAX_PAGE} (0: {DEFAULT_PAGE}).",
            f"page_size deve essere tra 1 e {MAX_PAGE} (0: {DEFAULT_PAGE}).",
        )
    return value or DEFAULT_PAGE


def cursor_of(token: str, query: TableQuery) -> Cursor | None:
    """Where the page starts: None for the first page; INVALID_ARGUMENT for a token that
    this service did not make for these filters."""
    if not token:
        return None
    try:
        fields = json.loads(base64.urlsafe_b64decode(token.encode("ascii")))
        if fields["q"] != _digest(query):
            raise ValueError("other filters")
        return Cursor(datetime.fromisoformat(fields["at"]), validation.table_id(fields["id"]))
    except (ValueError, KeyError, TypeError, UnicodeError, InvalidArgument):
        raise _invalid(
            "INVALID_PAGE_TOKEN",
            "page_token must be a next_page_token of ListTables, with the same filters.",
            "page_token trebuie să fie un next_page_token al ListTables, cu aceleași filtre.",
            "page_token deve essere un next_page_token di ListTables, con gli stessi filtri.",
        ) from None


def response(tables: list[ListedTable], size: int, query: TableQuery) -> pb.ListTablesResponse:
    """The reply to a page fetched with one table more than `size` (to know if more exist)."""
    shown = tables[:size]
    token = _token(shown[-1], query) if len(tables) > size else ""
    return pb.ListTablesResponse(tables=[_listed(t) for t in shown], next_page_token=token)


def no_directory() -> FailedPrecondition:
    """A service assembled without a directory (a test's bare TableApp) cannot list."""
    return FailedPrecondition(
        "NO_TABLE_DIRECTORY",
        Texts(
            en="This table service keeps no table directory: it cannot list tables.",
            ro="Acest serviciu de mese nu ține un registru al meselor: nu le poate lista.",
            it="Questo servizio tavoli non tiene un registro dei tavoli: non può elencarli.",
        ),
    )


def _since(request: pb.ListTablesRequest) -> datetime:
    stamp = request.created_since
    try:
        if not 0 <= stamp.nanos < 1_000_000_000:
            raise ValueError("nanos")
        since = stamp.ToDatetime(tzinfo=UTC)
    except (ValueError, OverflowError, OSError):
        since = None
    if since is None or since < _EARLIEST:
        raise _invalid(
            "INVALID_CREATED_SINCE",
            "created_since must be a valid moment from the year 2000 on.",
            "created_since trebuie să fie un moment valid, din anul 2000 încoace.",
            "created_since deve essere un istante valido, dal 2000 in poi.",
        )
    return since


def _digest(query: TableQuery) -> str:
    since = query.created_since.isoformat() if query.created_since else None
    text = json.dumps([query.player_id, since, query.finished])
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def _token(last: ListedTable, query: TableQuery) -> str:
    fields = {"at": last.created_at.isoformat(), "id": last.table_id, "q": _digest(query)}
    return base64.urlsafe_b64encode(json.dumps(fields).encode()).decode("ascii")


def _listed(table: ListedTable) -> pb.ListedTable:
    try:
        game = game_by_id(table.game_id).code
    except UnknownGame:  # a game this build no longer runs
        game = 0
    listed = pb.ListedTable(
        table_id=table.table_id,
        game=game,  # type: ignore[arg-type]
        created_at=_stamp(table.created_at),
        state=pb.TABLE_STATE_FINISHED if table.finished else pb.TABLE_STATE_OPEN,
        seat_player_ids=table.seats,
    )
    if table.finished_at is not None:
        listed.finished_at.CopyFrom(_stamp(table.finished_at))
    return listed


def _stamp(moment: datetime) -> Timestamp:
    stamp = Timestamp()
    stamp.FromDatetime(moment)
    return stamp


def _invalid(reason: str, en: str, ro: str, it: str) -> InvalidArgument:
    return InvalidArgument(reason, Texts(en=en, ro=ro, it=it))
