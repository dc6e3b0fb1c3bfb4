"""A small async client of kozyr.clock.v1.ClockService: heartbeats, presence, voice."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Unpack

from kozyr.api.clock.v1 import clock_service_pb2 as pb
from kozyr.api.clock.v1 import clock_service_pb2_grpc as pb_grpc
from kozyr.client.channel import ChannelOptions, ServiceClient

CLOCK_SERVICE = pb.DESCRIPTOR.services_by_name["ClockService"].full_name


class ClockClient(ServiceClient):
    """One channel to a clock service, acting with one token (retries as `TableClient`)."""

    SERVICE = CLOCK_SERVICE

    def __init__(self, target: str, token: str | None, **options: Unpack[ChannelOptions]) -> None:
        super().__init__(target, token, **options)
        self.stub = pb_grpc.ClockServiceStub(self._channel)

    async def heartbeat(self) -> pb.HeartbeatResponse:
        """I am here (a player's token); send one every `interval` of the answer."""
        response: pb.HeartbeatResponse = await self.stub.Heartbeat(
            pb.HeartbeatRequest(), metadata=self.metadata
        )
        return response

    async def presence(self, player_ids: Sequence[str]) -> dict[str, bool]:
        """player id → online, for 1 to 100 players."""
        response: pb.GetPresenceResponse = await self.stub.GetPresence(
            pb.GetPresenceRequest(player_ids=list(player_ids)), metadata=self.metadata
        )
        return {p.player_id: p.online for p in response.players}

    async def join_voice(self, table_id: str) -> pb.JoinVoiceResponse:
        """The LiveKit URL, room and token of a table the caller is seated at."""
        response: pb.JoinVoiceResponse = await self.stub.JoinVoice(
            pb.JoinVoiceRequest(table_id=table_id), metadata=self.metadata
        )
        return response
