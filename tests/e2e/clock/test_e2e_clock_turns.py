"""Turn clocks end to end: the table service and clock replicas as processes.

Turns last the minimum 10 s; the clocks run `OFFSET` seconds ahead of the wall clock
(KOZYR_CLOCK_TIME_OFFSET_SECONDS), so each deadline fires a fraction of a second after
its turn starts: whole games run out by expiries in minutes, not hours.
"""

from __future__ import annotations

import asyncio
import statistics
from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta

import grpc
import nats
import pytest

from kozyr.api.common.v1 import games_pb2
from kozyr.api.table.v1 import events_pb2, views_pb2
from kozyr.api.table.v1 import table_service_pb2 as pb
from kozyr.bus.schedules import schedule_stream_name
from kozyr.client import TableClient
from kozyr.games.decider import CLIENT_SEED
from kozyr.runtime.auth import Role
from kozyr.runtime.errors import error_details
from tests.e2e.clock.conftest import ClockServiceProcess, ClockStack
from tests.e2e.clock.tap import EXPIRED, PublicTap
from tests.e2e.moderation import kozyr_cli
from tests.support.tables import token

pytestmark = [pytest.mark.e2e]

TURN_SECONDS = 10
OFFSET = 9.95
"""Each turn runs out 0.05 s after it starts (for the clock)."""
PLAYERS = ["ana", "bogdan", "chiara"]
QUIET = {"clock_cover_after_seconds": 3600}
"""Nobody heartbeats in these tests: no seat must be covered while they run."""


async def _open_tables(
    stack: ClockStack, count: int, turn_seconds: int = TURN_SECONDS, seed_window: int = 0
) -> list[str]:
    """`seed_window`: the first deal's (TableOptions.seed_window_seconds; 0: none)."""
    options = pb.ThreeFiveEightOptions(turn_seconds=turn_seconds)
    table = pb.TableOptions(seed_window_seconds=seed_window)
    async with TableClient(stack.table.target, token("matchmaker", Role.SERVICE)) as mm:
        created = await asyncio.gather(
            *(
                mm.create_table(
                    games_pb2.GAME_THREE_FIVE_EIGHT, PLAYERS, table=table, three_five_eight=options
                )
                for _ in range(count)
            )
        )
    return [c.table_id for c in created]


@pytest.fixture
async def tap(clock_stack: ClockStack) -> AsyncIterator[PublicTap]:
    tapped = PublicTap(clock_stack.table.nats_url, clock_stack.root)
    await tapped.start()
    yield tapped
    await tapped.close()


THREE_FIVE_EIGHT_KINDS = {CLIENT_SEED, "contract", "discard", "exchange_give", "play"}
"""Every kind of 3-5-8 decision the clock can time: the first deal's seed window (the
table's own turn, at a table that has one), then the game's. The exchange first comes in
deal 2: the first deal has none (RULES.md)."""


