"""A leaver, end to end (docs/leavers.md; issue 27 item 3): processes for the table service,
matchmaking, the clock and the bots, on real PostgreSQL and NATS (with message schedules).

Lev, Pia and Pal queue as a party for a rated Khözör table filled with computers (the
party on one team, issue's "partners": Pia and Pal). Lev already has a strike from an
earlier table (an `AbandonJudged` in matchmaking's log before it starts: one game then
gives a cooldown, not a first warning). At the table Lev's app goes silent: the clock
covers his seat (offline after 1 s, covered 1 s later: the clock's default cover time,
which a table may not set below 30 s through matchmaking), the bots play it to the end
while Pia and Pal play theirs (their clients set their client seeds; his never does, so
the first deal is dealt by the clock at its seed window's end). Then: Lev's rating fell
and his table is marked abandoned; his partners', though their team lost, did not; his
next ticket (alone, or in Pia's party) is refused with ABANDON_COOLDOWN whose metadata
and message give the cooldown's end, 5 minutes after the judgement in the log; an
admin's LiftLeaverPenalty lets his next ticket in.
"""

from __future__ import annotations

import contextlib
import functools
import random
from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import grpc
import pytest

from kozyr.api.common.v1 import games_pb2, seats_pb2
from kozyr.api.matchmaking.v1 import matchmaking_service_pb2 as pb
from kozyr.client import MatchmakingClient, TableClient
from kozyr.eventstore import NewEvent, PostgresEventStore
from kozyr.matchmaking.lobby import STREAM
from kozyr.runtime.auth import Role
from kozyr.runtime.errors import error_details
from tests.e2e.bots.games import GAME_SECONDS
from tests.e2e.clock.conftest import ClockStack
from tests.e2e.conftest import deployed
from tests.e2e.matchmaking.conftest import MatchmakingStack, eventually
from tests.e2e.players import ScriptedClient, chooser, play_table
from tests.support.clock import beating, delete_clock_streams, until_presence
from tests.support.matchmaking import final_state
from tests.support.tables import Seat, token

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(GAME_SECONDS + 120)]
KHOZOR = games_pb2.GAME_KHOZOR_TEAMS
LEAVER, PARTNERS = "lev", ("pia", "pal")
NEW_SKILL = (25.0, 25 / 3)
"""A player's (mu, sigma) before his first rated table."""
SECOND_STRIKE = timedelta(minutes=5)
"""The 2nd strike's cooldown (docs/leavers.md)."""
SEED_WINDOW = 3
"""Seconds the first deal waits for the players' client seeds: Lev never sends his, so
the clock deals it at the deadline (docs/fair-deal.md §9)."""


@pytest.fixture
async def stacks(
    database_url: str,
    matchmaking_database_url: str,
    clock_nats_url: str,
    subject_root: str,
    tmp_path: Path,
) -> AsyncIterator[tuple[MatchmakingStack, ClockStack]]:
    """A table service on the NATS that keeps message schedules; start matchmaking, bots
    and the clock beside it."""
    async with deployed(database_url, clock_nats_url, subject_root, tmp_path) as table:
        stack, clocks = MatchmakingStack(table, matchmaking_database_url, tmp_path), None
        stack.set_clock(0)
        clocks = ClockStack(table, tmp_path)
        try:
            yield stack, clocks
        finally:
            await stack.close()
            clocks.stop()
            await delete_clock_streams(clock_nats_url, subject_root)


async def earlier_strike(database_url: str, player: str) -> None:
    """A first strike (a warning) for `player` in matchmaking's log, as an earlier table
    would have left it."""
    judged = {
        "table": "an-earlier-table", "player": player, "strikes": 1,
        "at": datetime.now(UTC).isoformat(), "until": None,
    }  # fmt: skip
    async with PostgresEventStore(database_url) as store:
        await store.append(
            STREAM, 0, [NewEvent("AbandonJudged", judged)], request_id="earlier-strike"
        )


async def party_ticket(stack: MatchmakingStack) -> tuple[str, str]:
    """Pia leads a party of the three to a Khözör queue, computers filling the table:
    the table's id once matched, and the party's."""
    leader = stack.client(PARTNERS[0])
    party = await leader.create_party()
    for member in (PARTNERS[1], LEAVER):
        await stack.client(member).join_party(party.code)
    ticket = await leader.enter_queue(KHOZOR, party_id=party.party_id, fill_with_computers=True)
    final = await final_state(leader, ticket.ticket_id)
    assert final.state == pb.TICKET_STATE_MATCHED
    return final.table_id, party.party_id


async def seats_online(tables: TableClient, table_id: str) -> dict[str, int] | None:
    """Every person's seat, once the clock has recorded each of them online there."""
    view = await tables.get_table(table_id)
    people = [s for s in view.seats if s.player_id]
    if all(s.presence == seats_pb2.PRESENCE_ONLINE for s in people):
        return {s.player_id: s.seat for s in people}
    return None


