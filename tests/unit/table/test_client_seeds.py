"""Seed scheme 2 through the real TableApp on the in-memory store (docs/fair-deal.md §9):
seats set client seeds between the server seed's commitment and the deal, each deal is
the derivation of both, a late client seed changes nothing, and `verify` catches a
service that picks its server seed after seeing the client seeds."""

from __future__ import annotations

import asyncio
import dataclasses
import random
from functools import cache
from typing import Any

import pytest

from kozyr.eventstore import InMemoryEventStore, RecordedEvent
from kozyr.games import three_five_eight
from kozyr.games.cards import format_cards
from kozyr.runtime.errors import FailedPrecondition
from kozyr.table import audit
from kozyr.table.adapters.repository import stream_of
from kozyr.table.app import Actor, TableApp
from kozyr.table.audit.verifying import Check
from kozyr.table.domain import seeding
from kozyr.table.domain.model import Table
from tests.unit.table.test_audit_games import MATCHMAKER, PLAYERS, Played, choose, rehashed

T358 = three_five_eight.GAME_ID
SILENT_SEAT = 2
"""The seat that never sets a client seed: its default "" is recorded."""


def player(table: Table, seat: int) -> Actor:
    return Actor(table.seats[seat], "player")


async def create(app: TableApp) -> Table:
    created = await app.create(
        request_id="create", game_id=T358, options={}, seats=PLAYERS[T358], actor=MATCHMAKER
    )
    return created.table


async def contribute(app: TableApp, table: Table, rng: random.Random) -> Table:
    """Every seat but SILENT_SEAT sets a random client seed for the next deal, as the
    client library does (a seat's second one replaces its first)."""
    upcoming = table.next_seeding
    if upcoming is None or any(upcoming.client_seeds):
        return table
    for seat in range(len(table.seats)):
        if seat != SILENT_SEAT:
            for attempt in range(2):
                table = (
                    await app.set_client_seed(
                        table.table_id,
                        seat,
                        upcoming.deal,
                        rng.randbytes(8).hex(),
                        request_id=f"seed-{upcoming.deal}-{seat}-{attempt}",
                        actor=player(table, seat),
                    )
                ).table
    return table


async def play_seeded(seed: int) -> Played:
    rng = random.Random(seed)
    store = InMemoryEventStore()
    app = TableApp(store, new_seed=lambda: rng.randbytes(32))
    table = await create(app)
    moves = 0
    while not table.is_over:
        table = await contribute(app, table, rng)
        moves += 1
        seat, command = choose(table, rng)
        outcome = await app.submit(
            table.table_id, command, request_id=f"move-{moves}", actor=player(table, seat)
        )
        table = outcome.table
    stream = stream_of(table.table_id)
    return Played(table, tuple(await store.read(stream)), await store.verify(stream))


@cache
def played(seed: int = 7) -> Played:
    return asyncio.run(play_seeded(seed))


def of_type(events: Any, type_name: str) -> list[RecordedEvent]:
    return [e for e in events if e.type == type_name]


def assert_caught(events: list[Any], position: int, check: Check) -> Any:
    """The forged log, rehashed so that only the seeding can give it away, fails
    `verify` at `position` for `check`; returns the problem found."""
    forged, chain = rehashed(events)
    report = audit.verify(forged, chain)
    assert report.problem is not None
    assert (report.problem.position, report.problem.check) == (position, check)
    return report.problem


def test_every_deal_is_the_derivation_of_its_server_and_client_seeds() -> None:
    game = played()
    report = audit.verify(game.events, game.chain)
    assert report.ok, report.problem
    dealt = of_type(game.events, "CardsDealt")
    seeded = of_type(game.events, "DealSeeded")
    assert report.deals_derived == len(seeded) == len(dealt) == three_five_eight.DEALS
    committed = {e.data["deal"]: e.data for e in of_type(game.events, "ServerSeedCommitted")}
    revealed = {e.data["deal"]: e.data for e in of_type(game.events, "ServerSeedRevealed")}
    for deal, record in zip(dealt, seeded, strict=True):
        number = record.data["deal"]
        server_seed = bytes.fromhex(revealed[number]["server_seed"])
        assert seeding.commitment_of(server_seed) == committed[number]["commitment"]
        seeds = tuple(record.data["client_seeds"])
        derived = seeding.derive_seed(server_seed, seeds, game.table.table_id, number)
        assert deal.data["seed"] == derived.hex()
        assert record.position == deal.position + 1
    assert set(committed) == set(range(1, three_five_eight.DEALS + 2)), "one ahead, always"
    assert set(revealed) == set(range(1, three_five_eight.DEALS + 1)), "the unused one stays"