@pytest.mark.timeout(300)
async def test_expiries_alone_carry_a_3_5_8_table_through_every_kind_of_turn(
    clock_stack: ClockStack, tap: PublicTap
) -> None:
    """Nobody plays: the clock's expiries alone play two whole deals — the first deal's
    seed window (nobody sets a client seed: the expiry deals it), every kind of 3-5-8
    turn, each deal scored and the next one dealt — and the table verifies.

    Why two deals and not the 18 of a game (about 950 turns at NATS's 250 ms schedule
    tick: four minutes): what the clock and the table do per turn does not change from
    one deal to the next, and that is what this test is about. That the default moves
    alone finish a 3-5-8 game is proved on the pure rules
    (tests/unit/games/test_three_five_eight_rules.py, 18 deals of default moves), and
    that expiries alone finish a game through the services — the last turn's expiry,
    the table's end, the clock setting no further timer — by the Khözör match below,
    whose ending takes the same path (the table's `is_over`, whatever the game).
    """
    await clock_stack.start_clock(clock_time_offset_seconds=OFFSET, **QUIET)
    (table_id,) = await _open_tables(clock_stack, 1, seed_window=TURN_SECONDS)
    started = asyncio.get_running_loop().time()

    def two_deals_and_every_kind_expired() -> bool:
        kinds = {
            s.event.turn_started.number: s.event.turn_started.kind
            for s in tap.of(table_id, "turn_started")
        }
        expired = {kinds[n] for n in tap.expired(table_id) if n in kinds}
        return len(tap.of(table_id, "deal_ended")) >= 2 and expired >= THREE_FIVE_EIGHT_KINDS

    await tap.wait_for(two_deals_and_every_kind_expired, seconds=240)
    took = asyncio.get_running_loop().time() - started
    ends, expired = tap.ends(table_id), tap.expired(table_id)
    assert ends == expired, "every turn ended by its expiry"
    assert set(expired.values()) == {1}, "and each once"
    kinds = {
        s.event.turn_started.number: s.event.turn_started.kind
        for s in tap.of(table_id, "turn_started")
    }
    assert {kinds[n] for n in expired} >= THREE_FIVE_EIGHT_KINDS, "every kind of turn expired"
    late = tap.lateness(table_id, OFFSET)
    print(
        f"\n{len(expired)} turns expired in {took:.0f} s; lateness (to the relay's publish) "
        f"p50 {statistics.median(late):.3f} s, max {max(late):.3f} s"
    )
    verified = await kozyr_cli(clock_stack.table.database_url, "verify", table_id)
    assert verified.exit_code == 0, verified.stdout + verified.stderr


async def _schedules_set(stack: ClockStack, count: int) -> None:
    """Until the clocks have set `count` turn timers (one per table)."""
    nc = await nats.connect(stack.table.nats_url)
    try:
        js = nc.jetstream()
        subjects = f"{stack.root}.clock.schedule.turn.*"
        async with asyncio.timeout(60):
            while True:
                info = await js.stream_info(
                    schedule_stream_name(stack.root), subjects_filter=subjects
                )
                if len(info.state.subjects or {}) >= count:
                    return
                await asyncio.sleep(0.05)
    finally:
        await nc.close()


def _once_each(tap: PublicTap, tables: list[str]) -> None:
    for table_id in tables:
        ends = tap.ends(table_id)
        assert all(n == 1 for n in ends.values()), f"{table_id}: a turn ended twice {ends}"


