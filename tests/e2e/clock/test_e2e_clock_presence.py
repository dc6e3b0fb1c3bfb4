"""Presence and covering end to end: a player whose heartbeats stop is shown offline,
his seat is covered by a computer after `cover_after`, and he takes it back by acting.

Times are short settings of the clock (offline after 1 s, covered 1 s later), so the
3-minute rule runs in seconds; turns are long (3600 s) so no expiry interferes.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Callable

import nats
import pytest
from nats.aio.msg import Msg

from kozyr.api.clock.v1 import presence_pb2
from kozyr.api.common.v1 import games_pb2, seats_pb2
from kozyr.api.table.v1 import table_service_pb2 as pb
from kozyr.api.table.v1 import views_pb2
from kozyr.client import ClockClient, TableClient
from kozyr.runtime.auth import Role
from tests.e2e.clock.conftest import ClockStack
from tests.support.tables import token

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(180)]

PLAYERS = ["ana", "bogdan", "chiara"]
HEARTBEAT_EVERY = 0.25
PERSON, COMPUTER = seats_pb2.SEAT_CONTROL_PERSON, seats_pb2.SEAT_CONTROL_COMPUTER


async def _beat(target: str, player: str) -> None:
    async with ClockClient(target, token(player)) as me:
        while True:
            await me.heartbeat()
            await asyncio.sleep(HEARTBEAT_EVERY)


@contextlib.asynccontextmanager
async def _presence_feed(
    url: str, root: str
) -> AsyncIterator[asyncio.Queue[presence_pb2.PresenceChanged]]:
    nc = await nats.connect(url)
    queue: asyncio.Queue[presence_pb2.PresenceChanged] = asyncio.Queue()

    async def on(message: Msg) -> None:
        queue.put_nowait(presence_pb2.PresenceChanged.FromString(message.data))

    await nc.subscribe(f"{root}.presence.>", cb=on)
    await nc.flush()  # the server has the subscription before anybody beats
    try:
        yield queue
    finally:
        await nc.close()


async def _until(
    stream: AsyncIterator[views_pb2.TableView],
    seen: list[views_pb2.TableView],
    shown: Callable[[views_pb2.TableView], bool],
) -> views_pb2.TableView:
    """The watcher's views until one for which `shown` holds (within 30 s)."""
    async with asyncio.timeout(30):
        while not shown(seen[-1]):
            seen.append(await anext(stream))
    return seen[-1]


def _seat_story(seen: list[views_pb2.TableView], seat: int) -> list[tuple[int, bool]]:
    """The seat's (control, online) through the views, repeats left out."""
    story: list[tuple[int, bool]] = []
    for view in seen:
        now = (view.seats[seat].control, view.seats[seat].online)
        if not story or story[-1] != now:
            story.append(now)
    return story


