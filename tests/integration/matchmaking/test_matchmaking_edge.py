"""Matchmaking's gRPC edge, in-process over a real socket (real PostgreSQL, NATS and table
service): the leaderboard's ranks across pages, who may watch a ticket once it is over,
a private table whose opening outlasts the call's wait, and what joining and leaving a
party answer."""

from __future__ import annotations

import asyncio
from collections import Counter

import grpc
import pytest

from kozyr.api.common.v1 import games_pb2, seats_pb2
from kozyr.api.matchmaking.v1 import matchmaking_service_pb2 as pb
from kozyr.api.table.v1 import table_service_pb2 as table_pb
from kozyr.client import MatchmakingClient, TableClient
from kozyr.matchmaking import decisions
from kozyr.matchmaking.ratings import SeatOutcome
from kozyr.runtime.auth import Role
from kozyr.runtime.errors import error_details, error_reason
from tests.integration.matchmaking.conftest import RunningMatchmaking, running_matchmaking
from tests.integration.table.conftest import RunningTableService
from tests.support.matchmaking import final_state
from tests.support.tables import token

THREE_FIVE_EIGHT = "three_five_eight"

pytestmark = pytest.mark.integration
THREE = games_pb2.GAME_THREE_FIVE_EIGHT
EASY, HARD = seats_pb2.COMPUTER_LEVEL_EASY, seats_pb2.COMPUTER_LEVEL_HARD


async def test_leaderboard_ranks_continue_across_pages(matchmaking: RunningMatchmaking) -> None:
    """A page's ranks count from the page's start, not from 1: page 2 of size 2 holds
    ranks 3 and 4. Each page is checked against the one whole page, whose ranks 1…n
    need no offset at all."""
    ratings = matchmaking.service.ratings
    await ratings.record("t-1", THREE_FIVE_EIGHT, [
        SeatOutcome(0, "p1", 1, 20), SeatOutcome(1, "p2", 2, 0), SeatOutcome(2, "p3", 3, -20),
    ])  # fmt: skip
    await ratings.record("t-2", THREE_FIVE_EIGHT, [
        SeatOutcome(0, "p4", 1, 20), SeatOutcome(1, "p5", 2, 0), SeatOutcome(2, "", 3, -20),
    ])  # fmt: skip
    reader = matchmaking.client("ana")
    whole = await reader.leaderboard(THREE, page_size=200)
    assert [e.rank for e in whole.entries] == [1, 2, 3, 4, 5]
    assert whole.next_page_token == ""

    pages: list[list[pb.LeaderboardEntry]] = []
    page_token = ""
    for _ in range(5):  # bounded: a token that never ends fails below, not hangs
        page = await reader.leaderboard(THREE, page_size=2, page_token=page_token)
        pages.append(list(page.entries))
        page_token = page.next_page_token
        if not page_token:
            break
    assert [[e.rank for e in p] for p in pages] == [[1, 2], [3, 4], [5]]
    assert [e for p in pages for e in p] == list(whole.entries)


async def test_an_ended_ticket_is_watched_by_its_players_only(
    matchmaking: RunningMatchmaking,
) -> None:
    """Ticket ids are derived from the player and his request id, so anyone can guess
    them: a matched ticket names the table and seats, a cancelled one that the player
    queued. Another player is refused both (NOT_YOUR_TICKET); the ticket's own player
    still watches them to their end."""
    ana, bo = matchmaking.client("ana"), matchmaking.client("bo")
    cancelled = (await ana.enter_queue(THREE, request_id="first")).ticket_id
    assert cancelled == decisions.derived_id("ticket", "ana", "first")  # guessable
    assert await ana.cancel(cancelled)
    matched = (await ana.enter_queue(THREE, fill_with_computers=True)).ticket_id
    assert (await final_state(ana, matched)).state == pb.TICKET_STATE_MATCHED

    for ticket_id, state in (
        (cancelled, pb.TICKET_STATE_CANCELLED),
        (matched, pb.TICKET_STATE_MATCHED),
    ):
        with pytest.raises(grpc.aio.AioRpcError) as refused:
            await final_state(bo, ticket_id)
        assert refused.value.code() == grpc.StatusCode.PERMISSION_DENIED
        assert error_reason(refused.value) == "NOT_YOUR_TICKET"
        assert (await final_state(ana, ticket_id)).state == state