async def play_without_him(stack: MatchmakingStack, clocks: ClockStack) -> tuple[str, str]:
    """The three queue and are seated online; Lev falls silent, his partners play to the
    end. The table's id and the party's."""
    clock = await clocks.start_clock(clock_offline_after_seconds=1, clock_cover_after_seconds=1)
    async with contextlib.AsyncExitStack() as apps:
        for player in PARTNERS:
            await apps.enter_async_context(beating(clock.target, player))
        async with beating(clock.target, LEAVER):
            await until_presence(clock.target, dict.fromkeys((LEAVER, *PARTNERS), True))
            table_id, party_id = await party_ticket(stack)
            watcher = stack.tables(PARTNERS[0])
            seat = await eventually(lambda: seats_online(watcher, table_id))
        rng = random.Random(27)
        partners = [
            ScriptedClient(
                lambda: stack.table.target, table_id, player, seat[player],
                chooser(Seat(seat[player], player, rng), rng),
            )
            for player in PARTNERS
        ]  # fmt: skip
        await play_table(partners, GAME_SECONDS)
    final = await watcher.get_table(table_id)
    assert final.finished
    first = list(final.deals[0].client_seeds)
    assert [bool(first[seat[p]]) for p in (LEAVER, *PARTNERS)] == [False, True, True], (
        "the first deal waited for the partners' seeds, and the clock dealt it without his"
    )
    assert not any(first[s.seat] for s in final.seats if not s.player_id), "computers: none"
    assert final.seats[seat[LEAVER]].control == seats_pb2.SEAT_CONTROL_COMPUTER, "covered"
    assert {final.seats[seat[p]].control for p in PARTNERS} == {seats_pb2.SEAT_CONTROL_PERSON}
    return table_id, party_id


async def rated(client: MatchmakingClient) -> pb.PlayerTable | None:
    tables = await client.my_tables()
    return tables[0] if tables and tables[0].finished else None


async def test_a_silent_player_is_rated_last_cooled_down_and_lifted_by_an_admin(
    stacks: tuple[MatchmakingStack, ClockStack],
) -> None:
    stack, clocks = stacks
    await earlier_strike(stack.database_url, LEAVER)
    await stack.start_matchmaking(seed_window_seconds=SEED_WINDOW)
    await stack.start_bots()
    lev = stack.client(LEAVER)
    assert (await lev.leaver_status()).strikes == 1, "the earlier strike, folded from the log"
    table_id, party_id = await play_without_him(stack, clocks)

    his = await eventually(lambda: rated(lev), 60)
    assert (his.table_id, his.abandoned) == (table_id, True)
    assert his.rating_change < 0
    rating = await lev.rating(KHOZOR)
    assert (rating.tables, rating.mu < NEW_SKILL[0]) == (1, True), "rated as a loser"
    for partner in PARTNERS:
        mine = await eventually(functools.partial(rated, stack.client(partner)), 60)
        assert (mine.table_id, mine.abandoned, mine.rating_change) == (table_id, False, 0)
        kept = await stack.client(partner).rating(KHOZOR)
        assert (kept.tables, kept.mu, kept.sigma) == (1, *NEW_SKILL), "protected"
        assert (await stack.client(partner).leaver_status()).strikes == 0

    [judged] = [
        e.data
        for e in await stack.lobby_events()
        if e.type == "AbandonJudged" and e.data["table"] == table_id
    ]
    assert (judged["player"], judged["strikes"]) == (LEAVER, 2)
    until = datetime.fromisoformat(judged["at"]) + SECOND_STRIKE
    assert datetime.fromisoformat(judged["until"]) == until
    status = await lev.leaver_status()
    assert (status.strikes, status.cooldown_until.ToDatetime(UTC)) == (2, until)
    pia = stack.client(PARTNERS[0])
    for ticket in (lev.enter_queue(KHOZOR), pia.enter_queue(KHOZOR, party_id=party_id)):
        with pytest.raises(grpc.aio.AioRpcError) as refused:
            await ticket
        details = error_details(refused.value)
        assert (details.code, details.reason) == (
            grpc.StatusCode.FAILED_PRECONDITION,
            "ABANDON_COOLDOWN",
        )
        assert details.metadata["until"] == until.isoformat()
        assert until.strftime("%Y-%m-%d %H:%M:%S") in details.messages["en"]

    admin = MatchmakingClient(stack.replicas[0].target, token("moderator", Role.ADMIN))
    stack.clients.append(admin)
    lifted = await admin.lift_leaver_penalty(LEAVER, "his router died, says the ISP")
    assert lifted.lifted
    assert (lifted.leaver.strikes, lifted.leaver.HasField("cooldown_until")) == (1, False)
    again = await lev.enter_queue(KHOZOR)
    assert (await anext(aiter(lev.watch_ticket(again.ticket_id)))).state == (
        pb.TICKET_STATE_SEARCHING
    )
    lifts = [e for e in await stack.lobby_events() if e.type == "PenaltyLifted"]
    assert [(e.data["player"], e.data["by"]) for e in lifts] == [(LEAVER, "moderator")]