async def test_absent_player_is_covered_and_retakes_his_seat_by_acting(
    clock_stack: ClockStack,
) -> None:
    clock = await clock_stack.start_clock(
        clock_offline_after_seconds=1, clock_cover_after_seconds=1
    )
    async with _presence_feed(clock_stack.table.nats_url, clock_stack.root) as feed:
        # Subscribed first: a heartbeat sent before would come online unheard.
        beats = {p: asyncio.create_task(_beat(clock.target, p)) for p in PLAYERS}
        async with asyncio.timeout(30):
            online = {(await feed.get()).player_id for _ in PLAYERS}
        assert online == set(PLAYERS)
        async with TableClient(clock_stack.table.target, token("mm", Role.SERVICE)) as mm:
            created = await mm.create_table(
                games_pb2.GAME_THREE_FIVE_EIGHT,
                PLAYERS,
                three_five_eight=pb.ThreeFiveEightOptions(turn_seconds=3600),
            )
        table_id = created.table_id
        async with TableClient(clock_stack.table.target, token("admin", Role.ADMIN)) as admin:
            seat = (await admin.get_table(table_id)).turn.seats[0]
        absent, watcher = PLAYERS[seat], PLAYERS[(seat + 1) % 3]
        async with (
            TableClient(clock_stack.table.target, token(watcher)) as other,
            TableClient(clock_stack.table.target, token(absent)) as me,
            ClockClient(clock.target, token(watcher)) as asker,
        ):
            stream = other.watch(table_id)
            seen = [await anext(stream)]
            # Every app heartbeats: the clock records them online as the table opens
            # (unknown until then, never offline).
            assert all(s.presence != seats_pb2.PRESENCE_OFFLINE for s in seen[0].seats)
            first = await _until(stream, seen, lambda v: all(s.online for s in v.seats))
            del seen[:-1]
            assert first.seats[seat].control == PERSON

            beats.pop(absent).cancel()
            gone = await asyncio.wait_for(feed.get(), 30)
            assert (gone.player_id, gone.online) == (absent, False)
            assert await asker.presence(PLAYERS) == {p: p != absent for p in PLAYERS}

            covered = await _until(stream, seen, lambda v: v.seats[seat].control == COMPUTER)
            assert not covered.seats[seat].online
            others = [s for s in covered.seats if s.seat != seat]
            assert [(s.control, s.online) for s in others] == [(PERSON, True)] * 2
            assert covered.turn == first.turn, "covering changes nobody's turn or deadline"
            assert covered.three_five_eight == first.three_five_eight, "nor anything else"

            async with ClockClient(clock.target, token(absent)) as back:
                assert (await back.heartbeat()).came_online
            assert (await asyncio.wait_for(feed.get(), 30)).online
            await _until(stream, seen, lambda v: v.seats[seat].online)
            mine = await me.get_table(table_id)
            assert mine.seats[seat].control == COMPUTER, "coming online alone retakes nothing"

            done = await me.submit(table_id, mine.legal_actions[0], expected_version=mine.version)
            assert done.view.seats[seat].control == PERSON
            retaken = await _until(stream, seen, lambda v: v.seats[seat].control == PERSON)
            assert retaken.turn.number > first.turn.number
            assert _seat_story(seen, seat) == [
                (PERSON, True),
                (PERSON, False),
                (COMPUTER, False),
                (COMPUTER, True),
                (PERSON, True),
            ]
    for task in beats.values():
        task.cancel()
    assert feed.empty(), "nobody else came or went"


def _seat0(view: views_pb2.TableView) -> tuple[int, bool]:
    return view.seats[0].control, view.seats[0].online


async def test_each_table_covers_after_its_own_cover_after(clock_stack: ClockStack) -> None:
    """One absent player at three tables: cover_after 1 s, 4 s and the clock's default
    (an hour here): covered at the first, later at the second, not at the third."""
    clock = await clock_stack.start_clock(
        clock_offline_after_seconds=1, clock_cover_after_seconds=3600
    )
    async with (
        TableClient(clock_stack.table.target, token("mm", Role.SERVICE)) as mm,
        _presence_feed(clock_stack.table.nats_url, clock_stack.root) as feed,
    ):
        beat = asyncio.create_task(_beat(clock.target, "dora"))
        assert (await asyncio.wait_for(feed.get(), 30)).online
        tables = []
        for cover_after in (1, 4, 0):
            created = await mm.create_table(
                games_pb2.GAME_THREE_FIVE_EIGHT,
                ["dora", None, None],
                three_five_eight=pb.ThreeFiveEightOptions(turn_seconds=3600),
                table=pb.TableOptions(cover_after_seconds=cover_after),
            )
            tables.append(created.table_id)
        soon, later = (mm.watch(t, seat=0) for t in tables[:2])
        seen_soon, seen_later = [await anext(soon)], [await anext(later)]
        beat.cancel()
        assert not (await asyncio.wait_for(feed.get(), 30)).online
        await _until(soon, seen_soon, lambda v: _seat0(v) == (COMPUTER, False))
        now_later = await mm.get_table(tables[1], seat=0)
        assert _seat0(now_later) == (PERSON, False), "its cover_after is longer"
        await _until(later, seen_later, lambda v: _seat0(v) == (COMPUTER, False))
        await asyncio.sleep(2)
        assert _seat0(await mm.get_table(tables[2], seat=0)) == (PERSON, False), "an hour"
        await soon.aclose()
        await later.aclose()
