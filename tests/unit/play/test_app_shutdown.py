"""`kozyr play`'s app as it quits: a view or a status line that arrives once the
screen is gone is dropped, not raised. Raised, it came out of the session's worker as
a traceback at quit, and in the pilot tests as the app's error in place of the test's
own message (docs/testing.md, the runs of 2026-12-02)."""

from __future__ import annotations

from rich.text import Text
from textual.widgets import Static

from kozyr.cli.play.app import PlayApp
from kozyr.cli.play.endpoints import Endpoints
from kozyr.cli.play.lobby import make_plan
from kozyr.texts import Lang
from tests.unit.play.views import tfe_view

NOWHERE = "127.0.0.1:1"
"""No service answers: the app's session keeps trying while the test drives it."""


def _text(app: PlayApp, widget: str) -> str:
    content = app.query_one(f"#{widget}", Static).content
    return content.plain if isinstance(content, Text) else str(content)


async def test_a_view_after_the_screen_is_gone_is_dropped() -> None:
    ends = Endpoints(NOWHERE, NOWHERE, NOWHERE, None, "token")
    app = PlayApp(ends, make_plan("358", table_id="t-1"), Lang.EN)
    async with app.run_test(size=(120, 40)) as pilot:
        app.show_view(tfe_view(hand=("7C", "QS")))
        app.show_status("status line", False)
        await pilot.pause()
        assert "Q♠" in _text(app, "hand")
        assert "ana" in _text(app, "table")
        assert _text(app, "status") == "status line"
    app.show_view(tfe_view())  # the screen is gone: dropped, nothing raised
    app.show_status("too late", True)
