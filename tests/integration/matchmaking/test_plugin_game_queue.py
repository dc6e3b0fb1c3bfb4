"""A game is one package for every service: the test-only "higher card wins"
(tests/support/higher_card), registered by importing it, is queued through the real
matchmaking service — a party of two fills its two seats, a lone player asks for a
computer at each level the game declares — its tables opened at the real table
service, its computer seats played by the real bots service, its humans rated after
(each seat its own team, `GameInfo.sides`). Nothing in matchmaking, the table service
or the bots names it: they know it only by its plugin's `GameInfo`."""

from __future__ import annotations

import asyncio
import itertools
from collections.abc import AsyncIterator

import grpc
import pytest

from kozyr.api.common.v1 import seats_pb2
from kozyr.api.matchmaking.v1 import matchmaking_service_pb2 as pb
from kozyr.api.table.v1 import table_service_pb2 as table_pb
from kozyr.api.table.v1 import views_pb2
from kozyr.client import TableClient
from kozyr.client.games import neutral_view
from kozyr.games.decider import CLIENT_SEED
from kozyr.runtime.errors import error_reason
from tests.integration.bots.conftest import RunningBots, running_bots
from tests.integration.matchmaking.conftest import RunningMatchmaking
from tests.integration.table.conftest import RunningTableService
from tests.support.higher_card import CODE, INFO, rules
from tests.support.matchmaking import final_state
from tests.support.tables import token

pytestmark = pytest.mark.integration

LEVELS = {
    "easy": seats_pb2.COMPUTER_LEVEL_EASY,
    "normal": seats_pb2.COMPUTER_LEVEL_NORMAL,
    "hard": seats_pb2.COMPUTER_LEVEL_HARD,
}
GAME_SECONDS = 60
_ids = itertools.count()


@pytest.fixture
async def bots(
    tables: RunningTableService, nats_url: str, subject_root: str
) -> AsyncIterator[RunningBots]:
    async with running_bots(tables, nats_url, subject_root) as running:
        yield running


async def play_seat(target: str, table_id: str, player: str, seat: int) -> views_pb2.TableView:
    """A person at `seat`: on each of his turns the first listed move, until the end."""
    async with TableClient(target, token(player)) as client:
        async for view in client.watch(table_id):
            if view.finished:
                return view
            if view.turn.kind == CLIENT_SEED and seat in view.turn.seats:  # as clients do
                try:
                    await client.set_client_seed(table_id, view.next_deal.number)
                except grpc.aio.AioRpcError as error:  # the other seeded last: dealt
                    if error.code() is not grpc.StatusCode.FAILED_PRECONDITION:
                        raise
                continue
            if seat not in view.turn.seats or not view.legal_actions:
                continue
            try:
                await client.submit(
                    table_id, view.legal_actions[0], request_id=f"{player}-{next(_ids)}",
                    expected_version=view.version,
                )  # fmt: skip
            except grpc.aio.AioRpcError as error:  # the view moved on: the next one comes
                if error.code() is not grpc.StatusCode.ABORTED:
                    raise
    raise AssertionError(f"the watch of {table_id} ended before the game")


async def rated(matchmaking: RunningMatchmaking, player: str) -> pb.Rating:
    """The player's rating in the game once a table of it counts (polled: no stream)."""
    client = matchmaking.client(player)
    async with asyncio.timeout(30):
        while True:
            rating = await client.rating(CODE)  # type: ignore[arg-type]  # an open enum
            if rating.tables:
                return rating
            await asyncio.sleep(0.05)


async def test_a_party_fills_a_test_only_games_table_and_is_rated_by_its_sides(
    matchmaking: RunningMatchmaking, tables: RunningTableService
) -> None:
    ana, bogdan = matchmaking.client("ana"), matchmaking.client("bogdan")
    party = await ana.create_party()
    await bogdan.join_party(party.code)
    ticket = await ana.enter_queue(CODE, party_id=party.party_id)  # type: ignore[arg-type]
    matched = await final_state(ana, ticket.ticket_id)
    assert matched.state == pb.TICKET_STATE_MATCHED
    assert matched.game == CODE
    seats = {s.player_id: s.seat for s in matched.seats}
    assert sorted(seats.values()) == list(range(INFO.seats))  # the party, whole
    ends = await asyncio.wait_for(
        asyncio.gather(
            *(play_seat(tables.target, matched.table_id, p, s) for p, s in seats.items())
        ),
        GAME_SECONDS,
    )
    scores = neutral_view(ends[0])["scores"]
    assert sum(scores) == rules.DEALS * rules.HAND  # every round played
    ratings = {p: await rated(matchmaking, p) for p in seats}
    assert all(r.tables == 1 for r in ratings.values())
    if scores[0] != scores[1]:  # a winner: each seat its own side, rated apart
        best = max(seats, key=lambda p: scores[seats[p]])
        assert ratings[best].mu == max(r.mu for r in ratings.values())


async def test_a_party_too_big_or_options_of_another_game_are_refused(
    matchmaking: RunningMatchmaking,
) -> None:
    """The game's own bounds (GameInfo.party_max, its options: none) hold at the queue."""
    leader = matchmaking.client("lea")
    party = await leader.create_party()
    for friend in ("luca", "lia"):
        await matchmaking.client(friend).join_party(party.code)
    with pytest.raises(grpc.aio.AioRpcError) as too_big:
        await leader.enter_queue(CODE, party_id=party.party_id)  # type: ignore[arg-type]
    assert error_reason(too_big.value) == "PARTY_TOO_BIG"
    with pytest.raises(grpc.aio.AioRpcError) as mismatch:
        await matchmaking.client("otto").enter_queue(
            CODE,  # type: ignore[arg-type]
            options=table_pb.ThreeFiveEightOptions(turn_seconds=30),  # any game's, by type
        )
    assert error_reason(mismatch.value) == "OPTIONS_GAME_MISMATCH"


@pytest.mark.parametrize("level", sorted(INFO.levels))
async def test_computers_fill_a_test_only_games_table_and_play_it_at_each_level(
    matchmaking: RunningMatchmaking, tables: RunningTableService, bots: RunningBots, level: str
) -> None:
    player = f"solo-{level}"
    ticket = await matchmaking.client(player).enter_queue(
        CODE,  # type: ignore[arg-type]
        fill_with_computers=True,
        table=table_pb.TableOptions(computer_level=LEVELS[level]),
    )
    matched = await final_state(matchmaking.client(player), ticket.ticket_id)
    assert matched.state == pb.TICKET_STATE_MATCHED
    (mine,) = matched.seats
    async with TableClient(tables.target, token(player)) as client:
        first = await client.get_table(matched.table_id, seat=mine.seat)
    computer = 1 - mine.seat
    assert first.seats[computer].control == seats_pb2.SEAT_CONTROL_COMPUTER
    assert first.seats[computer].level == LEVELS[level]
    end = await asyncio.wait_for(
        play_seat(tables.target, matched.table_id, player, mine.seat), GAME_SECONDS
    )
    assert end.finished
    assert sum(neutral_view(end)["scores"]) == rules.DEALS * rules.HAND  # every round
    assert (await rated(matchmaking, player)).tables == 1
