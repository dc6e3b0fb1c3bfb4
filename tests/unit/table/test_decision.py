"""The table's decision as a pure function: retaking a covered seat, the game's refusal,
chance drawn from the seeds given — the same story for every caller of TableApp."""

from __future__ import annotations

import dataclasses
import itertools
from typing import Any

import pytest

from kozyr.games import three_five_eight
from kozyr.games.errors import RuleError
from kozyr.table.domain import decision, model
from kozyr.table.domain.model import SeatControl, SeatControlChanged, Table, TableCreated

SEEDS = (bytes([n]) * 32 for n in itertools.count(1))


def dealt_table() -> Table:
    """A fresh 3-5-8 table after its first chances (dealer drawn, cards dealt)."""
    created = TableCreated("t-1", three_five_eight.GAME_ID, {}, ("ana", "bogdan", "chiara"))
    opened = decision.draw_chance(model.start(created), [created], lambda: next(SEEDS))
    return opened.after


def covered(table: Table, seat: int) -> Table:
    return model.apply(table, SeatControlChanged(seat, SeatControl.COMPUTER))


def first_move(table: Table) -> tuple[int, Any]:
    seat = table.game.turn(table.state).seats[0]
    return seat, table.game.default_command(table.state, seat)


def test_chance_is_drawn_until_a_seat_must_act() -> None:
    table = dealt_table()
    assert not table.game.turn(table.state).is_chance
    assert table.deals, "the first deal's commitment is recorded"


def test_a_person_acting_for_his_covered_seat_takes_it_back_first() -> None:
    table = dealt_table()
    seat, command = first_move(table)
    planned = decision.decide(
        covered(table, seat), command, seeds=lambda: next(SEEDS), acting_person=seat
    )
    assert planned.events[0] == SeatControlChanged(seat, SeatControl.PERSON)
    assert planned.after.control[seat] is SeatControl.PERSON
    assert len(planned.events) > 1, "and his move follows in the same append"


def test_a_service_acting_for_a_covered_seat_leaves_the_cover() -> None:
    table = dealt_table()
    seat, command = first_move(table)
    planned = decision.decide(covered(table, seat), command, seeds=lambda: next(SEEDS))
    assert not any(isinstance(e, SeatControlChanged) for e in planned.events)
    assert planned.after.control[seat] is SeatControl.COMPUTER


def test_a_person_at_his_own_seat_appends_no_control_change() -> None:
    table = dealt_table()
    seat, command = first_move(table)
    planned = decision.decide(table, command, seeds=lambda: next(SEEDS), acting_person=seat)
    assert not any(isinstance(e, SeatControlChanged) for e in planned.events)


def test_an_illegal_move_is_the_games_refusal_and_takes_no_seat_back() -> None:
    table = dealt_table()
    seat, command = first_move(table)
    other = (seat + 1) % 3
    out_of_turn = dataclasses.replace(command, seat=other)
    with pytest.raises(RuleError) as refused:
        decision.decide(
            covered(table, other), out_of_turn, seeds=lambda: next(SEEDS), acting_person=other
        )
    assert refused.value.reason == "NOT_YOUR_TURN"
