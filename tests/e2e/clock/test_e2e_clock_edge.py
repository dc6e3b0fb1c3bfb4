"""The clock's API edge: heartbeats, presence queries and voice passes, and bad input.

Every refusal is a clear status with a reason code and changes nothing: a refused
heartbeat brings nobody online.
"""

from __future__ import annotations

import grpc
import jwt
import pytest

from kozyr.api.common.v1 import games_pb2
from kozyr.client import ClockClient, TableClient
from kozyr.runtime.auth import Role
from kozyr.runtime.errors import error_details
from tests.e2e.clock.conftest import ClockStack
from tests.support.tables import token

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(180)]

LIVEKIT = {
    "livekit_url": "wss://voice.example.test",
    "livekit_api_key": "APIkozyrtest",
    "livekit_api_secret": "livekit-test-secret-livekit-test-secret-0123",
}
PLAYERS = ["ana", "bogdan", "chiara"]


async def _refused(call: object) -> tuple[grpc.StatusCode, str | None]:
    with pytest.raises(grpc.aio.AioRpcError) as caught:
        await call  # type: ignore[misc]
    return caught.value.code(), error_details(caught.value).reason


async def _table(stack: ClockStack) -> str:
    async with TableClient(stack.table.target, token("matchmaker", Role.SERVICE)) as mm:
        created = await mm.create_table(games_pb2.GAME_THREE_FIVE_EIGHT, PLAYERS)
    return created.table_id


async def test_voice_pass_lets_exactly_that_player_into_that_room(clock_stack: ClockStack) -> None:
    clock = await clock_stack.start_clock(**LIVEKIT)
    table_id = await _table(clock_stack)
    async with ClockClient(clock.target, token("bogdan")) as bogdan:
        answer = await bogdan.join_voice(table_id)
    assert answer.url == LIVEKIT["livekit_url"]
    assert answer.room == f"{clock_stack.root}-table-{table_id}"
    claims = jwt.decode(answer.token, LIVEKIT["livekit_api_secret"], algorithms=["HS256"])
    assert claims["sub"] == "bogdan"
    assert claims["iss"] == LIVEKIT["livekit_api_key"]
    video = claims["video"]
    assert video["roomJoin"] is True
    assert video["room"] == answer.room
    assert "roomAdmin" not in video
    assert "roomCreate" not in video
    assert video["canPublishSources"] == ["microphone"]
    assert abs(claims["exp"] - answer.expires_at.seconds) <= 1


async def test_voice_refusals(clock_stack: ClockStack) -> None:
    configured = await clock_stack.start_clock(**LIVEKIT)
    bare = await clock_stack.start_clock()
    table_id = await _table(clock_stack)
    async with TableClient(clock_stack.table.target, token("matchmaker", Role.SERVICE)) as mm:
        other = (await mm.create_table(games_pb2.GAME_THREE_FIVE_EIGHT, ["x", "y", "z"])).table_id
    async with (
        ClockClient(configured.target, token("ana")) as ana,
        ClockClient(configured.target, token("dan")) as dan,
        ClockClient(configured.target, token("svc", Role.SERVICE)) as service,
        ClockClient(bare.target, token("ana"), language="ro") as ana_bare,
    ):
        assert await _refused(ana.join_voice(other)) == (
            grpc.StatusCode.PERMISSION_DENIED,
            "NOT_SEATED",
        )
        assert await _refused(dan.join_voice(table_id)) == (
            grpc.StatusCode.PERMISSION_DENIED,
            "NOT_SEATED",
        )
        unknown = "123e4567-e89b-42d3-a456-426614174000"
        assert await _refused(ana.join_voice(unknown)) == (
            grpc.StatusCode.NOT_FOUND,
            "TABLE_NOT_FOUND",
        )
        for bad in ("", "nope", unknown.upper(), f"{{{unknown}}}"):
            assert await _refused(ana.join_voice(bad)) == (
                grpc.StatusCode.INVALID_ARGUMENT,
                "INVALID_TABLE_ID",
            )
        assert await _refused(service.join_voice(table_id)) == (
            grpc.StatusCode.PERMISSION_DENIED,
            "ROLE_NOT_ALLOWED",
        )
        with pytest.raises(grpc.aio.AioRpcError) as caught:
            await ana_bare.join_voice(table_id)
        assert caught.value.code() == grpc.StatusCode.FAILED_PRECONDITION
        details = error_details(caught.value)
        assert details.reason == "VOICE_NOT_CONFIGURED"
        assert "KOZYR_LIVEKIT_URL" in details.message


async def test_heartbeats_and_presence(clock_stack: ClockStack) -> None:
    clock = await clock_stack.start_clock(clock_offline_after_seconds=30)
    async with (
        ClockClient(clock.target, token("ana")) as ana,
        ClockClient(clock.target, token("svc", Role.SERVICE)) as service,
        ClockClient(clock.target, token("odd.name")) as odd,
    ):
        assert await service.presence(["ana", "bogdan"]) == {"ana": False, "bogdan": False}
        first = await ana.heartbeat()
        assert first.came_online
        assert first.offline_after.seconds == 30
        assert first.interval.seconds == 10
        again = await ana.heartbeat()
        assert not again.came_online
        assert await service.presence(["ana", "bogdan"]) == {"ana": True, "bogdan": False}

        assert await _refused(service.heartbeat()) == (
            grpc.StatusCode.PERMISSION_DENIED,
            "ROLE_NOT_ALLOWED",
        )
        assert await _refused(odd.heartbeat()) == (
            grpc.StatusCode.INVALID_ARGUMENT,
            "INVALID_PLAYER_ID",
        )
        assert await _refused(service.presence([])) == (
            grpc.StatusCode.INVALID_ARGUMENT,
            "INVALID_PLAYER_IDS",
        )
        assert await _refused(service.presence([f"p{i}" for i in range(101)])) == (
            grpc.StatusCode.INVALID_ARGUMENT,
            "INVALID_PLAYER_IDS",
        )
        assert await _refused(service.presence(["ana", "has space"])) == (
            grpc.StatusCode.INVALID_ARGUMENT,
            "INVALID_PLAYER_ID",
        )
        async with ClockClient(clock.target, None) as anonymous:
            assert await _refused(anonymous.heartbeat()) == (
                grpc.StatusCode.UNAUTHENTICATED,
                "TOKEN_MISSING",
            )
        assert await service.presence(["odd-name", "ana"]) == {"odd-name": False, "ana": True}
