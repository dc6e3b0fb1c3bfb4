"""`kozyr play` plays a game it has no line of: the test-only "higher card wins"
(tests/support/higher_card), chosen by its short word, drawn by the generic renderer
from its plugin and its view, played by keys to its end against a computer of the real
bots service — matchmaking, table and bots in-process on real PostgreSQL and NATS,
the app driven by Textual's pilot."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable

import pytest

from kozyr.cli.play import controls
from kozyr.cli.play.app import PlayApp
from kozyr.cli.play.endpoints import Endpoints
from kozyr.cli.play.lobby import make_plan
from kozyr.client.games import neutral_view
from kozyr.texts import Lang
from tests.e2e.play.conftest import SCREEN, screen_text, until
from tests.integration.bots.conftest import RunningBots, running_bots
from tests.integration.matchmaking.conftest import RunningMatchmaking
from tests.integration.table.conftest import RunningTableService
from tests.support.higher_card import CODE, INFO, rules
from tests.support.tables import token

pytestmark = pytest.mark.integration


@pytest.fixture
async def bots(
    tables: RunningTableService, nats_url: str, subject_root: str
) -> AsyncIterator[RunningBots]:
    async with running_bots(tables, nats_url, subject_root) as running:
        yield running


def _mine(app: PlayApp) -> bool:
    return app.view is not None and controls.is_mine(app.view)


def _turn(app: PlayApp) -> int:
    """The turn the app shows (-1 once finished: no turn to wait for)."""
    return app.view.turn.number if app.view is not None and not app.view.finished else -1


def _moved_on(app: PlayApp, turn: int) -> Callable[[], bool]:
    return lambda: _turn(app) != turn


async def test_kozyr_play_draws_and_plays_a_game_it_has_no_code_for(
    matchmaking: RunningMatchmaking, tables: RunningTableService, bots: RunningBots
) -> None:
    plan = make_plan(INFO.short, private=True, computers="easy")
    assert plan.game == CODE
    ends = Endpoints(tables.target, matchmaking.target, bots.target, None, token("ana"))
    app = PlayApp(ends, plan, Lang.RO)
    async with app.run_test(size=SCREEN) as pilot:
        await until(pilot, lambda: _mine(app))
        table = screen_text(app, "table")
        assert table.startswith("Cartea mai mare")  # the game's name, in Romanian
        assert "ana (tu)" in table
        assert "[calculator ușor" in table  # the computer, its level
        assert "deals total: 2" in table  # a field of the game's own view
        assert screen_text(app, "turn").startswith("RÂNDUL TĂU · Joacă o carte")
        assert app.view is not None
        assert len(controls.hand(app.view)) == rules.HAND
        plays = 0
        while app.view is not None and not app.view.finished:
            await until(pilot, lambda: _mine(app) or bool(app.view and app.view.finished))
            if app.view.finished:
                break
            turn = app.view.turn.number
            await pilot.press("enter")  # the selection starts on a legal move
            await until(pilot, _moved_on(app, turn))
            plays += 1
        assert plays == rules.DEALS * rules.HAND  # every card of hers played by a key
        assert "JOC TERMINAT" in screen_text(app, "turn")
        assert sum(neutral_view(app.view)["scores"]) == rules.DEALS * rules.HAND
