"""The first deal's seed window (docs/fair-deal.md §9) through the real TableApp on the
in-memory store: a table with a window opens undealt, on a CLIENT_SEED turn of the
players' seats still to set a client seed; the last of them deals it in the same append,
or the clock's ExpireTurn deals it at the deadline with "" for the silent ones. Every
deal then verifies, the first one's seed included."""

from __future__ import annotations

import random
from datetime import UTC, datetime, timedelta

import pytest

from kozyr.eventstore import InMemoryEventStore
from kozyr.games import khozor_teams, three_five_eight
from kozyr.games.decider import CLIENT_SEED
from kozyr.runtime.errors import FailedPrecondition, InvalidArgument
from kozyr.table import audit
from kozyr.table.adapters.repository import stream_of
from kozyr.table.app import Actor, TableApp
from kozyr.table.domain import model, seeding
from kozyr.table.domain.model import COMPUTER, Table
from kozyr.table.domain.public import TurnEnd, TurnEnded, TurnStarted, public_events
from kozyr.table.edge.shown import table_view
from tests.unit.table.test_audit_games import CLOCK, MATCHMAKER, PLAYERS, choose

T358, KHOZOR = three_five_eight.GAME_ID, khozor_teams.GAME_ID
WINDOW = 15
NOW = datetime(2026, 12, 3, 12, 0, tzinfo=UTC)


def new_app(seed: int = 1, scheme: int = seeding.CLIENT_SEEDS) -> TableApp:
    rng = random.Random(seed)
    return TableApp(
        InMemoryEventStore(), clock=lambda: NOW, new_seed=lambda: rng.randbytes(32),
        seed_scheme=scheme,
    )  # fmt: skip


async def open_table(
    app: TableApp, game: str = T358, seats: tuple[str, ...] | None = None, window: int = WINDOW
) -> Table:
    created = await app.create(
        request_id="create",
        game_id=game,
        options={},
        seats=seats or PLAYERS[game],
        actor=MATCHMAKER,
        seed_window=window,
    )
    return created.table


async def seed(app: TableApp, table: Table, seat: int, text: str) -> Table:
    actor = Actor(table.seats[seat], "player")
    outcome = await app.set_client_seed(
        table.table_id, seat, 1, text, request_id=f"seed-{seat}-{text}", actor=actor
    )
    return outcome.table


async def test_a_table_with_a_window_opens_undealt_on_a_client_seed_turn() -> None:
    app = new_app()
    table = await open_table(app)
    assert table.deals == ()
    assert table.next_seeding is not None
    assert table.next_seeding.deal == 1
    turn = table.turn
    assert (turn.kind, turn.seats, turn.seconds) == (CLIENT_SEED, (0, 1, 2), WINDOW)
    assert turn.number == table.game.turn(table.state).number, "the chance step's number"
    assert table.turn_deadline == NOW + timedelta(seconds=WINDOW)
    for seat in (0, 1, 2):  # no move before the deal, whoever would lead
        command = three_five_eight.ChooseContract(seat, three_five_eight.Contract.NO_TRUMP)
        actor = Actor(PLAYERS[T358][seat], "player")
        with pytest.raises(FailedPrecondition):
            await app.submit(table.table_id, command, request_id=f"early{seat}", actor=actor)


async def test_the_view_shows_the_window_as_the_seats_turn_with_its_deadline() -> None:
    app = new_app()
    table = await seed(app, await open_table(app), 1, "bee")
    view = table_view(table, 0)
    assert (view.turn.kind, list(view.turn.seats)) == (CLIENT_SEED, [0, 2])
    assert view.turn.deadline.ToDatetime(UTC) == NOW + timedelta(seconds=WINDOW)
    assert (view.next_deal.number, list(view.next_deal.client_seeds)) == (1, ["", "bee", ""])
    assert not view.legal_actions
    assert not view.three_five_eight.hand, "nothing dealt"


async def test_the_last_players_seed_deals_the_first_deal_from_every_seed() -> None:
    app = new_app()
    table = await open_table(app)
    table = await seed(app, table, 1, "bee")
    table = await seed(app, table, 0, "ay")
    assert table.deals == ()
    assert table.turn.seats == (2,)
    assert table.turn_deadline == NOW + timedelta(seconds=WINDOW), "a seed keeps the deadline"
    table = await seed(app, table, 2, "sea")
    assert len(table.deals) == 1
    assert table.turn.kind != CLIENT_SEED
    assert table.deals[0].client_seeds == ("ay", "bee", "sea")
    events = await app.store.read(stream_of(table.table_id))
    last = [e.type for e in events if e.position > events[-1].position - 4]
    assert "ClientSeedSet" in last
    assert "CardsDealt" in last
    assert "DealSeeded" in last
    committed = next(e for e in events if e.type == "ServerSeedCommitted")
    derived = seeding.derive_seed(
        bytes.fromhex(committed.data["server_seed"]), ("ay", "bee", "sea"), table.table_id, 1
    )
    dealt = next(e for e in events if e.type == "CardsDealt")
    assert dealt.data["seed"] == derived.hex()


