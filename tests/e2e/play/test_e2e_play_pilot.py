"""`kozyr play`'s screens driven by Textual's pilot against the real stack (table,
matchmaking and bots processes on real PostgreSQL and NATS): the table as the seat sees
it, moves by keys, illegal moves explained in the player's language, hints, Khözör's
signals, and a move sent while the table service is down, delivered once after it is
back."""

from __future__ import annotations

import pytest

from kozyr.cli.play import controls
from kozyr.cli.play.app import PlayApp
from kozyr.cli.play.lobby import make_plan
from kozyr.games.translations import Lang
from tests.e2e.play.conftest import SCREEN, PlayStack, screen_text, until

pytestmark = pytest.mark.e2e


def _mine(app: PlayApp) -> bool:
    return app.view is not None and controls.is_mine(app.view)


async def test_a_private_table_against_computers_is_drawn_and_played_by_keys(
    play_stack: PlayStack,
) -> None:
    plan = make_plan("358", private=True, computers="easy")
    app = PlayApp(play_stack.endpoints("ana"), plan, Lang.EN)
    async with app.run_test(size=SCREEN) as pilot:
        await until(pilot, lambda: _mine(app))
        table = screen_text(app, "table")
        assert "Deal 1/18" in table
        assert "ana (you) [person · online]" in table
        assert table.count("[computer easy · online]") == 2
        assert "contracts left: ♠ ♥ ♦ ♣ NT MT" in table
        turn = screen_text(app, "turn")
        assert turn.startswith("YOUR TURN")
        assert " s · Turn " in turn
        assert app.view is not None
        before = app.view.version
        expected = controls.chosen_move(app.view, app.selection)
        assert expected in controls.turn_moves(app.view)  # the selection starts legal
        await pilot.press("enter")
        await until(pilot, lambda: app.view is not None and app.view.version > before)
        assert app.session is not None
        assert app.session.pending is None
        assert "Sent:" in screen_text(app, "status")
