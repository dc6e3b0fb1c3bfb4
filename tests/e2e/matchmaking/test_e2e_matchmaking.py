"""Matchmaking as processes (real PostgreSQL, NATS and table service): 3-5-8 and Khözör
matches with parties kept together and teams balanced, computers after fill_after on a
moved clock, a SIGKILL between "match decided" and "table created", two replicas that
never seat a player twice, ratings counted once under redelivery, bad input refused
with nothing changed, each service's events in its own database and published by its
own relay."""

from __future__ import annotations

import asyncio
import random
import uuid
from collections import Counter

import grpc
import nats
import pytest

from kozyr.api.common.v1 import games_pb2, seats_pb2
from kozyr.api.common.v1.language_pb2 import LANGUAGE_RO
from kozyr.api.matchmaking.v1 import matchmaking_service_pb2 as pb
from kozyr.api.table.v1 import events_pb2
from kozyr.bus.streams import jetstream_name
from kozyr.bus.subjects import message_subject
from kozyr.client import MatchmakingClient, TableClient
from kozyr.eventstore import PostgresEventStore, migrate
from kozyr.infra import Infrastructure
from kozyr.matchmaking.ratebook import stream_of
from kozyr.runtime.auth import Role
from kozyr.runtime.errors import error_details, error_reason
from tests.e2e.bots.games import GAME_SECONDS
from tests.e2e.matchmaking.conftest import MatchmakingStack, eventually
from tests.e2e.players import ScriptedClient, chooser, play_table
from tests.support.databases import fresh_database
from tests.support.matchmaking import final_state
from tests.support.tables import Seat, token

pytestmark = pytest.mark.e2e
THREE = games_pb2.GAME_THREE_FIVE_EIGHT
KHOZOR = games_pb2.GAME_KHOZOR_TEAMS


async def test_three_players_are_seated_at_one_table(mm_stack: MatchmakingStack) -> None:
    await mm_stack.start_matchmaking()
    players = ["ana", "bogdan", "carla"]
    tickets = {p: (await mm_stack.client(p).enter_queue(THREE)).ticket_id for p in players}
    finals = {p: await final_state(mm_stack.client(p), tickets[p]) for p in players}
    assert {f.state for f in finals.values()} == {pb.TICKET_STATE_MATCHED}
    [table_id] = {f.table_id for f in finals.values()}
    view = await mm_stack.tables("ana").get_table(table_id)
    assert sorted(s.player_id for s in view.seats) == players
    seat = {s.player_id: s.seat for s in finals["ana"].seats}["ana"]
    assert view.seats[seat].player_id == "ana"
    [mine] = await mm_stack.client("ana").my_tables()
    assert (mine.table_id, mine.finished) == (table_id, False)
    with pytest.raises(grpc.aio.AioRpcError) as seated:
        await mm_stack.client("ana").enter_queue(THREE)
    assert error_reason(seated.value) == "ALREADY_SEATED"


async def test_computers_fill_after_fill_after_on_the_moved_clock(
    mm_stack: MatchmakingStack,
) -> None:
    await mm_stack.start_matchmaking(fill_after_seconds=60)
    dan = mm_stack.client("dan")
    ticket = (await dan.enter_queue(THREE)).ticket_id
    mm_stack.set_clock(50)
    await asyncio.sleep(1.0)  # ten ticks at 50 s of waiting: still searching
    first = await anext(aiter(dan.watch_ticket(ticket)))
    assert first.state == pb.TICKET_STATE_SEARCHING
    assert 0 < first.estimated_wait.seconds <= 10
    mm_stack.set_clock(61)
    final = await final_state(dan, ticket)
    assert final.state == pb.TICKET_STATE_MATCHED
    view = await mm_stack.tables("dan").get_table(final.table_id)
    computers = [s for s in view.seats if not s.player_id]
    assert len(computers) == 2
    assert all(s.control == seats_pb2.SEAT_CONTROL_COMPUTER for s in computers)
    assert {s.level for s in computers} == {seats_pb2.COMPUTER_LEVEL_NORMAL}