HELD_SECONDS = 2.0
"""How long the placement is held before its CreateTable (`create_delay_seconds`): ten
times the call's wait, so the call always runs out of patience first."""


async def open_by_retrying(
    client: MatchmakingClient, request_id: str
) -> pb.CreatePrivateTableResponse:
    """Ask again with the same request id, as the UNAVAILABLE invites, until the table is
    open (each attempt waits the service's short wait: no busy loop)."""
    async with asyncio.timeout(HELD_SECONDS + 20):
        while True:
            try:
                return await client.create_private_table(THREE, request_id=request_id)
            except grpc.aio.AioRpcError as error:
                if error_reason(error) != "TABLE_OPENING":
                    raise


async def test_a_slow_private_table_is_unavailable_and_still_opens_for_the_retry(
    tables: RunningTableService, matchmaking_database_url: str, nats_url: str, subject_root: str
) -> None:
    """Placement outlasting the call's wait answers UNAVAILABLE TABLE_OPENING (retryable,
    in the three languages) — and leaves the placement running: it is shared with any
    retry, so a retry finds the table that placement opens. `complete_after` is set out
    of reach so that no tick's `place_overdue` can rescue a placement the call killed."""
    async with running_matchmaking(
        matchmaking_database_url, nats_url, subject_root, tables.target,
        create_delay_seconds=HELD_SECONDS, private_table_wait_seconds=0.2,
        complete_after_seconds=3600,
    ) as mm:  # fmt: skip
        ana = mm.client("ana", retry=False)
        with pytest.raises(grpc.aio.AioRpcError) as slow:
            await ana.create_private_table(THREE, request_id="slow")
        details = error_details(slow.value)
        assert (details.code, details.reason) == (grpc.StatusCode.UNAVAILABLE, "TABLE_OPENING")
        assert set(details.messages) == {"en", "ro", "it"}

        opened = await open_by_retrying(ana, "slow")
        assert [(s.player_id, s.seat) for s in opened.seats] == [("ana", 0)]
        async with TableClient(tables.target, token("ana")) as at_table:
            view = await at_table.get_table(opened.table_id)
        assert view.table_id == opened.table_id
        assert view.seat == 0
        logged = Counter(e.type for e in await mm.lobby_events())
        assert (logged["MatchDecided"], logged["MatchSeated"]) == (1, 1)  # one table


async def test_a_player_reading_anothers_tables_or_a_bad_page_is_told_what_is_wrong(
    matchmaking: RunningMatchmaking,
) -> None:
    """ListMyTables is a player's call, for himself: naming another player is
    NOT_YOUR_PLAYER (not "your role may not do this"), and a service still may. The
    leaderboard's page refusals each speak of their own field, in every language."""
    ana = matchmaking.client("ana")
    with pytest.raises(grpc.aio.AioRpcError) as other:
        await ana.my_tables("bogdan")
    details = error_details(other.value)
    assert (details.code, details.reason) == (grpc.StatusCode.PERMISSION_DENIED, "NOT_YOUR_PLAYER")
    assert "bogdan" in details.message
    service = MatchmakingClient(matchmaking.target, token("matchmaker", Role.SERVICE))
    matchmaking.clients.append(service)
    assert await service.my_tables("bogdan") == []

    with pytest.raises(grpc.aio.AioRpcError) as token_refused:
        await ana.leaderboard(THREE, page_token="abc")
    with pytest.raises(grpc.aio.AioRpcError) as size_refused:
        await ana.leaderboard(THREE, page_size=500)
    bad_token, bad_size = error_details(token_refused.value), error_details(size_refused.value)
    assert bad_token.reason == "INVALID_PAGE_TOKEN"
    assert bad_size.reason == "INVALID_PAGE_SIZE"
    for language in ("en", "ro", "it"):
        assert "next_page_token" in bad_token.messages[language]
        assert "page_size" not in bad_token.messages[language]
        assert "500" in bad_size.messages[language]
        assert "token" not in bad_size.messages[language]