def test_the_last_client_seed_before_the_deal_counts_and_a_silent_seat_gives_the_default() -> None:
    game = played()
    last: dict[tuple[int, int], str] = {}
    for event in of_type(game.events, "ClientSeedSet"):
        last[event.data["deal"], event.data["seat"]] = event.data["client_seed"]
    for record in of_type(game.events, "DealSeeded"):
        deal, seeds = record.data["deal"], record.data["client_seeds"]
        expected = [last.get((deal, seat), seeding.DEFAULT_CLIENT_SEED) for seat in range(3)]
        assert seeds == expected
        assert seeds[SILENT_SEAT] == ""
        assert deal == 1 or all(seeds[s] for s in range(3) if s != SILENT_SEAT)
    assert of_type(game.events, "DealSeeded")[0].data["client_seeds"] == ["", "", ""]


def test_a_client_seed_is_never_taken_outside_its_window() -> None:
    """Every ClientSeedSet of deal n lies after n's commitment and before n's deal."""
    game = played()
    where: dict[tuple[str, int], int] = {}
    for e in game.events:
        if e.type in ("ServerSeedCommitted", "DealSeeded"):
            where[e.type, e.data["deal"]] = e.position
    for e in of_type(game.events, "ClientSeedSet"):
        deal = e.data["deal"]
        dealt_at = where.get(("DealSeeded", deal), len(game.events) + 1)  # never dealt
        assert where["ServerSeedCommitted", deal] < e.position < dealt_at


# ------------------------------------------------------------------ a late client seed


async def test_a_client_seed_after_the_deal_started_is_refused_and_changes_nothing() -> None:
    rng = random.Random(3)
    store = InMemoryEventStore()
    app = TableApp(store, new_seed=lambda: rng.randbytes(32))
    table = await create(app)
    stream = stream_of(table.table_id)
    await app.set_client_seed(table.table_id, 0, 2, "mine", request_id="s0", actor=player(table, 0))
    moves = 0
    while len(table.deals) < 2:
        seat, command = choose(table, rng)
        moves += 1
        table = (
            await app.submit(
                table.table_id, command, request_id=f"m{moves}", actor=player(table, seat)
            )
        ).table
    before = await store.read(stream)
    deal_two = table.deals[1]
    for late_deal in (1, 2):
        with pytest.raises(FailedPrecondition) as refused:
            await app.set_client_seed(
                table.table_id,
                0,
                late_deal,
                "changed",
                request_id=f"late{late_deal}",
                actor=player(table, 0),
            )
        assert refused.value.reason == "DEAL_ALREADY_STARTED"
        assert refused.value.metadata["nextDeal"] == "3"
    with pytest.raises(FailedPrecondition) as ahead:
        await app.set_client_seed(
            table.table_id, 0, 4, "early", request_id="ahead", actor=player(table, 0)
        )
    assert ahead.value.reason == "DEAL_NOT_OPEN"
    assert await store.read(stream) == before, "nothing appended"
    reloaded = await app.tables.load(table.table_id)
    assert reloaded.deals[1] == deal_two
    assert deal_two.client_seeds == ("mine", "", "")
    dealt = next(e for e in before if e.type == "CardsDealt" and e.data["deal"] == 2)
    committed = next(e for e in before if e.type == "ServerSeedCommitted" and e.data["deal"] == 2)
    server_seed = bytes.fromhex(committed.data["server_seed"])
    derived = seeding.derive_seed(server_seed, ("mine", "", ""), table.table_id, 2)
    assert dealt.data["seed"] == derived.hex()
    assert dealt.data["commitment"] == deal_two.commitment