async def test_khozor_parties_stay_together_on_one_team(mm_stack: MatchmakingStack) -> None:
    await mm_stack.start_matchmaking()
    leader = mm_stack.client("a1")
    party = await leader.create_party()
    for friend in ("a2", "a3", "a4"):
        await mm_stack.client(friend).join_party(party.code)
    duo = await mm_stack.client("b1").create_party()
    await mm_stack.client("b2").join_party(duo.code)
    tickets = {
        "a1": (await leader.enter_queue(KHOZOR, party_id=party.party_id)).ticket_id,
        "b1": (await mm_stack.client("b1").enter_queue(KHOZOR, party_id=duo.party_id)).ticket_id,
        "c1": (await mm_stack.client("c1").enter_queue(KHOZOR)).ticket_id,
        "d1": (await mm_stack.client("d1").enter_queue(KHOZOR)).ticket_id,
    }
    finals = {p: await final_state(mm_stack.client(p), t) for p, t in tickets.items()}
    [table_id] = {f.table_id for f in finals.values()}
    view = await mm_stack.tables("a1").get_table(table_id)
    team = {s.player_id: s.seat % 2 for s in view.seats}
    assert len(team) == 8
    assert len({team[p] for p in ("a1", "a2", "a3", "a4")}) == 1
    assert team["b1"] == team["b2"] != team["a1"]
    assert {s.player_id for s in finals["a1"].seats} == {"a1", "a2", "a3", "a4"}


async def test_a_khozor_party_asking_for_computers_gets_them_on_the_other_team(
    mm_stack: MatchmakingStack,
) -> None:
    await mm_stack.start_matchmaking()
    party = await mm_stack.client("a1").create_party()
    for friend in ("a2", "a3"):
        await mm_stack.client(friend).join_party(party.code)
    ticket = await mm_stack.client("a1").enter_queue(
        KHOZOR, party_id=party.party_id, fill_with_computers=True
    )
    final = await final_state(mm_stack.client("a2"), ticket.ticket_id)
    view = await mm_stack.tables("a3").get_table(final.table_id)
    people = {s.seat % 2 for s in view.seats if s.player_id}
    assert len(people) == 1  # the party on one team, a computer beside them
    assert sum(1 for s in view.seats if not s.player_id) == 5
    assert {s.level for s in view.seats if not s.player_id} == {seats_pb2.COMPUTER_LEVEL_NORMAL}


async def test_a_private_table_for_a_party_with_computers(mm_stack: MatchmakingStack) -> None:
    await mm_stack.start_matchmaking()
    ana = mm_stack.client("ana")
    party = await ana.create_party()
    await mm_stack.client("bogdan").join_party(party.code)
    made = await ana.create_private_table(THREE, request_id="private-1", computer_level=1)
    again = await ana.create_private_table(THREE, request_id="private-1", computer_level=1)
    assert again.table_id == made.table_id
    view = await mm_stack.tables("ana").get_table(made.table_id)
    assert [s.player_id for s in view.seats] == ["ana", "bogdan", ""]
    assert view.seats[2].level == seats_pb2.COMPUTER_LEVEL_EASY


async def test_a_whole_game_at_a_private_table_is_rated(mm_stack: MatchmakingStack) -> None:
    """Matchmaking, the table and the bots together: Ana's private 3-5-8 table with two
    easy computers plays to its end; TableFinished rates her once and frees her."""
    await mm_stack.start_matchmaking()
    await mm_stack.start_bots()
    ana = mm_stack.client("ana")
    made = await ana.create_private_table(THREE, computer_level=1)
    rng = random.Random(5)
    seat = {s.player_id: s.seat for s in made.seats}["ana"]
    player = ScriptedClient(
        lambda: mm_stack.table.target, made.table_id, "ana", seat,
        chooser(Seat(seat, "ana", rng), rng),
    )  # fmt: skip
    await play_table([player], GAME_SECONDS)

    async def rated() -> list[pb.PlayerTable] | None:
        tables = await ana.my_tables()
        return tables if tables and tables[0].finished else None

    [played] = await eventually(rated, 60)
    assert played.table_id == made.table_id
    assert played.place in (1, 2, 3)
    rating = await ana.rating(THREE)
    assert rating.tables == 1
    assert rating.sigma < 25 / 3
    again = await ana.enter_queue(THREE)  # the table is over: she may queue again
    assert again.ticket_id


