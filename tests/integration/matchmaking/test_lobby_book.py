"""The lobby on a real PostgreSQL event store: decisions of two replicas that do not
know each other's appends, redelivered ratings, and snapshots that restore the lobby."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from datetime import UTC, datetime

import pytest

from kozyr.eventstore import PostgresEventStore, migrate
from kozyr.matchmaking import decisions
from kozyr.matchmaking.book import Decision, LobbyBook
from kozyr.matchmaking.events import MatchDecided
from kozyr.matchmaking.lobby import STREAM, Lobby, QueueOptions, Skill, encode
from kozyr.matchmaking.matching import MatchRules, find_matches
from kozyr.matchmaking.ratebook import Leaderboard, RatingBook, stream_of
from kozyr.matchmaking.ratings import SeatOutcome
from kozyr.runtime.errors import FailedPrecondition

THREE_FIVE_EIGHT = "three_five_eight"

pytestmark = pytest.mark.integration
NOW = datetime(2026, 11, 30, 12, 0, tzinfo=UTC)


@pytest.fixture
async def store(database_url: str) -> AsyncIterator[PostgresEventStore]:
    await migrate(database_url)
    async with PostgresEventStore(database_url) as opened:
        yield opened


def entering(player: str, request: str) -> Decision:
    ticket_id = decisions.derived_id("ticket", player, request)

    def decide(lobby: Lobby) -> list[decisions.Event]:
        if ticket_id in lobby.tickets:
            return []
        return decisions.enter(
            lobby, ticket_id=ticket_id, players=(player,), party_id="", game=THREE_FIVE_EIGHT,
            options=QueueOptions(), fill_now=True, skills={player: Skill(25.0, 8.0)}, now=NOW,
        )  # fmt: skip

    return decide


async def test_a_replica_behind_the_log_never_decides_on_it(store: PostgresEventStore) -> None:
    one, two = LobbyBook(store), LobbyBook(store)
    assert await one.decide("enter:ana:1", entering("ana", "1"))
    # `two` has not read the log: its first attempt is refused, and on the caught-up
    # lobby Ana is queued already.
    with pytest.raises(FailedPrecondition) as refused:
        await two.decide("enter:ana:2", entering("ana", "2"))
    assert refused.value.reason == "ALREADY_QUEUED"
    assert two.conflicts == 1
    # Both tick at once on the same lobby: one match, never two.
    for player in ("bogdan", "carla"):
        await one.decide(f"enter:{player}", entering(player, "1"))
    rules = MatchRules()
    results = await asyncio.gather(
        *(
            book.decide(f"tick:{i}", lambda lobby: find_matches(lobby, NOW, rules), fresh=True)
            for i, book in enumerate((one, two))
        )
    )
    [decided] = [e for events in results for e in events if isinstance(e, MatchDecided)]
    assert len(set(decided.tickets)) == 3  # the three at one table, decided once
    logged = [e for e in await store.read(STREAM) if e.type == "MatchDecided"]
    assert len(logged) == 1


async def test_an_answer_is_the_one_decided_on_the_latest_lobby(
    store: PostgresEventStore,
) -> None:
    """`answer` hands back what the appended decision answered: a replica that has not
    read the party's creation is refused on its own lobby, and answers from the
    caught-up one (the party, with the joiner in it) — never the stale refusal."""
    one, two = LobbyBook(store), LobbyBook(store)
    await one.decide("party", lambda lobby: decisions.create_party(lobby, "ana", "party-1"))
    code = one.lobby.parties["party-1"].code
    party = await two.answer("join", lambda lobby: decisions.join_party(lobby, "dan", code))
    assert (party.party_id, party.members) == ("party-1", ["ana", "dan"])
    assert two.conflicts == 0  # refused on the stale lobby, not a lost race
    assert await one.answer("leave:dan", lambda lobby: decisions.leave_party(lobby, "dan")) is False
    assert await two.answer("leave:ana", lambda lobby: decisions.leave_party(lobby, "ana")) is True
    assert "party-1" not in two.lobby.parties


async def test_a_snapshot_restores_the_lobby(store: PostgresEventStore) -> None:
    book = LobbyBook(store, snapshot_every=3)
    for i in range(4):
        await book.decide(f"enter:{i}", entering(f"p{i}", "1"))
    await book.decide("party", lambda lobby: decisions.create_party(lobby, "p9", "party-1"))
    assert await book.save_snapshot()
    await book.decide("enter:late", entering("late", "1"))  # after the snapshot
    cold = LobbyBook(store, snapshot_every=3)
    await cold.load()
    assert encode(cold.lobby) == encode(book.lobby)
    snapshot = await store.read_snapshot(STREAM, cold.key)
    assert snapshot is not None
    assert snapshot.version == book.lobby.version - 1


async def test_a_table_is_rated_once_however_often_it_is_handled(
    store: PostgresEventStore,
) -> None:
    book = RatingBook(store, Leaderboard())
    seats = [SeatOutcome(0, "ana", 1, 20), SeatOutcome(1, "bo", 2, 0), SeatOutcome(2, "", 3, -20)]
    changed = await asyncio.gather(*(book.record("t-1", THREE_FIVE_EIGHT, seats) for _ in range(3)))
    assert sum(changed) == 2  # ana and bo, once each; the computer never
    # A handling that died after Ana's update: the retry completes Bo's with the same
    # "before" as the first would have used.
    half = RatingBook(store, Leaderboard())
    await half.record("t-2", THREE_FIVE_EIGHT, [seats[0], SeatOutcome(1, "", 2, 0), seats[2]])
    ana = await store.read(stream_of(THREE_FIVE_EIGHT, "ana"))
    assert [e.data["table"] for e in ana] == ["t-1", "t-2"]
    assert await book.record("t-2", THREE_FIVE_EIGHT, seats) == 1  # Bo only
    bo = await store.read(stream_of(THREE_FIVE_EIGHT, "bo"))
    assert [e.data["table"] for e in bo] == ["t-1", "t-2"]
    assert await book.record("t-2", THREE_FIVE_EIGHT, seats) == 0
    assert (await book.rating(THREE_FIVE_EIGHT, "ana")).tables == 2
