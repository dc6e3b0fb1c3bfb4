"""Matchmaking: how many matches a large queue yields per second, what the lobby's one
stream costs, and how many finished tables the ratings take per second.

    .venv/bin/python tests/bench/bench_matchmaking.py [--queue 10000] [--tickets 2000]
                                                      [--tables 500]

* matching (pure, one core): a queue of `--queue` searching tickets (3-5-8 singles and
  parties, then Khözör singles and parties; ratings spread like a real population, all
  waiting 30 s) and one `find_matches` over it — matches and tickets placed per second;
  the same at a tenth of the size, to show how it scales; and a sparse Khözör queue
  where every ticket searches and none can fill a table (the search's worst case);
* the lobby on PostgreSQL: `--tickets` EnterQueue decisions one after another through
  `LobbyBook` (each a catch-up, a decision and an append on `lobby-main`), then one tick
  that decides every match in one append, then a cold rebuild of the lobby from its
  stream (what a restarting replica does);
* ratings on PostgreSQL: `--tables` 3-5-8 tables finished, rated by `RatingBook.record`
  one at a time and eight at once — beside the bare appends of the same events, the
  floor of three appends per table.

Each store figure is printed beside its floor measured in the same run (bare appends of
the same number of events), since the machine's load moves absolute numbers.

PostgreSQL comes from $KOZYR_DATABASE_URL, else an embedded server. Figures are
printed, never asserted (DESIGN.md §9).
"""

from __future__ import annotations

import argparse
import asyncio
import random
import sys
import time
import uuid
from datetime import UTC, datetime, timedelta
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # run as a script
from kozyr.eventstore import NewEvent, PostgresEventStore, migrate
from kozyr.matchmaking import decisions
from kozyr.matchmaking.book import Decision, LobbyBook
from kozyr.matchmaking.decisions import Event
from kozyr.matchmaking.events import MatchDecided
from kozyr.matchmaking.lobby import (
    Lobby,
    QueueOptions,
    Skill,
    fold,
)
from kozyr.matchmaking.matching import MatchRules, find_matches
from kozyr.matchmaking.ratebook import Leaderboard, RatingBook, stream_of
from kozyr.matchmaking.ratings import SeatOutcome
from tests.bench.bench_table import scratch_database, servers

THREE_FIVE_EIGHT = "three_five_eight"
KHOZOR_TEAMS = "khozor_teams"

NOW = datetime(2026, 11, 30, 12, 0, tzinfo=UTC)
RULES = MatchRules()


def queue(size: int, seed: int = 7) -> Lobby:
    """A lobby of `size` players in tickets: half 3-5-8 (a fifth in parties of 2–3),
    half Khözör (a fifth in parties of 2–4); mu ~ N(25, 4), all waiting 30 s."""
    rng = random.Random(seed)
    lobby = Lobby()
    placed = 0
    while placed < size:
        game = THREE_FIVE_EIGHT if placed < size // 2 else KHOZOR_TEAMS
        party = rng.random() < 0.2
        count = rng.randint(2, 3 if game == THREE_FIVE_EIGHT else 4) if party else 1
        players = tuple(f"p{placed + i}" for i in range(count))
        events = decisions.enter(
            lobby, ticket_id=str(uuid.UUID(int=rng.getrandbits(128))), players=players,
            party_id="", game=game, options=QueueOptions(), fill_now=False,
            skills={p: Skill(rng.gauss(25, 4), rng.uniform(2, 8)) for p in players},
            now=NOW - timedelta(seconds=30),
        )  # fmt: skip
        fold(events, lobby)
        placed += count
    return lobby


