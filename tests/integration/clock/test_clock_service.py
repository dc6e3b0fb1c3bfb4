"""The clock service in-process over real gRPC, beside a real table service: the edges
of its API (voice at a finished table, the size of a presence query), and covering a
player at his other tables once one of his tables has finished.

Tables that must finish play the test-only two-seat game "higher card wins"
(tests/support/higher_card, sixteen moves), which the table service plays like any
other once its package is imported.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Sequence

import grpc
import pytest

from kozyr.api.common.v1 import seats_pb2
from kozyr.api.table.v1 import table_service_pb2 as pb
from kozyr.bus.streams import jetstream_name
from kozyr.bus.subjects import PUBLIC_CHANNEL
from kozyr.client import ClockClient, TableClient
from kozyr.runtime.auth import Role
from kozyr.runtime.errors import ErrorDetails, error_details
from tests.integration.clock.conftest import running_clock
from tests.integration.table.conftest import RunningTableService
from tests.support.bus import until_handled
from tests.support.clock import beating, until_presence
from tests.support.higher_card import CODE
from tests.support.tables import play_to_the_end, token

pytestmark = [pytest.mark.integration, pytest.mark.timeout(120)]

LIVEKIT = {
    "livekit_url": "wss://voice.example.test",
    "livekit_api_key": "APIkozyrtest",
    "livekit_api_secret": "livekit-test-secret-livekit-test-secret-0123",
}
COVER_AFTER = 1
WAIT_SECONDS = 30.0


async def _open(table: RunningTableService, players: Sequence[str], cover_after: int = 0) -> str:
    """A "higher card wins" table of `players` (cover_after 0: the clock's default)."""
    async with TableClient(table.target, token("matchmaker", Role.SERVICE)) as service:
        created = await service.create_table(
            CODE,  # type: ignore[arg-type]  # a game of the tests only: no value of the enum
            players,
            table=pb.TableOptions(cover_after_seconds=cover_after),
        )
    return created.table_id


async def _refusal(call: object) -> ErrorDetails:
    with pytest.raises(grpc.aio.AioRpcError) as caught:
        await call  # type: ignore[misc]
    return error_details(caught.value)


async def test_voice_is_refused_once_the_table_has_finished(
    clock_table: RunningTableService, clock_nats_url: str, subject_root: str
) -> None:
    """A seated player joins his table's voice while it is played, and is refused with
    TABLE_FINISHED, in his language, once it is over."""
    players = ["ana", "bogdan"]
    async with running_clock(clock_table, clock_nats_url, subject_root, **LIVEKIT) as clock:
        table_id = await _open(clock_table, players)
        async with ClockClient(clock.target, token("ana"), language="ro") as ana:
            assert (await ana.join_voice(table_id)).room.endswith(table_id)
            assert (await play_to_the_end(clock_table.target, table_id, players)).finished
            refused = await _refusal(ana.join_voice(table_id))
    assert (refused.code, refused.reason) == (grpc.StatusCode.FAILED_PRECONDITION, "TABLE_FINISHED")
    assert list(refused.messages) == ["ro", "en", "it"], "his language first"
    assert refused.messages["ro"] == f"Masa {table_id} s-a încheiat: canalul ei vocal este închis."


async def test_voice_checks_the_seat_before_saying_voice_is_not_set_up(
    clock_table: RunningTableService, clock_nats_url: str, subject_root: str
) -> None:
    """Authorisation first: on a clock without LiveKit, a player with no seat at the
    table is told NOT_SEATED (not that voice is missing here); the seated one learns
    VOICE_NOT_CONFIGURED."""
    async with running_clock(clock_table, clock_nats_url, subject_root) as bare:
        table_id = await _open(clock_table, ["ana", "bogdan"])
        async with (
            ClockClient(bare.target, token("dan")) as dan,
            ClockClient(bare.target, token("ana")) as ana,
        ):
            stranger = await _refusal(dan.join_voice(table_id))
            seated = await _refusal(ana.join_voice(table_id))
    assert (stranger.code, stranger.reason) == (grpc.StatusCode.PERMISSION_DENIED, "NOT_SEATED")
    assert (seated.code, seated.reason) == (
        grpc.StatusCode.FAILED_PRECONDITION,
        "VOICE_NOT_CONFIGURED",
    )


async def test_presence_answers_up_to_100_players_at_once(
    clock_table: RunningTableService, clock_nats_url: str, subject_root: str
) -> None:
    """The limit is inclusive: 100 ids are answered, 101 refused with the limit."""
    ids = [f"p{i}" for i in range(101)]
    async with (
        running_clock(clock_table, clock_nats_url, subject_root) as clock,
        ClockClient(clock.target, token("svc", Role.SERVICE)) as service,
    ):
        assert await service.presence(ids[:100]) == dict.fromkeys(ids[:100], False)
        refused = await _refusal(service.presence(ids))
    assert (refused.code, refused.reason) == (
        grpc.StatusCode.INVALID_ARGUMENT,
        "INVALID_PLAYER_IDS",
    )
    assert dict(refused.metadata) == {"max": "100", "count": "101"}


async def test_a_finished_table_leaves_him_covered_at_his_other_tables(
    clock_table: RunningTableService, clock_nats_url: str, subject_root: str
) -> None:
    """Dora plays two tables and one of them ends; then she goes away: the clock still
    covers her seat at the other one after its cover_after (and not Eva's, who stays)."""
    players = ["dora", "eva"]
    clock_settings = {
        "clock_offline_after_seconds": 1,
        "clock_cover_after_seconds": 3600,  # the tables' own cover_after counts
    }
    async with (
        running_clock(clock_table, clock_nats_url, subject_root, **clock_settings) as clock,
        beating(clock.target, "eva"),
    ):
        async with beating(clock.target, "dora"):
            await until_presence(clock.target, {"dora": True, "eva": True})
            finished = await _open(clock_table, players, COVER_AFTER)
            still_open = await _open(clock_table, players, COVER_AFTER)
            assert (await play_to_the_end(clock_table.target, finished, players)).finished
            public = jetstream_name(PUBLIC_CHANNEL, subject_root)  # the finish read:
            await until_handled(clock_table.service.store, clock_nats_url, public, "clock-public")
        # Dora's app is closed.
        async with TableClient(clock_table.target, token("admin", Role.ADMIN)) as admin:
            watch = admin.watch(still_open)
            try:
                async with asyncio.timeout(WAIT_SECONDS):
                    async for view in watch:
                        if view.seats[0].control == seats_pb2.SEAT_CONTROL_COMPUTER:
                            break
            finally:
                await watch.aclose()
    assert not view.seats[0].online
    assert (view.seats[1].control, view.seats[1].online) == (seats_pb2.SEAT_CONTROL_PERSON, True)


SEAT_EVENTS = ("SeatPresenceChanged", "SeatControlChanged")


async def test_a_player_without_a_heartbeat_is_unknown_until_his_cover_deadline(
    clock_table: RunningTableService, clock_nats_url: str, subject_root: str
) -> None:
    """Issue 26: Gus's app heartbeats, Fay's has sent none yet. The table opens: Gus is
    recorded online at once; Fay's seat shows PRESENCE_UNKNOWN — never offline — until
    her cover deadline, when the clock records her offline and covers her seat."""
    players, cover_after = ["fay", "gus"], 2
    clock_settings = {"clock_offline_after_seconds": 1, "clock_cover_after_seconds": 3600}
    async with (
        running_clock(clock_table, clock_nats_url, subject_root, **clock_settings) as clock,
        beating(clock.target, "gus"),
    ):
        await until_presence(clock.target, {"fay": False, "gus": True})
        table_id = await _open(clock_table, players, cover_after)
        async with TableClient(clock_table.target, token("admin", Role.ADMIN)) as admin:
            first = await admin.get_table(table_id)
            assert first.seats[0].presence == seats_pb2.PRESENCE_UNKNOWN
            assert not first.seats[0].online
            watch = admin.watch(table_id)
            try:
                async with asyncio.timeout(WAIT_SECONDS):
                    async for view in watch:
                        if view.seats[1].presence == seats_pb2.PRESENCE_ONLINE:
                            break
                    assert view.seats[0].presence == seats_pb2.PRESENCE_UNKNOWN
                    async for view in watch:
                        if view.seats[0].control == seats_pb2.SEAT_CONTROL_COMPUTER:
                            break
            finally:
                await watch.aclose()
            assert view.seats[0].presence == seats_pb2.PRESENCE_OFFLINE
            history = await admin.history(table_id)
    opened = history[0].recorded_at.ToDatetime()
    story = [(e.type, json.loads(e.data_json), e.recorded_at.ToDatetime()) for e in history]
    seat_events = [(kind, data) for kind, data, _ in story if kind in SEAT_EVENTS]
    assert seat_events == [
        ("SeatPresenceChanged", {"seat": 1, "online": True}),
        ("SeatPresenceChanged", {"seat": 0, "online": False}),
        ("SeatControlChanged", {"seat": 0, "control": "computer"}),
    ]
    offline_at = next(at for kind, data, at in story if data == {"seat": 0, "online": False})
    assert (offline_at - opened).total_seconds() >= cover_after - 0.3, "not before her deadline"
