"""What makes a pinned move stale (issue 26, docs/api.md "Versions"): a game event the
mover may see since the version he pinned, never a seat event (someone's presence, a
seat's control). `Table.is_fresh` is the rule; `TableApp.submit` applies it.

Every viewer is checked (each seat and the spectator), at a 3-5-8 table and, for the
events a viewer may not see, a Khözör table after signals of both teams.
"""

from __future__ import annotations

import pytest

from kozyr.eventstore import InMemoryEventStore
from kozyr.games import three_five_eight
from kozyr.runtime.errors import Aborted
from kozyr.table.app import Actor, TableApp
from kozyr.table.domain import model
from kozyr.table.domain.model import SeatControl, SeatControlChanged, SeatPresenceChanged, Table
from tests.support.tables import khozor_tables, signal_taps

PLAYERS = ("ana", "bogdan", "chiara")
MATCHMAKER = Actor("matchmaker", "service")
CLOCK = Actor("clock", "service")


async def _new_table() -> tuple[TableApp, Table]:
    app = TableApp(InMemoryEventStore())
    created = await app.create(
        request_id="create",
        game_id=three_five_eight.GAME_ID,
        options={},
        seats=PLAYERS,
        actor=MATCHMAKER,
    )
    return app, created.table


def _viewers(table: Table) -> list[int | None]:
    return [*range(len(table.seats)), None]


async def test_seat_events_leave_every_pin_since_the_last_game_event_fresh() -> None:
    _, table = await _new_table()
    read = {seat: table.version_for(seat) for seat in _viewers(table)}
    for event in (
        SeatPresenceChanged(1, False),
        SeatControlChanged(1, SeatControl.COMPUTER),
        SeatPresenceChanged(1, True),
    ):
        table = model.apply(table, event, table.turn_deadline)
    for seat in _viewers(table):
        assert table.version_for(seat) == read[seat] + 3, "seat events are counted"
        assert table.decision_version_for(seat) == read[seat], seat
        for pinned in range(read[seat], read[seat] + 4):
            assert table.is_fresh(seat, pinned), (seat, pinned)
        assert not table.is_fresh(seat, read[seat] - 1), "a pin before the last game event"
        assert not table.is_fresh(seat, read[seat] + 4), "a pin from the future"


async def test_a_game_event_after_seat_events_stales_the_pins_before_it() -> None:
    app, table = await _new_table()
    read = table.version_for(0)
    table = model.apply(table, SeatPresenceChanged(2, False), table.turn_deadline)
    mover = table.game.turn(table.state).seats[0]
    command = table.game.default_command(table.state, mover)
    outcome = await app.submit(
        table.table_id, command, request_id="m1", actor=Actor(PLAYERS[mover], "player")
    )
    after = outcome.table
    for seat in _viewers(after):
        assert after.decision_version_for(seat) == after.version_for(seat), seat
    assert not after.is_fresh(0, read)


async def test_a_move_pinned_before_a_presence_flip_is_applied_and_after_a_move_refused() -> None:
    """Through `TableApp.submit`: the clock records a presence change between the
    mover's read and his move: the move stands. A move in between: the next one pinned
    to a version before it is stale."""
    app, table = await _new_table()
    mover = table.game.turn(table.state).seats[0]
    pinned = table.version_for(mover)
    for online in (False, True):
        other = (mover + 1) % 3
        await app.set_seat_presence(
            table.table_id, other, online, request_id=f"p{online}", actor=CLOCK
        )
    command = table.game.default_command(table.state, mover)
    moved = await app.submit(
        table.table_id,
        command,
        request_id="pinned",
        actor=Actor(PLAYERS[mover], "player"),
        expected_version=pinned,
        viewer=mover,
    )
    after = moved.table
    nxt = after.game.turn(after.state).seats[0]
    with pytest.raises(Aborted) as stale:
        await app.submit(
            table.table_id,
            after.game.default_command(after.state, nxt),
            request_id="late",
            actor=Actor(PLAYERS[nxt], "player"),
            expected_version=table.version_for(nxt),
            viewer=nxt,
        )
    assert stale.value.reason == "STALE_VERSION"


async def test_signals_a_viewer_may_not_see_neither_stale_nor_freshen_its_pins() -> None:
    """Khözör: the other team's signals are not in a viewer's count; its own team's
    are game events it sees (they end its run of seat events)."""
    async for found, table in khozor_tables():
        taps = [t for s in range(8) for t in signal_taps(table, s)]
        if taps:
            app = found
            break
    tap = taps[0]
    await app.set_seat_presence(table.table_id, 5, False, request_id="p", actor=CLOCK)
    table = await app.load(table.table_id)
    before = {seat: table.version_for(seat) for seat in _viewers(table)}
    actor = Actor(table.seats[tap.seat], "player")
    table = (await app.submit(table.table_id, tap, request_id="tap", actor=actor)).table
    for seat in _viewers(table):
        sees = table.version_for(seat) != before[seat]
        if sees:
            assert not table.is_fresh(seat, before[seat]), seat
        else:
            assert table.is_fresh(seat, before[seat] - 1), f"{seat}: run kept across a hidden tap"
            assert table.decision_version_for(seat) == before[seat] - 1, seat
