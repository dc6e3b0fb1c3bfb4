"""A computer seat plays at the level its view names (the table's choice at creation,
or the table's default for a covered seat), not at one level per bots process."""

from __future__ import annotations

from kozyr.api.common.v1 import seats_pb2
from kozyr.api.table.v1 import views_pb2
from kozyr.bots.levels import Level
from kozyr.bots.player import seat_level


def _view(*levels: seats_pb2.ComputerLevel.ValueType) -> views_pb2.TableView:
    return views_pb2.TableView(
        seats=[views_pb2.SeatInfo(seat=i, level=level) for i, level in enumerate(levels)]
    )


def test_each_seat_plays_at_its_own_level() -> None:
    view = _view(seats_pb2.COMPUTER_LEVEL_EASY, seats_pb2.COMPUTER_LEVEL_NORMAL)
    assert seat_level(view, 0, Level.NORMAL) is Level.EASY
    assert seat_level(view, 1, Level.EASY) is Level.NORMAL


def test_a_view_without_a_level_falls_back() -> None:
    view = _view(seats_pb2.COMPUTER_LEVEL_UNSPECIFIED, 42)  # type: ignore[arg-type]
    assert seat_level(view, 0, Level.EASY) is Level.EASY
    assert seat_level(view, 1, Level.NORMAL) is Level.NORMAL, "a level this process lacks"
