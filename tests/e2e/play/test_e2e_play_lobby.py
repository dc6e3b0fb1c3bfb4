"""`kozyr play`'s way to a table (`lobby.find_table`) against real matchmaking, table
and bots processes: a party's host shows its code, a friend joins with it, the host
starts a private table and both land at it; the queue shows its search and seats three
players, or fills a table with computers; a player seated at an unfinished table is sent
back to it."""

from __future__ import annotations

import asyncio
import re

import pytest

from kozyr.api.common.v1 import games_pb2, seats_pb2
from kozyr.cli.play.lobby import LobbyError, find_table, make_plan
from kozyr.texts import Lang
from tests.e2e.play.conftest import PlayStack

pytestmark = pytest.mark.e2e

CODE = re.compile(r"Party code (\w+): .* \((\d+) in the party\)")


class Screen:
    """What `find_table` said last (the line the app shows)."""

    def __init__(self) -> None:
        self.said: list[str] = []

    def say(self, text: str) -> None:
        self.said.append(text)

    async def until(self, pattern: re.Pattern[str]) -> re.Match[str]:
        async with asyncio.timeout(30):
            while True:
                for text in reversed(self.said):
                    if found := pattern.search(text):
                        return found
                await asyncio.sleep(0.05)


async def test_a_friend_joins_the_hosts_party_by_code_and_both_sit_at_its_table(
    play_stack: PlayStack,
) -> None:
    host, friend = Screen(), Screen()
    start = asyncio.Event()
    ana = play_stack.mm.client("ana")
    hosting = asyncio.create_task(
        find_table(ana, make_plan("358", party=True, private=True), Lang.EN, host.say, start)
    )
    code = (await host.until(CODE)).group(1)
    bob = play_stack.mm.client("bob")
    joining = asyncio.create_task(
        find_table(bob, make_plan("358", join=code), Lang.EN, friend.say, asyncio.Event())
    )
    await host.until(re.compile(r"\(2 in the party\)"))
    assert any(f"In party {code}" in text for text in friend.said)
    start.set()  # the host's Enter
    async with asyncio.timeout(30):
        table_id = await hosting
        assert await joining == table_id
    view = await play_stack.mm.tables("ana").get_table(table_id)
    assert [s.player_id for s in view.seats] == ["ana", "bob", ""]
    assert view.seats[2].control == seats_pb2.SEAT_CONTROL_COMPUTER


async def test_the_queue_shows_its_search_and_seats_three_players(play_stack: PlayStack) -> None:
    """Without computers (`--computers none`) a lone ticket cannot be placed, so the
    search line is always shown; two more players queueing make the table."""
    ana = play_stack.mm.client("ana")
    screen = Screen()
    queued = asyncio.create_task(
        find_table(ana, make_plan("358", computers="none"), Lang.EN, screen.say, asyncio.Event())
    )
    await screen.until(re.compile("Looking for a table"))
    for player in ("bob", "cid"):
        await play_stack.mm.client(player).enter_queue(games_pb2.GAME_THREE_FIVE_EIGHT)
    async with asyncio.timeout(30):
        table_id = await queued
    view = await play_stack.mm.tables("ana").get_table(table_id)
    assert sorted(s.player_id for s in view.seats) == ["ana", "bob", "cid"]


async def test_the_queue_fills_with_computers_and_a_seated_player_goes_back(
    play_stack: PlayStack,
) -> None:
    """The default plan asks for computers at once (`fill_with_computers`): the next
    matcher tick places the ticket, so which progress lines the screen shows first
    depends on that race (none when the ticket is matched before it is watched) —
    only that they are progress lines is checked here."""
    ana = play_stack.mm.client("ana")
    screen = Screen()
    async with asyncio.timeout(30):
        table_id = await find_table(ana, make_plan("358"), Lang.EN, screen.say, asyncio.Event())
    assert set(screen.said) <= {"Looking for a table…", "Table found, opening it…"}
    view = await play_stack.mm.tables("ana").get_table(table_id)
    assert view.HasField("seat")
    computers = [s for s in view.seats if s.control == seats_pb2.SEAT_CONTROL_COMPUTER]
    assert len(computers) == 2
    again = await find_table(
        ana, make_plan("358", private=True), Lang.EN, screen.say, asyncio.Event()
    )
    assert again == table_id  # ALREADY_SEATED: back to the unfinished table


async def test_a_refusal_reads_in_the_players_language(play_stack: PlayStack) -> None:
    ana = play_stack.mm.client("ana")
    with pytest.raises(LobbyError, match=r"^Nu există grupul"):
        await find_table(
            ana, make_plan("358", join="ZZZZZZ"), Lang.RO, Screen().say, asyncio.Event()
        )