async def test_a_table_an_operator_opened_counts_as_seated(mm_stack: MatchmakingStack) -> None:
    """A table matchmaking did not open (an admin's CreateTable) still keeps its player
    out of the queue and in ListMyTables until it finishes: matchmaking notices every
    public TableOpened, not only its own tables."""
    await mm_stack.start_matchmaking()
    await mm_stack.start_bots()
    admin = TableClient(mm_stack.table.target, token("mod", Role.ADMIN))
    mm_stack.clients.append(admin)
    made = await admin.create_table(THREE, ["dora", None, None])
    dora = mm_stack.client("dora")

    async def listed() -> list[pb.PlayerTable] | None:
        tables = await dora.my_tables()
        return tables or None

    [mine] = await eventually(listed)
    assert (mine.table_id, mine.finished, mine.seat) == (made.table_id, False, 0)
    with pytest.raises(grpc.aio.AioRpcError) as seated:
        await dora.enter_queue(THREE)
    assert error_reason(seated.value) == "ALREADY_SEATED"
    assert error_details(seated.value).metadata["tableId"] == made.table_id
    rng = random.Random(8)
    player = ScriptedClient(
        lambda: mm_stack.table.target, made.table_id, "dora", 0,
        chooser(Seat(0, "dora", rng), rng),
    )  # fmt: skip
    await play_table([player], GAME_SECONDS)

    async def finished() -> list[pb.PlayerTable] | None:
        tables = await dora.my_tables()
        return tables if tables and tables[0].finished else None

    [played] = await eventually(finished, 60)
    assert played.table_id == made.table_id
    assert (await dora.enter_queue(THREE)).ticket_id  # free again


async def test_a_kill_between_decided_and_created_still_opens_one_table(
    mm_stack: MatchmakingStack,
) -> None:
    slow = await mm_stack.start_matchmaking(create_delay_seconds=60)
    players = ["ana", "bogdan", "carla"]
    tickets = {p: (await mm_stack.client(p).enter_queue(THREE)).ticket_id for p in players}

    async def decided() -> bool:
        return any(e.type == "MatchDecided" for e in await mm_stack.lobby_events())

    await eventually(decided)
    slow.kill()  # SIGKILL while it waits to call CreateTable
    assert not any(e.type == "MatchSeated" for e in await mm_stack.lobby_events())
    await mm_stack.start_matchmaking()  # a fresh replica (a restart): completes the match
    finals = [await final_state(mm_stack.client(p, 1), tickets[p]) for p in players]
    assert {f.table_id for f in finals} != {""}
    assert len({f.table_id for f in finals}) == 1
    events = await mm_stack.lobby_events()
    assert [e.type for e in events].count("MatchDecided") == 1
    assert [e.type for e in events].count("MatchSeated") == 1


async def test_started_before_its_migration_it_waits_then_serves(
    mm_stack: MatchmakingStack, infra: Infrastructure
) -> None:
    """Matchmaking on a database not migrated yet (its migration job still running)
    waits, saying so, instead of crashing; once migrated it serves."""
    async with fresh_database(infra) as url:
        mm_stack.database_url = url
        starting = asyncio.create_task(mm_stack.start_matchmaking())
        log = mm_stack.log_dir / "matchmaking0.log"

        async def waiting() -> bool:
            return log.exists() and "waiting for the database" in log.read_text()

        await eventually(waiting)
        assert not starting.done()
        assert mm_stack.replicas[0].running
        await migrate(url)
        await starting
        ticket = await mm_stack.client("ema").enter_queue(THREE)
        assert ticket.ticket_id


async def test_the_queue_is_rebuilt_from_the_log_after_a_kill(mm_stack: MatchmakingStack) -> None:
    replica = await mm_stack.start_matchmaking()
    waiting = {p: (await mm_stack.client(p).enter_queue(THREE)).ticket_id for p in ("ana", "bo")}
    replica.kill()
    await replica.start()  # nothing of the queue lives in the process
    carla = (await mm_stack.client("carla").enter_queue(THREE)).ticket_id
    finals = [await final_state(mm_stack.client(p), t) for p, t in waiting.items()]
    finals.append(await final_state(mm_stack.client("carla"), carla))
    assert {f.state for f in finals} == {pb.TICKET_STATE_MATCHED}
    assert len({f.table_id for f in finals}) == 1