@pytest.mark.timeout(300)
async def test_sigkill_with_50_pending_deadlines_then_restart_expires_each_once(
    clock_stack: ClockStack, tap: PublicTap
) -> None:
    # Each turn runs out 6 s after it starts: room for opening the second wave and
    # killing the clock before it is due, even on a loaded machine.
    offset = TURN_SECONDS - 6.0
    clock = await clock_stack.start_clock(clock_time_offset_seconds=offset, **QUIET)
    tables = await _open_tables(clock_stack, 25)
    await asyncio.sleep(3.0)  # a second wave, due 3 s after the first
    tables += await _open_tables(clock_stack, 25)
    await _schedules_set(clock_stack, 50)
    clock.kill()
    killed_at = datetime.now(UTC)
    await tap.wait_for(lambda: all(tap.of(t, "turn_started") for t in tables), seconds=30)
    loop = asyncio.get_running_loop()
    firsts = {t: tap.of(t, "turn_started")[0].event.turn_started for t in tables}
    due_at = {
        t: f.deadline.ToDatetime(tzinfo=UTC) - timedelta(seconds=offset) for t, f in firsts.items()
    }
    dues = sorted(due_at.values())
    # On a loaded machine the first wave may fall due before the clock is killed (the
    # live clock then expires it, once, as it should): what is under test is every
    # deadline still pending at the kill. The second wave, opened 3 s later, is.
    pending = sorted((due, t) for t, due in due_at.items() if due > killed_at)
    assert len(pending) >= 25, f"only {len(pending)} deadlines were pending at the kill"
    down_until = pending[len(pending) // 2 - 1][0] + timedelta(seconds=0.5)  # half of them
    await asyncio.sleep(max(0.0, (down_until - datetime.now(UTC)).total_seconds()))
    assert not any(tap.expired(t) for _, t in pending), "nothing expires while the clock is down"
    passed = sum(due < datetime.now(UTC) for due in dues)
    restarted = loop.time()
    await clock.start()
    back = datetime.now(UTC)
    took = loop.time() - restarted
    print(f"\n{passed} of 50 deadlines passed while down; the restart took {took:.2f} s")
    await tap.wait_for(lambda: all(tap.expired(t)[firsts[t].number] for t in tables), seconds=120)
    _once_each(tap, tables)
    missed, kept = [], []  # seconds late: after the restart / after the deadline
    for table_id in tables:
        first = firsts[table_id]
        ended = next(
            s for s in tap.of(table_id, "turn_ended") if s.event.turn_ended.number == first.number
        )
        assert ended.event.turn_ended.how == EXPIRED
        due = due_at[table_id]
        if due <= killed_at:  # expired by the live clock
            continue
        if due < back:
            missed.append((ended.at - back).total_seconds())
        else:
            kept.append((ended.at - due).total_seconds())
    print(
        f"deadlines passed while down: expired {max(missed):.2f} s at most after the clock "
        f"answered again; the others {max(kept, default=0):.2f} s at most after their deadline"
    )


@pytest.mark.timeout(300)
async def test_two_replicas_share_the_timers_and_one_survives_the_other(
    clock_stack: ClockStack, tap: PublicTap
) -> None:
    settings = {"clock_time_offset_seconds": TURN_SECONDS - 0.5, **QUIET}
    first = await clock_stack.start_clock(**settings)
    second = await clock_stack.start_clock(**settings)
    tables = await _open_tables(clock_stack, 20)
    await tap.wait_for(lambda: all(len(tap.expired(t)) >= 4 for t in tables), seconds=120)
    first.kill()
    done_before = {t: len(tap.expired(t)) for t in tables}
    await tap.wait_for(
        lambda: all(len(tap.expired(t)) >= done_before[t] + 4 for t in tables), seconds=120
    )
    _once_each(tap, tables)
    by_first, by_second = _expiries_logged(first), _expiries_logged(second)
    print(f"\nturns expired by replica 1: {by_first}, by replica 2: {by_second}")
    assert by_first > 0, "both replicas took timers"
    assert by_second > 0
    second.stop()


def _expiries_logged(clock: ClockServiceProcess) -> int:
    return clock.log_path.read_text().count('"turn expired"')


async def _turn_to_act(
    stack: ClockStack, tap: PublicTap, table_id: str, early: float
) -> tuple[views_pb2.TurnInfo, views_pb2.TableView]:
    """The open turn and its seat's view, read with time left to act `early` seconds
    before its deadline (a loaded machine may read a turn too late: then the next one)."""
    for _ in range(10):
        async with TableClient(stack.table.target, token("admin", Role.ADMIN)) as admin:
            turn = (await admin.get_table(table_id)).turn
        async with TableClient(stack.table.target, token(PLAYERS[turn.seats[0]])) as me:
            view = await me.get_table(table_id)
        due = turn.deadline.ToDatetime(tzinfo=UTC) - timedelta(seconds=OFFSET_IN_TIME)
        if view.turn.number == turn.number and (due - datetime.now(UTC)).total_seconds() > early:
            return turn, view
        await tap.wait_for(
            lambda number=turn.number: bool(tap.ends(table_id)[number]),  # type: ignore[misc]
            seconds=30,
        )
    raise AssertionError("no turn could be read in time to act on it")


async def _act_at(stack: ClockStack, tap: PublicTap, table_id: str, early: float) -> bool:
    """The seat to act moves `early` seconds before the clock's deadline (negative: after);
    True when the move was taken, False when refused as stale (the turn had expired)."""
    turn, view = await _turn_to_act(stack, tap, table_id, early)
    player = PLAYERS[turn.seats[0]]
    async with TableClient(stack.table.target, token(player)) as me:
        due = turn.deadline.ToDatetime(tzinfo=UTC) - timedelta(seconds=OFFSET_IN_TIME)
        await asyncio.sleep(max(0.0, (due - datetime.now(UTC)).total_seconds() - early))
        refusal = None
        try:
            await me.submit(table_id, view.legal_actions[0], expected_version=view.version)
        except grpc.aio.AioRpcError as refused:
            refusal = (refused.code(), error_details(refused).reason)
        taken = refusal is None
        assert taken or refusal == (grpc.StatusCode.ABORTED, "STALE_VERSION"), refusal
    await tap.wait_for(lambda: bool(tap.ends(table_id)[turn.number]), seconds=30)
    how = tap.of(table_id, "turn_ended")
    ended = [s.event.turn_ended for s in how if s.event.turn_ended.number == turn.number]
    assert len([e for e in ended if e.how != events_pb2.TURN_END_SUPERSEDED]) == 1
    assert (ended[-1].how == EXPIRED) is not taken, "the move or the expiry, never both"
    return taken


OFFSET_IN_TIME = TURN_SECONDS - 1.0
"""The deadline test's turns run out 1 s after they start."""


@pytest.mark.timeout(300)
async def test_a_move_just_before_the_deadline_stands_and_one_after_is_refused(
    clock_stack: ClockStack, tap: PublicTap
) -> None:
    await clock_stack.start_clock(clock_time_offset_seconds=OFFSET_IN_TIME, **QUIET)
    (table_id,) = await _open_tables(clock_stack, 1)
    await tap.wait_for(lambda: bool(tap.of(table_id, "turn_started")), seconds=30)
    before = [await _act_at(clock_stack, tap, table_id, early=0.010) for _ in range(4)]
    # NATS fires schedules on a 250 ms tick: a move a whole second late meets an expired
    # turn however the tick falls (100 ms late could still beat the firing).
    after = [await _act_at(clock_stack, tap, table_id, early=-1.0) for _ in range(4)]
    print(
        f"\n10 ms before the deadline: {before.count(True)}/4 moves taken, the rest came "
        f"too late and were refused; 1 s after: {after.count(True)}/4 taken"
    )
    assert after == [False] * 4, "a move after the deadline finds the turn expired"


KHOZOR_PLAYERS = [f"p{i}" for i in range(8)]


@pytest.mark.timeout(1800)
async def test_a_khozor_match_nobody_plays_ends_by_expiries_and_verifies(
    clock_stack: ClockStack, tap: PublicTap
) -> None:
    """The opener's confirmation is a turn of its own, timed and expired like the others."""
    await clock_stack.start_clock(clock_time_offset_seconds=OFFSET, **QUIET)
    async with TableClient(clock_stack.table.target, token("matchmaker", Role.SERVICE)) as mm:
        created = await mm.create_table(
            games_pb2.GAME_KHOZOR_TEAMS,
            KHOZOR_PLAYERS,
            khozor_teams=pb.KhozorTeamsOptions(turn_seconds=TURN_SECONDS),
        )
    table_id = created.table_id
    started = asyncio.get_running_loop().time()
    await tap.wait_for(lambda: tap.finished(table_id), seconds=1700)
    took = asyncio.get_running_loop().time() - started
    ends, expired = tap.ends(table_id), tap.expired(table_id)
    assert ends == expired, "every turn ended by its expiry"
    assert set(expired.values()) == {1}, "and each once"
    kinds = {
        s.event.turn_started.number: s.event.turn_started.kind
        for s in tap.of(table_id, "turn_started")
    }
    confirmations = [n for n in expired if kinds[n] == "confirm_opener"]
    assert confirmations, "the opener's confirmation was expired too"
    print(f"\n{len(expired)} turns expired in {took:.0f} s ({len(confirmations)} confirmations)")
    verified = await kozyr_cli(clock_stack.table.database_url, "verify", table_id)
    assert verified.exit_code == 0, verified.stdout + verified.stderr