async def test_players_choose_table_options_within_the_documented_bounds(
    matchmaking: RunningMatchmaking, tables: RunningTableService
) -> None:
    """A ticket or a private table may ask for cover_after_seconds (0, or 30 to 3600)
    and a computer level (the enum, or a private table's deprecated int): outside the
    bounds it is refused in the caller's language and nothing is appended; inside them
    the table is opened with them."""
    ana = matchmaking.client("ana")
    before = len(await matchmaking.lobby_events())
    refusals = [
        (ana.enter_queue(THREE, table=table_pb.TableOptions(cover_after_seconds=5)),
         "INVALID_COVER_AFTER"),
        (ana.enter_queue(THREE, table=table_pb.TableOptions(cover_after_seconds=3601)),
         "INVALID_COVER_AFTER"),
        (ana.enter_queue(THREE, table=table_pb.TableOptions(computer_level=9)),  # type: ignore[arg-type]
         "INVALID_COMPUTER_LEVEL"),
        (ana.create_private_table(THREE, table=table_pb.TableOptions(cover_after_seconds=-1)),
         "INVALID_COVER_AFTER"),
        (ana.create_private_table(THREE, computer_level=4), "INVALID_COMPUTER_LEVEL"),
        (ana.create_private_table(
            THREE, computer_level=1, table=table_pb.TableOptions(computer_level=HARD)
        ), "INVALID_COMPUTER_LEVEL"),
    ]  # fmt: skip
    for call, reason in refusals:
        with pytest.raises(grpc.aio.AioRpcError) as refused:
            await call
        details = error_details(refused.value)
        assert (details.code, details.reason) == (grpc.StatusCode.INVALID_ARGUMENT, reason)
        assert set(details.messages) == {"en", "ro", "it"}
    assert len(await matchmaking.lobby_events()) == before

    chosen = table_pb.TableOptions(cover_after_seconds=30, computer_level=HARD)
    hard = await ana.create_private_table(THREE, request_id="hard", table=chosen)
    easy = await matchmaking.client("bo").create_private_table(THREE, computer_level=1)
    async with TableClient(tables.target, token("admin", Role.ADMIN)) as admin:
        hard_view = await admin.get_table(hard.table_id)
        easy_view = await admin.get_table(easy.table_id)
    assert [s.level for s in hard_view.seats if not s.player_id] == [HARD, HARD]
    assert [s.level for s in easy_view.seats if not s.player_id] == [EASY, EASY]


async def test_a_party_is_joined_and_left_with_what_happened_answered(
    matchmaking: RunningMatchmaking,
) -> None:
    """JoinParty answers with the party as joined (its members, leader first);
    LeaveParty says whether leaving disbanded it: a member's leaving does not, the
    leader's does — and the party is gone for everyone then."""
    ana, bogdan, carla = (matchmaking.client(p) for p in ("ana", "bogdan", "carla"))
    party = await ana.create_party()
    joined = await bogdan.join_party(party.code.lower())  # codes are read case-blind
    assert (joined.party_id, list(joined.player_ids)) == (party.party_id, ["ana", "bogdan"])
    assert list((await carla.join_party(party.code)).player_ids) == ["ana", "bogdan", "carla"]
    assert await bogdan.leave_party() is False
    assert list((await ana.party() or pb.Party()).player_ids) == ["ana", "carla"]
    assert await ana.leave_party() is True
    assert await carla.party() is None
