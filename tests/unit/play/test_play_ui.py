"""A game's own drawing in `kozyr play` comes from the game (`GameInfo.play_ui`, a module
kozyr play imports by name): the real games' tables are drawn by their packages'
`play_ui`, any other game — the test-only higher_card, one this client lacks — by
`render_any`; and the games' rules never load the terminal's libraries."""

from __future__ import annotations

import importlib
import subprocess
import sys

import tests.support.higher_card as higher_card
from kozyr.api.table.v1 import views_pb2
from kozyr.cli.play import render_any
from kozyr.cli.play.app import renderer_of
from kozyr.games.catalogue import BUILT_IN
from kozyr.games.plugin import AnyPlugin
from kozyr.texts import Lang
from tests.unit.play.views import khozor_view, tfe_view


def test_each_real_game_is_drawn_by_its_own_play_ui() -> None:
    built_in: tuple[AnyPlugin, ...] = BUILT_IN
    for plugin, view in zip(built_in, (tfe_view(), khozor_view()), strict=True):
        module = plugin.info.play_ui
        assert module == f"kozyr.games.{plugin.id}.play_ui"
        assert view.game == plugin.code
        drawing = renderer_of(view)
        assert drawing is importlib.import_module(module).table_lines
        assert drawing is not render_any.table_lines
        assert any(line.plain for line in drawing(view, Lang.EN))


def test_a_game_without_a_drawing_of_its_own_or_unknown_is_drawn_from_its_view() -> None:
    assert higher_card.INFO.play_ui == ""
    for code in (higher_card.CODE, 9999):  # proto3 enums are open: any number
        view = views_pb2.TableView(game=code)  # type: ignore[arg-type]
        assert renderer_of(view) is render_any.table_lines


def test_the_games_rules_load_no_terminal_library() -> None:
    """Importing every game (the catalogue, as each service does) loads neither rich nor
    Textual nor kozyr play: a game's play_ui is named, not imported."""
    probe = (
        "import sys, kozyr.games.catalogue as c\n"
        "assert all(p.info.play_ui for p in c.BUILT_IN)\n"
        "print(sorted(m for m in sys.modules if m.split('.')[0] in ('rich', 'textual')"
        " or m.startswith('kozyr.cli') or m.endswith('.play_ui')))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, check=True, timeout=60
    )
    assert out.stdout.strip() == "[]", out.stdout + out.stderr
