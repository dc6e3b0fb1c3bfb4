"""A small async client of kozyr.bots.v1.BotsService: a hint for the caller's seat."""

from __future__ import annotations

from typing import Unpack

from kozyr.api.bots.v1 import bots_service_pb2 as pb
from kozyr.api.bots.v1 import bots_service_pb2_grpc as pb_grpc
from kozyr.client.channel import ChannelOptions, ServiceClient

BOTS_SERVICE = pb.DESCRIPTOR.services_by_name["BotsService"].full_name


class BotsClient(ServiceClient):
    """One channel to a bots service, acting with one (player's) token.

    A hint refused for its rate (RESOURCE_EXHAUSTED TOO_MANY_HINTS) is not retried by
    gRPC: the answer carries `retryAfterSeconds`, and the server's pushback stops it.
    """

    SERVICE = BOTS_SERVICE

    def __init__(self, target: str, token: str | None, **options: Unpack[ChannelOptions]) -> None:
        super().__init__(target, token, **options)
        self.stub = pb_grpc.BotsServiceStub(self._channel)

    async def suggest(self, table_id: str) -> pb.SuggestActionResponse:
        """The `normal` computer's move for the caller's seat, and the view version it
        was computed at (submit it with that `expected_version`)."""
        response: pb.SuggestActionResponse = await self.stub.SuggestAction(
            pb.SuggestActionRequest(table_id=table_id), metadata=self.metadata
        )
        return response
