"""`kozyr play` keeps its player online: the app's heartbeats reach a real clock service
process (beside a table service process), which keeps the player online while another
player, who beat once and stopped, goes offline — and the app shows both."""

from __future__ import annotations

import asyncio

import pytest

from kozyr.api.common.v1 import games_pb2
from kozyr.api.table.v1 import table_service_pb2 as pb
from kozyr.cli.play.app import PlayApp
from kozyr.cli.play.endpoints import Endpoints
from kozyr.cli.play.lobby import make_plan
from kozyr.client import ClockClient, TableClient
from kozyr.runtime.auth import Role
from kozyr.texts import Lang
from tests.e2e.clock.conftest import ClockStack
from tests.e2e.clock.conftest import clock_stack as clock_stack
from tests.e2e.play.conftest import SCREEN, screen_text, until
from tests.support.tables import token

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(180)]

OFFLINE_AFTER = 3  # the clock asks for a heartbeat every second


async def test_the_app_keeps_its_player_online_and_shows_who_went_offline(
    clock_stack: ClockStack,
) -> None:
    clock = await clock_stack.start_clock(
        clock_offline_after_seconds=OFFLINE_AFTER, clock_cover_after_seconds=3600
    )
    target = clock_stack.table.target
    async with TableClient(target, token("mm", Role.SERVICE)) as mm:
        created = await mm.create_table(
            games_pb2.GAME_THREE_FIVE_EIGHT,
            ["ana", "bob", "carol"],
            three_five_eight=pb.ThreeFiveEightOptions(turn_seconds=3600),
        )
    ends = Endpoints(
        table=target, matchmaking=target, bots=target, clock=clock.target, token=token("ana")
    )
    app = PlayApp(ends, make_plan("358", table_id=created.table_id), Lang.EN)
    async with (
        ClockClient(clock.target, token("carol")) as asker,
        ClockClient(clock.target, token("bob")) as bob,
        app.run_test(size=SCREEN) as pilot,
    ):

        async def until_seen(player: str, online: bool) -> None:
            async with asyncio.timeout(30):
                while (await asker.presence([player]))[player] is not online:
                    await pilot.pause(0.1)

        await until(pilot, lambda: app.view is not None)
        await until_seen("ana", True)  # the app's first heartbeat
        await bob.heartbeat()  # once, after ana's first: without more he goes first
        await until_seen("bob", True)
        await until_seen("bob", False)
        # only the app's heartbeats since keep her online
        assert await asker.presence(["ana", "bob"]) == {"ana": True, "bob": False}
        await until(pilot, lambda: "bob [person · offline]" in screen_text(app, "table"))
        assert "ana (you) [person · online]" in screen_text(app, "table")
