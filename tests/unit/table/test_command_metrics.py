"""`kozyr_table_commands_total{game, kind}` names the use case that appended, through the
real TableApp on the in-memory store: a client seed that completes the first deal is a
"seed" although it appends the deal too, and the clock's default move is an "expire"
although it appends an ordinary move (docs/operations.md, "Monitoring and alerts")."""

from __future__ import annotations

import random

from prometheus_client import REGISTRY

from kozyr.games import three_five_eight
from kozyr.table.adapters.repository import stream_of
from kozyr.table.app import Actor
from kozyr.table.domain.model import SeatControl
from tests.unit.table.test_audit_games import CLOCK, choose
from tests.unit.table.test_seed_window import new_app, open_table, seed

T358 = three_five_eight.GAME_ID
KINDS = ("create", "move", "expire", "seat", "seed")


def counts() -> dict[str, float]:
    """The 3-5-8 commands counted so far by kind, and the events appended ("events")."""
    counted = {
        kind: REGISTRY.get_sample_value("kozyr_table_commands_total", {"game": T358, "kind": kind})
        or 0.0
        for kind in KINDS
    }
    events = REGISTRY.get_sample_value("kozyr_table_events_appended_total", {"game": T358})
    return {**counted, "events": events or 0.0}


def grown(before: dict[str, float]) -> dict[str, float]:
    """What each count grew by since `before` (only those that grew)."""
    now = counts()
    return {key: now[key] - before[key] for key in now if now[key] != before[key]}


async def test_each_append_is_counted_once_under_the_use_case_that_made_it() -> None:
    app = new_app()
    start = counts()
    table = await open_table(app)
    events = len(await app.store.read(stream_of(table.table_id)))
    assert grown(start) == {"create": 1, "events": events}

    before = counts()
    table = await seed(app, table, 0, "ant")
    table = await seed(app, table, 1, "bee")
    assert table.deals == ()
    table = await seed(app, table, 2, "cat")  # the last seed deals in the same append
    assert table.deals, "the first deal is dealt"
    dealt = len(await app.store.read(stream_of(table.table_id))) - events
    assert dealt > 3, "the deal's events came with the last seed"
    assert grown(before) == {"seed": 3, "events": dealt}

    before = counts()
    seat, command = choose(table, random.Random(7))
    actor = Actor(table.seats[seat], "player")
    table = (await app.submit(table.table_id, command, request_id="m1", actor=actor)).table
    moved = grown(before)
    assert moved["move"] == 1
    assert moved.keys() == {"move", "events"}

    before = counts()
    outcome = await app.set_seat_control(
        table.table_id, 1, SeatControl.ABSENT, request_id="away", actor=CLOCK
    )
    assert grown(before) == {"seat": 1, "events": 1}
    before = counts()
    await app.set_seat_presence(table.table_id, 0, False, request_id="off", actor=CLOCK)
    assert grown(before) == {"seat": 1, "events": 1}

    before = counts()
    turn = outcome.table.turn.number
    expired = await app.expire_turn(table.table_id, turn, CLOCK)
    assert expired.applied
    expiry = grown(before)
    assert expiry["expire"] == 1
    assert expiry.keys() == {"expire", "events"}

    before = counts()
    again = await app.expire_turn(table.table_id, turn, CLOCK)
    assert not again.applied
    assert grown(before) == {}, "a turn already expired appends nothing and counts nothing"