async def test_two_replicas_never_seat_a_player_twice(mm_stack: MatchmakingStack) -> None:
    await mm_stack.start_matchmaking(tick_seconds=0.05)
    await mm_stack.start_matchmaking(tick_seconds=0.05)
    players = [f"p{i:02d}" for i in range(24)]

    async def enter(i: int, player: str) -> str:
        return (await mm_stack.client(player, i % 2).enter_queue(THREE)).ticket_id

    tickets = await asyncio.gather(*(enter(i, p) for i, p in enumerate(players)))
    finals = [
        await final_state(mm_stack.client(p, i % 2), t)
        for i, (p, t) in enumerate(zip(players, tickets, strict=True))
    ]
    assert {f.state for f in finals} == {pb.TICKET_STATE_MATCHED}
    seated: dict[str, list[str]] = {}
    for event in await mm_stack.lobby_events():
        if event.type == "MatchDecided":
            for seat in event.data["seats"]:
                if "player" in seat:
                    seated.setdefault(seat["player"], []).append(event.data["match"])
    assert sorted(seated) == players
    assert all(len(matches) == 1 for matches in seated.values()), seated
    assert len({f.table_id for f in finals}) == 8


async def test_ratings_count_each_table_once_under_redelivery(
    mm_stack: MatchmakingStack,
) -> None:
    replica = await mm_stack.start_matchmaking()
    table_id = str(uuid.uuid4())
    subject, finished = table_finished(mm_stack, table_id)
    nc = await nats.connect(mm_stack.table.nats_url)
    try:
        js = nc.jetstream()
        await js.publish(subject, finished, headers={"Nats-Msg-Id": "one"})
        ana = mm_stack.client("ana")

        async def rated() -> pb.Rating | None:
            rating = await ana.rating(THREE)
            return rating if rating.tables else None

        first = await eventually(rated)
        replica.kill()
        await js.publish(subject, finished, headers={"Nats-Msg-Id": "two"})
        await replica.start()
        await js.publish(subject, finished, headers={"Nats-Msg-Id": "three"})
        await asyncio.sleep(2.0)
    finally:
        await nc.close()
    ana = mm_stack.client("ana")
    rating = await ana.rating(THREE)
    assert (rating.tables, rating.mu) == (1, first.mu)
    assert rating.mu > 25.0
    async with PostgresEventStore(mm_stack.database_url) as store:
        assert len(await store.read(stream_of("three_five_eight", "bogdan"))) == 1

    async def ranked() -> pb.ListLeaderboardResponse | None:
        board = await ana.leaderboard(THREE)
        return board if len(board.entries) == 2 else None

    board = await eventually(ranked)
    assert [e.rating.player_id for e in board.entries] == ["ana", "bogdan"]
    [played] = await ana.my_tables()
    assert (played.table_id, played.finished, played.place) == (table_id, True, 1)
    assert played.rating_change > 0


def table_finished(stack: MatchmakingStack, table_id: str) -> tuple[str, bytes]:
    """The public TableFinished of a 3-5-8 table (Ana first, Bogdan second, a computer
    third) and its subject, as the table service's relay publishes it."""
    finished = events_pb2.PublicTableEvent(
        table_id=table_id,
        table_finished=events_pb2.TableFinished(
            game_id="three_five_eight",
            results=[
                events_pb2.SeatResult(seat=0, player_id="ana", place=1, score=12),
                events_pb2.SeatResult(seat=1, player_id="bogdan", place=2, score=0),
                events_pb2.SeatResult(seat=2, player_id="", place=3, score=-12),
            ],
        ),
    )
    subject = message_subject(
        f"table-{table_id}", "public", "TableFinished", stack.table.subject_root
    )
    return subject, finished.SerializeToString()


async def events_by_category(database_url: str) -> Counter[str]:
    """How many events of each stream category (`table`, `lobby`, …) a database holds."""
    counts: Counter[str] = Counter()
    async with PostgresEventStore(database_url) as store:
        position = 0
        while batch := await store.read_all(position):
            counts.update(event.stream.split("-", 1)[0] for event in batch)
            position = batch[-1].global_position
    return counts