def bench_matching(size: int) -> None:
    for players in (size // 10, size):
        lobby = queue(players)
        tickets = len(lobby.tickets)
        started = time.perf_counter()
        events = find_matches(lobby, NOW, RULES)
        seconds = time.perf_counter() - started
        matches = [e for e in events if isinstance(e, MatchDecided)]
        placed = sum(len(m.tickets) for m in matches)
        print(
            f"matching  {players:>6,} players in {tickets:>6,} tickets: {len(matches):>5,} "
            f"matches, {placed:>6,} tickets placed in {seconds:.3f} s = "
            f"{len(matches) / seconds:>8,.0f} matches/s, {placed / seconds:>8,.0f} tickets/s"
        )


def bench_sparse(size: int) -> None:
    """The worst queue we know for the search: Khözör singles 0.5 mu apart, so that seven
    fit in a fresh ticket's window and never eight — every anchor searches, none fills."""
    lobby = Lobby()
    for i in range(size):
        player = f"s{i}"
        events = decisions.enter(
            lobby, ticket_id=str(uuid.UUID(int=i)), players=(player,), party_id="",
            game=KHOZOR_TEAMS, options=QueueOptions(), fill_now=False,
            skills={player: Skill(i * 0.5, 3.0)}, now=NOW,
        )  # fmt: skip
        fold(events, lobby)
    started = time.perf_counter()
    events = find_matches(lobby, NOW + timedelta(seconds=1), RULES)
    seconds = time.perf_counter() - started
    print(f"matching  a sparse Khözör queue of {size:,} singles: {len(events)} matches, "
          f"one pass in {seconds:.3f} s")  # fmt: skip


def entering(player: str, mu: float) -> Decision:
    ticket_id = decisions.derived_id("ticket", player, "r")

    def decide(lobby: Lobby) -> list[Event]:
        return decisions.enter(
            lobby, ticket_id=ticket_id, players=(player,), party_id="", game=THREE_FIVE_EIGHT,
            options=QueueOptions(), fill_now=False, skills={player: Skill(mu, 5.0)}, now=NOW,
        )  # fmt: skip

    return decide


async def bench_lobby(database_url: str, tickets: int) -> None:
    async with PostgresEventStore(database_url) as store:
        book = LobbyBook(store)
        rng = random.Random(3)
        started = time.perf_counter()
        for i in range(tickets):
            player = f"q{i}"
            await book.decide(f"enter:{player}:r", entering(player, rng.gauss(25, 4)))
        entered = tickets / (time.perf_counter() - started)
        started = time.perf_counter()
        for i in range(tickets):
            await store.append(
                "bare-lobby", i, [NewEvent("TicketOpened", {"i": i})], request_id=f"r{i}"
            )
        floor = tickets / (time.perf_counter() - started)
        print(f"lobby     {tickets:,} EnterQueue decisions: {entered:,.0f}/s; bare appends "
              f"to one stream: {floor:,.0f}/s (ratio {entered / floor:.2f})")  # fmt: skip
        later = NOW + timedelta(seconds=30)
        started = time.perf_counter()
        events = await book.decide("tick", lambda lobby: find_matches(lobby, later, RULES))
        ticked = time.perf_counter() - started
        matches = sum(1 for e in events if isinstance(e, MatchDecided))
        print(f"lobby     one tick: {matches:,} matches decided and appended in {ticked:.3f} s "
              f"= {matches / ticked:,.0f} matches/s")  # fmt: skip
    async with PostgresEventStore(database_url) as store:
        started = time.perf_counter()
        cold = LobbyBook(store)
        await cold.catch_up()
        rebuilt = time.perf_counter() - started
        print(f"lobby     cold rebuild of {cold.lobby.version:,} events: {rebuilt:.3f} s "
              f"= {cold.lobby.version / rebuilt:,.0f} events/s")  # fmt: skip


async def bench_ratings(database_url: str, tables: int) -> None:
    def table(i: int) -> list[SeatOutcome]:
        players = [f"r{(i * 3 + k) % (tables // 2 + 3)}" for k in range(3)]
        return [SeatOutcome(k, p, k + 1, 10 - 10 * k) for k, p in enumerate(players)]

    async with PostgresEventStore(database_url) as store:
        book = RatingBook(store, Leaderboard())
        started = time.perf_counter()
        for i in range(tables):
            await book.record(str(uuid.uuid4()), THREE_FIVE_EIGHT, table(i))
        one = tables / (time.perf_counter() - started)

        async def rated(i: int) -> None:
            while True:
                try:
                    await book.record(str(uuid.uuid4()), THREE_FIVE_EIGHT, table(i))
                    return
                except Exception:  # a player rated by two tables at once: redelivered
                    await asyncio.sleep(0.001)

        started = time.perf_counter()
        for start in range(0, tables, 8):
            await asyncio.gather(*(rated(i) for i in range(start, min(tables, start + 8))))
        eight = tables / (time.perf_counter() - started)

        started = time.perf_counter()
        for i in range(tables):
            for k in range(3):
                await store.append(
                    stream_of("bare", f"b{i}-{k}"), 0, [NewEvent("RatingChanged", {"i": i})],
                    request_id="r",
                )  # fmt: skip
        floor = tables / (time.perf_counter() - started)
    print(f"ratings   {tables:,} 3-5-8 tables: {one:,.0f} tables/s one at a time, "
          f"{eight:,.0f} tables/s eight at once; bare 3 appends per table: {floor:,.0f} "
          f"tables/s (rating ÷ floor: {one / floor:.2f})")  # fmt: skip


async def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--queue", type=int, default=10_000)
    parser.add_argument("--tickets", type=int, default=2_000)
    parser.add_argument("--tables", type=int, default=500)
    args = parser.parse_args()
    bench_matching(args.queue)
    bench_sparse(args.queue // 2)
    with servers(durable=False) as (server_url, _nats_url):
        async with scratch_database(server_url) as database_url:
            await migrate(database_url)
            await bench_lobby(database_url, args.tickets)
            await bench_ratings(database_url, args.tables)


if __name__ == "__main__":
    asyncio.run(main())
