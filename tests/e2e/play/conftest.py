"""`kozyr play` against the real stack: a table service, matchmaking and the bots as
processes (real PostgreSQL and NATS), and helpers to drive the Textual app with its
pilot."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import pytest
from rich.text import Text
from textual.pilot import Pilot
from textual.widgets import Static

from kozyr.api.common.v1 import games_pb2
from kozyr.api.table.v1 import table_service_pb2 as pb
from kozyr.cli.play.app import PlayApp
from kozyr.cli.play.endpoints import Endpoints
from kozyr.client import TableClient
from kozyr.runtime.auth import Role
from tests.e2e.matchmaking.conftest import MatchmakingStack
from tests.e2e.matchmaking.conftest import mm_stack as mm_stack
from tests.support.tables import token

SCREEN = (120, 40)
WAIT_SECONDS = 60.0


@dataclass
class PlayStack:
    """Table, matchmaking and bots processes; endpoints for a player of the app."""

    mm: MatchmakingStack

    def endpoints(self, player: str) -> Endpoints:
        return Endpoints(
            table=self.mm.table.target,
            matchmaking=self.mm.replicas[0].target,
            bots=self.mm.others[0].target,
            clock=None,
            token=token(player),
        )

    async def open_table(
        self,
        seats: Sequence[str | pb.SeatAssignment | None],
        game: games_pb2.Game.ValueType = games_pb2.GAME_THREE_FIVE_EIGHT,
    ) -> str:
        """A table opened by a service, as matchmaking would."""
        async with TableClient(self.mm.table.target, token("matchmaker", Role.SERVICE)) as mm:
            return (await mm.create_table(game, seats)).table_id


@pytest.fixture
async def play_stack(mm_stack: MatchmakingStack) -> PlayStack:
    await mm_stack.start_matchmaking()
    await mm_stack.start_bots()
    return PlayStack(mm_stack)


async def until(
    pilot: Pilot[None], probe: Callable[[], object], seconds: float = WAIT_SECONDS
) -> None:
    """Let the app run until `probe()` is truthy (a deadline, not a timed assertion);
    past the deadline, fail with what the screen shows."""
    try:
        async with asyncio.timeout(seconds):
            while not probe():
                await pilot.pause(0.05)
    except TimeoutError:
        app = pilot.app
        shown = {w: screen_text(app, w) for w in ("turn", "table", "hand", "status")}  # type: ignore[arg-type]
        raise AssertionError(f"not within {seconds} s; the screen: {shown}") from None


def screen_text(app: PlayApp, widget: str) -> str:
    """The plain text a widget shows now."""
    content = app.query_one(f"#{widget}", Static).content
    return content.plain if isinstance(content, Text) else str(content)
