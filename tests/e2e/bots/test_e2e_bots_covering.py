"""A seat covered by the clock is played by the bots until its player retakes it by
acting (processes: table, clock, bots; real PostgreSQL and NATS with message schedules).

Ana plays seat 0 of a 3-5-8 table whose other seats are computers. Her heartbeats stop:
the clock covers her seat (offline after 1 s, covered 1 s later) and the bots play it.
She comes back and, at her seat's next turn, acts before the bot (which thinks 1.5 s):
that move is her retake. The bot's move for that turn, computed from the view before
it, is refused — STALE_VERSION or SEAT_NOT_COMPUTER — never applied on top of hers (the
test sends it as the bots identity with the bot's own request id, so the race is not
left to timing). Then she plays on. From the log: every bot move was made while its
seat was computer-controlled; after the retake no `bots:` request id for her seat.
"""

from __future__ import annotations

import asyncio
import random
from collections.abc import AsyncIterator, Callable

import grpc
import pytest

from kozyr.api.common.v1 import games_pb2, seats_pb2
from kozyr.api.table.v1 import table_service_pb2 as pb
from kozyr.api.table.v1 import views_pb2
from kozyr.client import ClockClient, TableClient
from kozyr.runtime.auth import BOTS_SUBJECT, Role
from kozyr.runtime.errors import error_details
from tests.e2e.bots.conftest import BotsStack
from tests.e2e.bots.games import bot_turns, computer, open_table
from tests.e2e.clock.conftest import ClockStack
from tests.e2e.moderation import kozyr_cli
from tests.e2e.published import stored_events
from tests.support.tables import token

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(240)]

PERSON, COMPUTER = seats_pb2.SEAT_CONTROL_PERSON, seats_pb2.SEAT_CONTROL_COMPUTER
HEARTBEAT_EVERY = 0.25
THINK_SECONDS = 1.5
WAIT_SECONDS = 60.0
RACES = 5
"""Seat-0 turns at which Ana tries to be first (the real bot may win one by chance)."""


async def _beat(target: str, player: str) -> None:
    async with ClockClient(target, token(player)) as me:
        while True:
            await me.heartbeat()
            await asyncio.sleep(HEARTBEAT_EVERY)


async def _next(
    stream: AsyncIterator[views_pb2.TableView], shown: Callable[[views_pb2.TableView], bool]
) -> views_pb2.TableView:
    """Ana's next view for which `shown` holds."""
    async with asyncio.timeout(WAIT_SECONDS):
        while not shown(view := await anext(stream)):
            pass
    return view


def _her_turn(view: views_pb2.TableView) -> bool:
    return 0 in view.turn.seats and not view.finished


def _her_turn_after(version: int) -> Callable[[views_pb2.TableView], bool]:
    return lambda view: view.version > version and _her_turn(view)


async def _her_next_turn(
    stream: AsyncIterator[views_pb2.TableView], last: pb.SubmitActionResponse | None
) -> views_pb2.TableView:
    """Her next turn after her move `last` answered (None: before her first): the
    answer's own view when it is her turn again (she leads the next trick: nobody else
    moves, so the stream shows nothing newer), else the first newer view of the stream
    that is her turn — the stream may still hold views from before that move (a presence
    change pushes one), which show her turn already played."""
    if last is not None and _her_turn(last.view):
        return last.view
    return await _next(stream, _her_turn_after(last.view.version if last else 0))


async def _until_a_bot_moved_for(stack: BotsStack, table_id: str, seat: int) -> None:
    async with asyncio.timeout(WAIT_SECONDS):
        while True:
            if seat in (await bot_turns(stack, table_id)).values():
                return
            await asyncio.sleep(0.2)


async def _until_online(clock_target: str, player: str) -> None:
    async with ClockClient(clock_target, token(player)) as asker, asyncio.timeout(30):
        while True:
            if (await asker.presence([player]))[player]:
                return
            await asyncio.sleep(0.1)


async def _move(
    me: TableClient, table_id: str, view: views_pb2.TableView, rng: random.Random
) -> pb.SubmitActionResponse:
    """One of her listed moves, pinned to her view."""
    return await me.submit(table_id, rng.choice(view.legal_actions), expected_version=view.version)


