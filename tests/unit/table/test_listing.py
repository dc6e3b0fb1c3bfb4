"""ListTables' page token is bound to every filter of the query it was made for
(kozyr.table.edge.listing): player, creation date and state. Taken from a request with
any one filter different — a `finished` page's token for an `open` query, or for
"both" — it is refused with INVALID_ARGUMENT `INVALID_PAGE_TOKEN`, in every
language, instead of silently listing from the wrong place; with the same filters it
names the last table listed.

Pure edge code: requests are checked and tokens made and read exactly as the servicer
does (tests/integration/table/test_list_tables.py drives the same over gRPC).
"""

from __future__ import annotations

import itertools
import uuid
from datetime import UTC, datetime

import grpc
import pytest

from kozyr.api.table.v1 import table_service_pb2 as pb
from kozyr.runtime.errors import InvalidArgument
from kozyr.table.adapters.directory import Cursor, ListedTable
from kozyr.table.edge import listing

PLAYERS = ("", "ana", "bogdan")
"""No player filter, and two players."""
SINCE = (None, datetime(2030, 1, 1, tzinfo=UTC), datetime(2030, 1, 2, tzinfo=UTC))
STATES = (pb.TABLE_STATE_UNSPECIFIED, pb.TABLE_STATE_OPEN, pb.TABLE_STATE_FINISHED)
LAST = ListedTable(
    table_id=str(uuid.uuid4()),
    game_id="khozor_teams",
    seats=("ana",) * 8,
    created_at=datetime(2030, 3, 1, 12, 30, tzinfo=UTC),
    finished_at=None,
)
"""The last table of a page: the next page starts after it."""


def _request(
    player: str, since: datetime | None, state: pb.TableState.ValueType
) -> pb.ListTablesRequest:
    request = pb.ListTablesRequest(player_id=player, state=state, page_size=1)
    if since is not None:
        request.created_since.FromDatetime(since)
    return request


FILTERS = list(itertools.product(PLAYERS, SINCE, STATES))
REQUESTS = [_request(*filters) for filters in FILTERS]


def _name(filters: tuple[str, datetime | None, pb.TableState.ValueType]) -> str:
    player, since, state = filters
    day = since.date().isoformat() if since else "any"
    return f"player={player or 'any'},since={day},state={pb.TableState.Name(state)}"


def _token(request: pb.ListTablesRequest) -> str:
    """The next_page_token of a one-table page of `request` that has more tables."""
    query = listing.query_of(request)
    token = listing.response([LAST, LAST], 1, query).next_page_token
    assert token
    return token


@pytest.mark.parametrize("made_for", REQUESTS, ids=[_name(f) for f in FILTERS])
def test_a_page_token_is_refused_for_a_query_with_any_other_filter(
    made_for: pb.ListTablesRequest,
) -> None:
    """E.g. a token of `finished` tables for `open` ones, or for both; of ana's for
    bogdan's, or everyone's; of tables since one day for those since another."""
    token = _token(made_for)
    assert listing.cursor_of(token, listing.query_of(made_for)) == Cursor(
        LAST.created_at, LAST.table_id
    )
    for other in REQUESTS:
        if other == made_for:
            continue
        with pytest.raises(InvalidArgument) as refused:
            listing.cursor_of(token, listing.query_of(other))
        assert refused.value.code is grpc.StatusCode.INVALID_ARGUMENT
        assert refused.value.reason == "INVALID_PAGE_TOKEN", other
        assert set(refused.value.messages) == {"en", "ro", "it"}
