"""Leavers in matchmaking's log (docs/leavers.md), in-process over real gRPC, PostgreSQL and
NATS: `TableFinished` messages published on the public subjects (each one twice, as a
redelivery would) judge a leaver once per table; the stored lobby events folded afresh give
the replica's records; his ticket is refused with the cooldown's end; an admin lifts it,
and nobody else may."""

from __future__ import annotations

import asyncio
import uuid

import grpc
import nats
import pytest

from kozyr.api.common.v1 import games_pb2
from kozyr.api.table.v1 import events_pb2
from kozyr.bus.subjects import PUBLIC_CHANNEL
from kozyr.client import MatchmakingClient
from kozyr.matchmaking.events import decode
from kozyr.matchmaking.lobby import fold
from kozyr.runtime.auth import Role
from kozyr.runtime.errors import error_details
from tests.integration.matchmaking.conftest import RunningMatchmaking
from tests.support.tables import token

pytestmark = pytest.mark.integration
PLAYERS = ("ana", "bo", "carla")


def finished(table_id: str, leaver: str) -> bytes:
    """A 3-5-8 TableFinished where `leaver` was covered from his 5th turn to the end."""
    results = [
        events_pb2.SeatResult(
            seat=seat, player_id=player, place=seat + 1, score=10 - seat, turns=30,
            covered_turns=26 if player == leaver else 0,
            turns_since_cover=26 if player == leaver else 0, covered_at_end=player == leaver,
        )
        for seat, player in enumerate(PLAYERS)
    ]  # fmt: skip
    event = events_pb2.PublicTableEvent(
        table_id=table_id,
        table_finished=events_pb2.TableFinished(game_id="three_five_eight", results=results),
    )
    return event.SerializeToString()


async def publish_twice(nats_url: str, root: str, table_id: str, leaver: str) -> None:
    nc = await nats.connect(nats_url)
    try:
        js = nc.jetstream()
        subject = f"{root}.{PUBLIC_CHANNEL}.table.{table_id}.TableFinished"
        for _ in range(2):
            await js.publish(subject, finished(table_id, leaver))
    finally:
        await nc.close()


async def until_judged(matchmaking: RunningMatchmaking, tables: int) -> list[str]:
    """The lobby's event types once `tables` tables have ended in its log."""
    async with asyncio.timeout(30):
        while True:
            types = [e.type for e in await matchmaking.lobby_events()]
            if types.count("TableEnded") >= tables:
                return types
            await asyncio.sleep(0.05)


async def test_a_leaver_is_judged_once_per_table_refused_then_lifted_by_an_admin(
    matchmaking: RunningMatchmaking, nats_url: str, subject_root: str
) -> None:
    first, second = str(uuid.uuid4()), str(uuid.uuid4())
    await publish_twice(nats_url, subject_root, first, "ana")
    await until_judged(matchmaking, 1)
    ana = matchmaking.client("ana", retry=False)
    status = await ana.leaver_status()
    assert status.strikes == 1
    assert not status.HasField("cooldown_until"), "the first time: a warning only"

    await publish_twice(nats_url, subject_root, second, "ana")
    types = await until_judged(matchmaking, 2)
    assert types.count("AbandonJudged") == 2, "each table judged once, though sent twice"
    stored = [decode(e.type, dict(e.data)) for e in await matchmaking.lobby_events()]
    assert fold(stored).leavers == matchmaking.service.book.lobby.leavers, "replayed: same"
    tables = await ana.my_tables()
    assert [t.abandoned for t in tables] == [True, True]
    assert all(t.place == 3 or t.rating_change < 0 for t in tables)

    status = await ana.leaver_status()
    assert status.strikes == 2
    until = status.cooldown_until.ToDatetime()
    with pytest.raises(grpc.aio.AioRpcError) as refused:
        await ana.enter_queue(games_pb2.GAME_THREE_FIVE_EIGHT)
    details = error_details(refused.value)
    assert (details.code, details.reason) == (
        grpc.StatusCode.FAILED_PRECONDITION,
        "ABANDON_COOLDOWN",
    )
    assert until.strftime("%Y-%m-%d %H:%M:%S") in details.messages["en"]
    bo = matchmaking.client("bo", retry=False)
    assert (await bo.leaver_status()).strikes == 0

    with pytest.raises(grpc.aio.AioRpcError) as not_admin:
        await bo.lift_leaver_penalty("ana", "he is my friend")
    assert not_admin.value.code() == grpc.StatusCode.PERMISSION_DENIED
    admin = MatchmakingClient(matchmaking.target, token("root", Role.ADMIN), retry=False)
    matchmaking.clients.append(admin)
    for player, reason, wanted in (
        ("ana", "", "INVALID_LIFT_REASON"),
        ("", "x", "INVALID_PLAYER_ID"),
    ):
        with pytest.raises(grpc.aio.AioRpcError) as bad:
            await admin.lift_leaver_penalty(player, reason)
        assert error_details(bad.value).reason == wanted
    assert (await ana.leaver_status()).strikes == 2, "the refusals changed nothing"

    lifted = await admin.lift_leaver_penalty("ana", "a power cut", request_id="appeal-1")
    assert lifted.lifted
    assert lifted.leaver.strikes == 1
    assert not lifted.leaver.HasField("cooldown_until")
    again = await admin.lift_leaver_penalty("ana", "a power cut", request_id="appeal-1")
    assert not again.lifted, "a retry lifts nothing more"
    assert (await ana.leaver_status()).strikes == 1
    ticket = await ana.enter_queue(games_pb2.GAME_THREE_FIVE_EIGHT)
    assert ticket.ticket_id
