"""The open-hand spectator's view (docs/open-hand.md): at the table's version v it is the
table right before the move N moves back, every hand shown; a viewer of its own in the
view cache. Checked against each seat's own view of the table folded event by event
from the log; signal taps and seat events never bring it closer."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import pytest

from kozyr.eventstore import InMemoryEventStore
from kozyr.games import khozor_teams
from kozyr.games.khozor_teams.model import Phase
from kozyr.table.adapters.repository import fold_recorded, stream_of
from kozyr.table.app import Actor, TableApp
from kozyr.table.domain import model
from kozyr.table.domain.model import Table
from kozyr.table.edge.shown import ViewCache
from tests.support.tables import KHOZOR_PLAYERS, moves_back

DELAY = 4
ACTOR = Actor("moderator", "admin")
Hands = tuple[tuple[str, ...], ...]


async def _table(delay: int = DELAY) -> tuple[TableApp, Table]:
    app = TableApp(InMemoryEventStore())
    created = await app.create(
        request_id="open-hand",
        game_id=khozor_teams.GAME_ID,
        options={},
        seats=KHOZOR_PLAYERS,
        actor=Actor("matchmaking", "service"),
        open_hand_delay=delay,
    )
    return app, created.table


async def _play(app: TableApp, table: Table, moves: int, made: list[int] | None = None) -> Table:
    """`moves` moves of the seats on turn (the first legal move that is no signal tap);
    `made` gets each move's log position (the first event of its append)."""
    for _ in range(moves):
        if made is not None:
            made.append(table.version + 1)
        seat = table.game.turn(table.state).seats[0]
        command = next(
            c
            for c in table.game.legal_commands(table.state, seat)
            if not isinstance(c, khozor_teams.ToggleSignal)
        )
        moved = await app.submit(
            table.table_id, command, request_id=f"m{table.version}", actor=ACTOR
        )
        table = moved.table
    return table


def _seats_hands(table: Table) -> Hands:
    """Every seat's hand as its own view shows it (sorted: the view orders it)."""
    views: list[dict[str, Any]] = [
        table.game.view(table.state, seat) for seat in range(len(table.seats))
    ]
    return tuple(tuple(sorted(v["hand"])) for v in views)


async def _by_version(app: TableApp, table_id: str) -> dict[int, Hands]:
    """Each log version's hands, folding the log one event at a time."""
    events = await app.store.read(stream_of(table_id))
    hands: dict[int, Hands] = {}
    table = None
    for event in events:
        table = fold_recorded(table, [event])
        assert table is not None
        hands[table.version] = _seats_hands(table)
    return hands


async def test_at_every_version_the_open_hand_view_shows_the_hands_delay_moves_before() -> None:
    app, table = await _table()
    made: list[int] = []
    table = await _play(app, table, 10, made)
    truth = await _by_version(app, table.table_id)
    views = ViewCache()
    for version in sorted(truth):  # as the table was at each version, and back again
        live = await app.tables.at_version(table.table_id, version)
        shown = live.open_hand_version()
        assert shown == moves_back(made, DELAY, version)
        past = await app.tables.at_version(table.table_id, shown)
        view = views.open_hand(past, live.open_hand_delay).view
        assert view.open_hand.log_version == shown
        assert view.open_hand.delay == DELAY
        assert tuple(tuple(sorted(h.cards)) for h in view.open_hand.hands) == truth[shown]
        assert [h.seat for h in view.open_hand.hands] == list(range(len(KHOZOR_PLAYERS)))
        assert view.version == past.version_for(None)
    assert any(truth[v] != truth[moves_back(made, DELAY, v)] for v in truth), (
        "the delay hid nothing"
    )
    assert len({moves_back(made, DELAY, v) for v in truth}) > 2, "the view moved on"


async def test_signal_taps_and_seat_events_bring_no_card_closer() -> None:
    app, table = await _table()
    table = await _play(app, table, DELAY + 2)
    shown = table.open_hand_version()
    assert shown > 1
    seat, tap = next(
        (seat, c)
        for seat in range(len(table.seats))
        for c in table.game.legal_commands(table.state, seat)
        if isinstance(c, khozor_teams.ToggleSignal)
    )
    table = (await app.submit(table.table_id, tap, request_id="tap", actor=ACTOR)).table
    table = (
        await app.set_seat_presence(
            table.table_id, seat, online=False, request_id="away", actor=ACTOR
        )
    ).table
    assert table.open_hand_version() == shown, "two events later, no move: the same view"
    assert len(table.recent_moves) == DELAY, "only the last DELAY moves are kept"
    table = await _play(app, table, 1)
    assert table.open_hand_version() > shown


async def test_the_open_hand_view_is_the_spectators_plus_the_hands_never_the_same_entry() -> None:
    app, table = await _table()
    table = await _play(app, table, 3)
    views = ViewCache()
    spectator = views.shown(table, None)
    open_hand = views.open_hand(table, DELAY)
    assert open_hand is not spectator
    assert not spectator.view.HasField("open_hand")
    assert any(h.cards for h in open_hand.view.open_hand.hands)
    stripped = type(open_hand.view)()
    stripped.CopyFrom(open_hand.view)
    stripped.ClearField("open_hand")
    assert stripped == spectator.view
    assert views.open_hand(table, DELAY) is open_hand  # shared by every stream
    assert views.shown(table, None) is spectator


async def test_the_past_table_is_the_log_folded_to_that_version() -> None:
    app, table = await _table()
    table = await _play(app, table, 6)
    late = await app.tables.at_version(table.table_id, table.version - 1)
    early = await app.tables.at_version(table.table_id, 2)  # back: folded again
    again = await app.tables.at_version(table.table_id, table.version - 1)
    assert (late.version, early.version, again.version) == (table.version - 1, 2, late.version)
    assert again.state == late.state


@pytest.mark.parametrize("delay", [-1, model.OPEN_HAND_MAX_DELAY + 1])
def test_a_delay_out_of_bounds_is_refused(delay: int) -> None:
    with pytest.raises(model.TableSetupError, match="open_hand_delay"):
        model.validate_setup(khozor_teams.GAME_ID, {}, KHOZOR_PLAYERS, open_hand_delay=delay)


def test_the_open_hand_version_never_goes_before_the_table() -> None:
    table = model.start(
        model.TableCreated("t", khozor_teams.GAME_ID, {}, KHOZOR_PLAYERS, open_hand_delay=5)
    )
    assert table.open_hand_delay == 5
    assert table.open_hand_version() == 1
    four = replace(table, version=40, recent_moves=(10, 20, 30, 40))
    assert four.open_hand_version() == 1, "fewer moves than the delay: nothing dealt"
    five = replace(table, version=50, recent_moves=(10, 20, 30, 40, 50))
    assert five.open_hand_version() == 9, "right before the move five moves back"


async def test_the_delay_ends_with_the_game() -> None:
    _, table = await _table()
    over = replace(table, state=replace(table.state, phase=Phase.OVER))
    assert over.is_over
    assert over.open_hand_version() == over.version
    assert table.open_hand_version() == 1