async def test_a_table_of_scheme_1_takes_no_client_seed_and_still_verifies() -> None:
    """A table as the service opened them before scheme 2 (its TableCreated without
    seed_scheme): the service's seeds alone, no seeding event, no client seed taken,
    and `verify` passes it as before."""
    rng = random.Random(5)
    store = InMemoryEventStore()
    app = TableApp(store, new_seed=lambda: rng.randbytes(32), seed_scheme=seeding.SERVER_ONLY)
    table = await create(app)
    with pytest.raises(FailedPrecondition) as refused:
        await app.set_client_seed(table.table_id, 0, 2, "x", request_id="s", actor=player(table, 0))
    assert refused.value.reason == "DEAL_NOT_OPEN"
    assert table.next_seeding is None
    moves = 0
    while not table.is_over:
        seat, command = choose(table, rng)
        moves += 1
        table = (
            await app.submit(
                table.table_id, command, request_id=f"m{moves}", actor=player(table, seat)
            )
        ).table
    events = [
        dataclasses.replace(e, data={k: v for k, v in e.data.items() if k != "seed_scheme"})
        for e in await store.read(stream_of(table.table_id))
    ]
    assert not [e for e in events if e.type in seeding.SECRET_FIELDS or e.type == "DealSeeded"]
    old, chain = rehashed(events)
    report = audit.verify(old, chain)
    assert report.ok, report.problem
    assert report.deals_rederived == three_five_eight.DEALS
    assert report.deals_derived == 0


# ------------------------------------------------------------------ a grinding service


def grind(table_id: str, client_seeds: tuple[str, ...], deal: int) -> bytes:
    """What a cheating service does once it has seen the client seeds: try server seeds
    until the deal gives seat 0 the ace of spades."""
    rng = random.Random(99)
    while True:
        server_seed = rng.randbytes(32)
        hands, _ = three_five_eight.deal_from_seed(
            seeding.derive_seed(server_seed, client_seeds, table_id, deal)
        )
        if "AS" in format_cards(hands[0]):
            return server_seed


def ground_deal(events: list[RecordedEvent], deal: int, server_seed: bytes, table_id: str) -> None:
    """Rewrite deal `deal` as dealt from `server_seed` and the recorded client seeds:
    the deal event, its reveal and the server seed's reveal (the commitment stays)."""
    record = next(e for e in events if e.type == "DealSeeded" and e.data["deal"] == deal)
    seed = seeding.derive_seed(server_seed, tuple(record.data["client_seeds"]), table_id, deal)
    hands, talon = three_five_eight.deal_from_seed(seed)
    for e in events:
        if e.data.get("deal") != deal:
            continue
        if e.type in ("CardsDealt", "DealSeedRevealed"):
            e.data["seed"], e.data["commitment"] = seed.hex(), seeding.commitment_of(seed)
        if e.type == "CardsDealt":
            e.data["hands"] = [format_cards(h) for h in hands]
            e.data["talon"] = format_cards(talon)
        if e.type == "ServerSeedRevealed":
            e.data["server_seed"] = server_seed.hex()


def test_a_service_that_picks_its_server_seed_after_the_client_seeds_is_caught() -> None:
    game = played()
    table_id = game.table.table_id
    events = game.copy_events()
    record = next(e for e in events if e.type == "DealSeeded" and e.data["deal"] == 2)
    favourable = grind(table_id, tuple(record.data["client_seeds"]), 2)
    ground_deal(events, 2, favourable, table_id)
    forged, chain = rehashed(events)
    assert chain.ok, "the forger re-hashed the chain: only the derivation can tell"
    report = audit.verify(forged, chain)
    assert report.problem is not None
    assert (report.problem.position, report.problem.check) == (
        record.position,
        Check.DEAL_DERIVATION,
    )
    assert "derive" in report.problem.reason


def test_a_ground_seed_that_also_claims_its_own_commitment_is_caught() -> None:
    """The forger also writes the ground server seed's commitment into DealSeeded: it is
    not the one committed before the client seeds."""
    game = played()
    table_id = game.table.table_id
    events = game.copy_events()
    record = next(e for e in events if e.type == "DealSeeded" and e.data["deal"] == 2)
    favourable = grind(table_id, tuple(record.data["client_seeds"]), 2)
    ground_deal(events, 2, favourable, table_id)
    record.data["server_commitment"] = seeding.commitment_of(favourable)
    problem = assert_caught(events, record.position, Check.DEAL_DERIVATION)
    assert "server commitment" in problem.reason


def test_a_server_seed_committed_again_after_the_client_seeds_is_caught() -> None:
    """The service commits afresh to a ground seed once it has seen the client seeds
    (inserted before the deal): a second commitment for the same deal."""
    game = played()
    table_id = game.table.table_id
    events = game.copy_events()
    record = next(e for e in events if e.type == "DealSeeded" and e.data["deal"] == 2)
    favourable = grind(table_id, tuple(record.data["client_seeds"]), 2)
    dealt = next(e for e in events if e.type == "CardsDealt" and e.data["deal"] == 2)
    recommit = dataclasses.replace(
        dealt,
        type="ServerSeedCommitted",
        data={
            "deal": 2,
            "commitment": seeding.commitment_of(favourable),
            "server_seed": favourable.hex(),
        },
    )
    at = events.index(dealt)
    spliced = [*events[:at], recommit, *events[at:]]
    renumbered = [dataclasses.replace(e, position=i) for i, e in enumerate(spliced, start=1)]
    assert_caught(renumbered, dealt.position, Check.SERVER_SEED_COMMITMENT)


