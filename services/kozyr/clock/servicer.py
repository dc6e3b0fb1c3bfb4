"""The gRPC edge of the clock service: heartbeats, presence queries, voice passes."""

from __future__ import annotations

import asyncio
from datetime import timedelta
from typing import Any

import grpc
from google.protobuf.duration_pb2 import Duration
from google.protobuf.timestamp_pb2 import Timestamp

from kozyr.api.clock.v1 import clock_service_pb2 as pb
from kozyr.api.clock.v1 import clock_service_pb2_grpc as pb_grpc
from kozyr.client.texts import table_service_unavailable
from kozyr.clock import texts
from kozyr.clock.covering import Covering
from kozyr.clock.presence import PresenceBook, has_presence
from kozyr.clock.tables import CALL_SECONDS, TableCaller
from kozyr.clock.timing import Clock
from kozyr.clock.voice import VoiceRooms
from kozyr.runtime.auth import Role, current_principal
from kozyr.tablewire import refusals


class ClockServicer(pb_grpc.ClockServiceServicer):
    def __init__(
        self,
        presence: PresenceBook,
        covering: Covering,
        tables: TableCaller,
        voice: VoiceRooms | None,
        clock: Clock,
    ) -> None:
        self._presence = presence
        self._covering = covering
        self._tables = tables
        self._voice = voice
        self._clock = clock

    async def Heartbeat(self, request: pb.HeartbeatRequest, context: Any) -> pb.HeartbeatResponse:
        player_id = current_principal().require(Role.PLAYER).subject
        if not has_presence(player_id):
            raise texts.unsupported_player_id(player_id)
        came_online = await self._presence.heartbeat(player_id)
        if came_online:
            await self._covering.came_online(player_id)
        offline_after = timedelta(seconds=self._presence.offline_after)
        return pb.HeartbeatResponse(
            came_online=came_online,
            offline_after=_duration(offline_after),
            interval=_duration(offline_after / 3),
        )

    async def GetPresence(
        self, request: pb.GetPresenceRequest, context: Any
    ) -> pb.GetPresenceResponse:
        ids = list(request.player_ids)
        if not 1 <= len(ids) <= texts.MAX_PRESENCE_IDS:
            raise texts.bad_presence_query(len(ids))
        for player_id in ids:
            if not has_presence(player_id):
                raise texts.unsupported_player_id(player_id)
        return pb.GetPresenceResponse(
            players=[
                pb.PlayerPresence(player_id=p, online=await self._presence.is_online(p))
                for p in ids
            ]
        )

    async def JoinVoice(self, request: pb.JoinVoiceRequest, context: Any) -> pb.JoinVoiceResponse:
        player_id = current_principal().require(Role.PLAYER).subject
        refusals.table_id(request.table_id)
        # Authorisation first: whether voice is set up here is nothing to tell a player
        # who has no seat at the table (nor is the table's state).
        view = await self._table_view(request.table_id)
        if player_id not in {seat.player_id for seat in view.seats}:
            raise texts.not_seated(request.table_id)
        if view.finished:
            raise texts.table_finished(request.table_id)
        if self._voice is None:
            raise texts.voice_not_configured()
        admitted = self._voice.admit(player_id, request.table_id, self._clock.now())
        expires = Timestamp()
        expires.FromDatetime(admitted.expires_at)
        return pb.JoinVoiceResponse(
            url=admitted.url, room=admitted.room, token=admitted.token, expires_at=expires
        )

    async def _table_view(self, table_id: str) -> Any:
        """The table's public view (seats, finished), asked as the clock service."""
        try:
            async with asyncio.timeout(CALL_SECONDS):
                return await self._tables.table.get_table(table_id)
        except TimeoutError:
            raise table_service_unavailable() from None
        except grpc.aio.AioRpcError as error:
            if error.code() == grpc.StatusCode.NOT_FOUND:
                raise refusals.table_not_found(table_id) from None
            raise table_service_unavailable() from None


def _duration(value: timedelta) -> Duration:
    duration = Duration()
    duration.FromTimedelta(value)
    return duration