async def test_computer_seats_are_never_waited_for() -> None:
    app = new_app()
    table = await open_table(app, seats=("ana", COMPUTER, "chiara"))
    assert table.turn.seats == (0, 2)
    table = await seed(app, table, 2, "c")
    table = await seed(app, table, 0, "a")
    assert table.deals[0].client_seeds == ("a", "", "c")
    only_computers = await new_app().create(
        request_id="bots", game_id=T358, options={}, seats=(COMPUTER,) * 3,
        actor=MATCHMAKER, seed_window=WINDOW,
    )  # fmt: skip
    assert len(only_computers.table.deals) == 1, "nobody to wait for: dealt at once"


async def test_at_the_deadline_the_clock_deals_without_the_silent_seats() -> None:
    app = new_app()
    table = await open_table(app)
    table = await seed(app, table, 1, "only me")
    number = table.turn.number
    stream = stream_of(table.table_id)
    before = await app.store.read(stream)
    late = await app.expire_turn(table.table_id, number + 1, CLOCK)  # not this turn
    assert not late.applied
    assert await app.store.read(stream) == before
    expired = await app.expire_turn(table.table_id, number, CLOCK)
    assert expired.applied
    assert expired.table.deals[0].client_seeds == ("", "only me", "")
    first_turn = expired.table.turn
    assert first_turn.kind != CLIENT_SEED
    assert first_turn.number > number
    again = await app.expire_turn(table.table_id, number, CLOCK)
    assert not again.applied, "the same expiry twice deals once"
    with pytest.raises(FailedPrecondition) as refused:
        await seed(app, expired.table, 0, "too late")
    assert refused.value.reason == "DEAL_ALREADY_STARTED"
    after = await app.expire_turn(table.table_id, first_turn.number, CLOCK)
    assert after.applied, "the first game turn's expiry is its own, not the window's"
    report = audit.verify(await app.store.read(stream), await app.store.verify(stream))
    assert report.ok, report.problem


async def test_public_events_announce_the_window_and_say_it_expired() -> None:
    app = new_app()
    table = await open_table(app)
    opened = public_events(None, table, [], table.turn_deadline)
    started = [e for e in opened if isinstance(e, TurnStarted)]
    assert [(e.kind, [s.seat for s in e.seats], e.deadline) for e in started] == [
        (CLIENT_SEED, [0, 1, 2], NOW + timedelta(seconds=WINDOW))
    ]
    seeded = await seed(app, table, 0, "a")
    changed = public_events(table, seeded, [], seeded.turn_deadline)
    assert [type(e) for e in changed] == [TurnEnded, TurnStarted]
    assert changed[0] == TurnEnded(table.turn.number, TurnEnd.SUPERSEDED)
    expired = (await app.expire_turn(table.table_id, table.turn.number, CLOCK)).table
    ended = public_events(seeded, expired, [], expired.turn_deadline, expired=True)
    assert TurnEnded(table.turn.number, TurnEnd.EXPIRED) in ended


async def test_a_khozor_table_holds_its_first_round_after_the_opening_draws() -> None:
    app = new_app(seed=4)
    table = await open_table(app, KHOZOR)
    assert table.deals == ()
    assert table.turn.kind == CLIENT_SEED
    assert table.turn.seats == tuple(range(8))
    rng = random.Random(4)
    for seat in range(8):
        table = await seed(app, table, seat, f"s{seat}")
    assert table.deals[0].client_seeds == tuple(f"s{seat}" for seat in range(8))
    moves = 0
    while len(table.deals) < 2 and not table.is_over:
        seat, command = choose(table, rng)
        moves += 1
        actor = Actor(table.seats[seat], "player")
        table = (
            await app.submit(table.table_id, command, request_id=f"m{moves}", actor=actor)
        ).table
    stream = stream_of(table.table_id)
    report = audit.verify(await app.store.read(stream), await app.store.verify(stream))
    assert report.ok, report.problem
    assert report.deals_derived >= 1


@pytest.mark.parametrize("window", [-1, model.SEED_WINDOW_MAX_SECONDS + 1])
async def test_a_window_out_of_range_is_refused(window: int) -> None:
    app = new_app()
    with pytest.raises(InvalidArgument) as refused:
        await open_table(app, window=window)
    assert refused.value.reason == "INVALID_TABLE_SETUP"
    assert "seed_window_seconds" in str(refused.value)


async def test_no_window_or_scheme_1_deals_at_once() -> None:
    for app, window in ((new_app(), 0), (new_app(scheme=seeding.SERVER_ONLY), WINDOW)):
        table = await open_table(app, window=window)
        assert len(table.deals) == 1
        assert table.turn.kind != CLIENT_SEED
        assert table.seed_window == 0