def test_a_revealed_server_seed_must_be_the_committed_one() -> None:
    game = played()
    events = game.copy_events()
    reveal = next(e for e in events if e.type == "ServerSeedRevealed" and e.data["deal"] == 3)
    reveal.data["server_seed"] = bytes(32).hex()
    assert_caught(events, reveal.position, Check.SERVER_SEED_COMMITMENT)


def test_a_client_seed_slipped_in_after_the_deal_is_caught() -> None:
    game = played()
    events = game.copy_events()
    record = next(e for e in events if e.type == "DealSeeded" and e.data["deal"] == 2)
    late = dataclasses.replace(
        record, type="ClientSeedSet", data={"seat": 1, "deal": 2, "client_seed": "late"}
    )
    at = events.index(record) + 1
    spliced = [*events[:at], late, *events[at:]]
    renumbered = [dataclasses.replace(e, position=i) for i, e in enumerate(spliced, start=1)]
    assert_caught(renumbered, record.position + 1, Check.CLIENT_SEED_WINDOW)


def test_a_seat_history_shows_the_commitment_but_not_the_server_seed_before_its_reveal() -> None:
    game = played()
    seat_replay = audit.replay(list(game.events), 0).to_dict()
    text = str(seat_replay)
    for e in of_type(game.events, "ServerSeedCommitted"):
        assert e.data["commitment"] in text
        revealed = any(
            r.data["deal"] == e.data["deal"] for r in of_type(game.events, "ServerSeedRevealed")
        )
        assert (e.data["server_seed"] in text) is revealed, e.data["deal"]


def _renumbered(events: list[RecordedEvent]) -> list[RecordedEvent]:
    return [dataclasses.replace(e, position=i) for i, e in enumerate(events, start=1)]


def test_a_deal_without_its_derivation_record_is_caught() -> None:
    game = played()
    events = game.copy_events()
    record = next(e for e in events if e.type == "DealSeeded" and e.data["deal"] == 3)
    forged, chain = rehashed(_renumbered([e for e in events if e is not record]))
    report = audit.verify(forged, chain)
    assert report.problem is not None
    assert (report.problem.position, report.problem.check) == (
        record.position,
        Check.DEAL_DERIVATION,
    )
    assert "no DealSeeded" in report.problem.reason


def test_recorded_client_seeds_other_than_the_ones_set_are_caught() -> None:
    game = played()
    events = game.copy_events()
    record = next(e for e in events if e.type == "DealSeeded" and e.data["deal"] == 2)
    record.data["client_seeds"][0] = "not what seat 0 set"
    problem = assert_caught(events, record.position, Check.DEAL_DERIVATION)
    assert "client seeds" in problem.reason


def test_a_commitment_that_is_not_the_hash_of_its_server_seed_is_caught() -> None:
    game = played()
    events = game.copy_events()
    committed = next(e for e in events if e.type == "ServerSeedCommitted" and e.data["deal"] == 5)
    committed.data["commitment"] = "0" * 64
    assert_caught(events, committed.position, Check.SERVER_SEED_COMMITMENT)


async def test_a_finished_game_takes_no_client_seed_for_the_deal_it_never_reached() -> None:
    """The server seed committed after the last deal is never used: a seed for it is
    refused, though that commitment is still pending in the table."""
    rng = random.Random(11)
    app = TableApp(InMemoryEventStore(), new_seed=lambda: rng.randbytes(32))
    table = await create(app)
    moves = 0
    while not table.is_over:
        seat, command = choose(table, rng)
        moves += 1
        table = (
            await app.submit(
                table.table_id, command, request_id=f"m{moves}", actor=player(table, seat)
            )
        ).table
    unused = three_five_eight.DEALS + 1
    assert seeding.pending(table.seedings, unused) is not None
    assert table.next_seeding is None
    with pytest.raises(FailedPrecondition) as refused:
        await app.set_client_seed(
            table.table_id, 0, unused, "after the end", request_id="end", actor=player(table, 0)
        )
    assert refused.value.reason == "DEAL_NOT_OPEN"