async def _race(
    me: TableClient,
    bots: TableClient,
    table_id: str,
    view: views_pb2.TableView,
    rng: random.Random,
) -> pb.SubmitActionResponse | None:
    """At a covered turn of her seat: the bot reads its view, Ana moves, then the bot's
    move arrives. Her move's answer; None when the real bot was first (no race this
    turn)."""
    seen_by_bot = await bots.get_table(table_id, seat=0)
    if seen_by_bot.turn.number != view.turn.number or 0 not in seen_by_bot.turn.seats:
        return None
    try:
        done = await _move(me, table_id, view, rng)
    except grpc.aio.AioRpcError as error:
        if error.code() in (grpc.StatusCode.ABORTED, grpc.StatusCode.FAILED_PRECONDITION):
            return None
        raise
    assert done.view.seats[0].control == PERSON, "acting is the retake"
    with pytest.raises(grpc.aio.AioRpcError) as refused:
        await bots.submit(
            table_id,
            seen_by_bot.legal_actions[0],
            request_id=f"bots:{table_id}:{seen_by_bot.turn.number}:0",
            expected_version=seen_by_bot.version,
            seat=0,
        )
    assert error_details(refused.value).reason in {"STALE_VERSION", "SEAT_NOT_COMPUTER"}
    return done


async def test_a_covered_seat_is_played_by_a_bot_until_its_player_retakes_it(
    covered_stack: tuple[BotsStack, ClockStack],
) -> None:
    stack, clocks = covered_stack
    clock = await clocks.start_clock(clock_offline_after_seconds=1, clock_cover_after_seconds=1)
    await stack.start_bots(bots_think_seconds=THINK_SECONDS)
    rng = random.Random(5)
    beat = asyncio.create_task(_beat(clock.target, "ana"))
    await _until_online(clock.target, "ana")
    table_id = await open_table(
        stack,
        games_pb2.GAME_THREE_FIVE_EIGHT,
        ["ana", computer("normal"), computer("easy")],
        options=pb.ThreeFiveEightOptions(turn_seconds=3600),  # no expiry interferes
    )
    async with (
        TableClient(stack.table.target, token("ana")) as me,
        TableClient(stack.table.target, token(BOTS_SUBJECT, Role.SERVICE)) as bots,
    ):
        stream = me.watch(table_id)
        last = None
        for _ in range(2):  # online: she plays her turns herself
            last = await _move(me, table_id, await _her_next_turn(stream, last), rng)

        beat.cancel()  # gone: covered, and the bots play her seat
        await _next(stream, lambda v: v.seats[0].control == COMPUTER)
        await _until_a_bot_moved_for(stack, table_id, 0)

        beat = asyncio.create_task(_beat(clock.target, "ana"))  # back
        for _ in range(RACES):
            view = await _next(stream, lambda v: _her_turn(v) and v.seats[0].control == COMPUTER)
            if (won := await _race(me, bots, table_id, view, rng)) is not None:
                last = won
                break
        else:
            pytest.fail(f"the bot was first at {RACES} of her turns")

        for _ in range(3):  # hers again: she plays on
            view = await _her_next_turn(stream, last)
            assert view.seats[0].control == PERSON
            last = await _move(me, table_id, view, rng)
        await stream.aclose()
    beat.cancel()
    await _assert_bots_moved_only_computer_seats(stack, table_id)


async def _assert_bots_moved_only_computer_seats(stack: BotsStack, table_id: str) -> None:
    """Replaying seat control through the log: every `bots:` move is of a seat a
    computer played at that moment; the bot played the covered seat; after the retake,
    no bot move of seat 0."""
    control = {0: "person", 1: "computer", 2: "computer"}
    bot_moves_of_zero: list[int] = []
    changes_of_zero: list[tuple[int, str]] = []
    for event in await stored_events(stack.table.database_url, table_id):
        if event.type == "SeatControlChanged":
            control[event.data["seat"]] = event.data["control"]
            if event.data["seat"] == 0:
                changes_of_zero.append((event.position, event.data["control"]))
        request = str(event.metadata.get("request_id", ""))
        if request.startswith("bots:"):
            seat = int(request.rsplit(":", 1)[1])
            assert control[seat] == "computer", f"{request} applied while {control[seat]}"
            if seat == 0:
                bot_moves_of_zero.append(event.position)
    covered, retaken = changes_of_zero[-2:]
    assert (covered[1], retaken[1]) == ("computer", "person")
    assert any(covered[0] < at < retaken[0] for at in bot_moves_of_zero)
    assert all(at < retaken[0] for at in bot_moves_of_zero), "a bot moved after the retake"
    verified = await kozyr_cli(stack.table.database_url, "verify", table_id, "--json")
    assert verified.exit_code == 0, verified.stdout + verified.stderr
    assert verified.json()["ok"] is True