async def test_each_service_keeps_its_events_in_its_own_database_and_publishes_them(
    mm_stack: MatchmakingStack,
) -> None:
    """The table's events are in the table's database alone, the lobby and the ratings in
    matchmaking's alone — and every one of them reaches NATS, each database's through its
    own service's relay (the table's NATS user may not publish matchmaking's subjects:
    tests/integration/bus/test_bus_rights.py)."""
    await mm_stack.start_matchmaking()
    ana = mm_stack.client("ana")
    made = await ana.create_private_table(THREE, computer_level=1)
    subject, finished = table_finished(mm_stack, made.table_id)
    nc = await nats.connect(mm_stack.table.nats_url)
    try:
        js = nc.jetstream()
        await js.publish(subject, finished, headers={"Nats-Msg-Id": made.table_id})

        async def ranked() -> pb.ListLeaderboardResponse | None:  # folded from NATS
            board = await ana.leaderboard(THREE)
            return board if len(board.entries) == 2 else None

        await eventually(ranked)
        tables = await events_by_category(mm_stack.table.database_url)
        lobby_and_ratings = await events_by_category(mm_stack.database_url)
        assert set(tables) == {"table"}
        assert set(lobby_and_ratings) == {"lobby", "rating"}
        assert lobby_and_ratings["rating"] == 2  # Ana's and Bogdan's

        async def all_published() -> bool:
            held = await events_by_category(mm_stack.table.database_url)
            held += await events_by_category(mm_stack.database_url)
            for category, count in held.items():
                stream = jetstream_name(category, mm_stack.table.subject_root)
                if (await js.stream_info(stream)).state.messages != count:
                    return False
            return True

        await eventually(all_published)
    finally:
        await nc.close()


async def test_bad_input_is_refused_and_changes_nothing(mm_stack: MatchmakingStack) -> None:
    await mm_stack.start_matchmaking()
    ana = mm_stack.client("ana")
    service = MatchmakingClient(mm_stack.replicas[0].target, token("admin-tool", Role.SERVICE))
    mm_stack.clients.append(service)
    ticket = (await ana.enter_queue(THREE, request_id="r1")).ticket_id
    before = len(await mm_stack.lobby_events())
    cases = [
        (ana.enter_queue(games_pb2.GAME_UNSPECIFIED), "INVALID_GAME"),
        (ana.enter_queue(THREE, request_id="has space"), "INVALID_REQUEST_ID"),
        (ana.enter_queue(THREE), "ALREADY_QUEUED"),
        (ana.enter_queue(THREE, party_id="not-a-uuid"), "INVALID_PARTY_ID"),
        (ana.cancel("nope"), "INVALID_TICKET_ID"),
        (ana.cancel(str(uuid.uuid4())), "TICKET_NOT_FOUND"),
        (mm_stack.client("bogdan").cancel(ticket), "NOT_YOUR_TICKET"),
        (ana.join_party("ZZZZZZ"), "PARTY_NOT_FOUND"),
        (ana.leave_party(), "NOT_IN_PARTY"),
        (ana.leaderboard(THREE, page_size=500), "INVALID_PAGE_SIZE"),
        (ana.leaderboard(THREE, page_token="abc"), "INVALID_PAGE_TOKEN"),
        (ana.rating(THREE, "x" * 200), "INVALID_PLAYER_ID"),
        (ana.my_tables("bogdan"), "NOT_YOUR_PLAYER"),
        (ana.create_private_table(THREE, computer_level=9), "INVALID_COMPUTER_LEVEL"),
        (ana.create_private_table(THREE, fill_with_computers=False), "TABLE_NOT_FULL"),
        (anext(aiter(mm_stack.client("bogdan").watch_ticket(ticket))), "NOT_YOUR_TICKET"),
        (service.enter_queue(THREE), "ROLE_NOT_ALLOWED"),
        (service.rating(THREE), "PLAYER_ID_REQUIRED"),
    ]
    for call, reason in cases:
        with pytest.raises(grpc.aio.AioRpcError) as refused:
            await call
        assert error_reason(refused.value) == reason
        assert refused.value.code() != grpc.StatusCode.INTERNAL
    with pytest.raises(grpc.aio.AioRpcError) as romanian:
        await ana.stub.EnterQueue(
            pb.EnterQueueRequest(request_id="r2", game=THREE, language=LANGUAGE_RO),
            metadata=ana.metadata,
        )
    assert error_details(romanian.value).messages["ro"].startswith("ana este deja")
    assert next(iter(error_details(romanian.value).messages)) == "ro"
    repeat = await ana.enter_queue(THREE, request_id="r1")
    assert (repeat.ticket_id, repeat.duplicate) == (ticket, True)
    assert len(await mm_stack.lobby_events()) == before
    assert await ana.cancel(ticket)
    assert not await ana.cancel(ticket)
