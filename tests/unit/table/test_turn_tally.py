"""The leaver accounting's facts (docs/leavers.md) in `TableFinished`: per player seat, its
turns, those covered, those from its first cover on, and whether it was covered at the end.

Whole games through the real TableApp on the in-memory store: one seat is covered for a
stretch of turns (the bots service plays them), given back, and — in one variant — covered
again until the end. The test counts every seat's moves itself as it makes them (a move by
the bots service is a covered one); the result published, and the table reloaded from its
log, must agree.
"""

from __future__ import annotations

import random
from dataclasses import dataclass

import pytest

from kozyr.api.table.v1 import events_pb2
from kozyr.eventstore import InMemoryEventStore
from kozyr.games import khozor_teams, three_five_eight
from kozyr.table.adapters.repository import TableRepository
from kozyr.table.app import Actor, TableApp
from kozyr.table.domain.model import SeatControl, Table
from tests.unit.table.test_audit_games import MATCHMAKER, PLAYERS
from tests.unit.table.test_public_events import outbox_appends

BOTS = Actor("bots", "service")
CLOCK = Actor("clock", "service")
LEAVER = 1


@dataclass(frozen=True)
class Tally:
    turns: int = 0
    covered: int = 0
    since_cover: int = 0


Played = tuple[Table, list[events_pb2.PublicTableEvent], dict[int, Tally], TableApp]


async def play(game_id: str, *, back_at_end: bool) -> Played:
    """Seat 1 is covered from its 3rd turn to its 8th, then (unless `back_at_end`) from
    its 15th to the end; every move is its seat's first legal command."""
    rng = random.Random(5)
    store = InMemoryEventStore()
    app = TableApp(store, new_seed=lambda: rng.randbytes(32))
    created = await app.create(
        request_id="create", game_id=game_id, options={}, seats=PLAYERS[game_id], actor=MATCHMAKER
    )
    table, own_turns = created.table, 0
    tallies: dict[int, Tally] = {}
    for move in range(100_000):
        if table.is_over:
            break
        turn = table.game.turn(table.state)
        seat = turn.seats[0]
        if LEAVER in turn.seats:
            own_turns += 1
            wanted = (
                SeatControl.COMPUTER
                if 3 <= own_turns < 8 or (own_turns >= 15 and not back_at_end)
                else SeatControl.PERSON
            )
            if table.control[LEAVER] is not wanted:
                table = (
                    await app.set_seat_control(
                        table.table_id, LEAVER, wanted, request_id=f"c{move}", actor=CLOCK
                    )
                ).table
            seat = LEAVER
        command = table.game.legal_commands(table.state, seat)[0]
        if isinstance(command, khozor_teams.ToggleSignal):  # an at-will tap: no turn
            command = table.game.default_command(table.state, seat)
        actor = (
            BOTS
            if table.control[seat] is SeatControl.COMPUTER
            else Actor(table.seats[seat], "player")
        )
        table = (
            await app.submit(table.table_id, command, request_id=f"m{move}", actor=actor)
        ).table
        t = tallies.get(seat, Tally())
        away = actor is BOTS
        since = t.since_cover + 1 if away or t.since_cover else 0
        tallies[seat] = Tally(t.turns + 1, t.covered + away, since)
    public = [e for append in await outbox_appends(store) for e in append.public]
    return table, public, tallies, app


@pytest.mark.parametrize("game_id", [three_five_eight.GAME_ID, khozor_teams.GAME_ID])
@pytest.mark.parametrize("back_at_end", [True, False])
async def test_the_result_counts_each_seats_covered_turns(game_id: str, back_at_end: bool) -> None:
    table, public, expected, app = await play(game_id, back_at_end=back_at_end)
    finished = public[-1].table_finished
    reloaded = await TableRepository(app.store).load(table.table_id)
    assert reloaded.tally == table.tally, "the log folds to the same tally"
    results = {r.seat: r for r in finished.results}
    for seat, player in enumerate(table.seats):
        r = results[seat]
        assert (r.turns, r.covered_turns, r.turns_since_cover) == (
            expected[seat].turns,
            expected[seat].covered,
            expected[seat].since_cover,
        ), f"seat {seat}"
        assert r.covered_at_end == (seat == LEAVER and not back_at_end)
        assert r.player_id == player
    leaver = results[LEAVER]
    assert leaver.covered_turns >= 5
    assert leaver.turns_since_cover == leaver.turns - 2  # from his 3rd turn on
    assert all(results[s].covered_turns == 0 for s in results if s != LEAVER)
    assert all(results[s].turns > 0 for s in results)
