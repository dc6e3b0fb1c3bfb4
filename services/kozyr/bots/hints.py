"""SuggestAction: the `normal` computer's move for a seated player, as a hint.

The hint is computed from the player's own view only, and that is guaranteed by where
the view comes from rather than by care here: the bots service reads it from the table
service's GetTable with the **caller's own token** forwarded, so the table answers
exactly what it would answer the player himself — his seat's view, or a spectator's if
he has no seat — and never the bots identity's (which the table would refuse anyway
for a person's seat). The table's refusals of that read (a malformed or unknown table,
a bad or expired token) are passed on as it wrote them.

Whether hints are allowed is the table's to say, never the caller's: the view read with
his token carries `hints_allowed`, false at a table opened with `TableOptions.hints_off`
(matchmaking's rated queue tables): FAILED_PRECONDITION HINTS_NOT_ALLOWED there.

Each player is limited by a token bucket (`bots_hints_per_second`, `bots_hints_burst`):
one more is RESOURCE_EXHAUSTED TOO_MANY_HINTS with `retryAfterSeconds`.
"""

from __future__ import annotations

from typing import Any

import grpc

from kozyr.api.bots.v1 import bots_service_pb2 as pb
from kozyr.api.bots.v1 import bots_service_pb2_grpc as pb_grpc
from kozyr.api.table.v1 import table_service_pb2 as table_pb
from kozyr.api.table.v1 import views_pb2
from kozyr.bots import texts
from kozyr.bots.levels import Level, NoMove, choose
from kozyr.bots.limiter import TokenBuckets
from kozyr.bots.metrics import HINTS
from kozyr.client.table import TableClient
from kozyr.client.texts import table_service_unavailable
from kozyr.runtime.auth import Role, bearer_token, current_principal
from kozyr.runtime.errors import KozyrError, from_rpc_error
from kozyr.runtime.interceptors import LANGUAGE_KEY, call_metadata, metadata_value

HINT_LEVEL = Level.NORMAL
CALL_SECONDS = 4.0
"""The read of the player's view is given up after this (then UNAVAILABLE)."""
PASSED_ON = frozenset(
    {
        grpc.StatusCode.INVALID_ARGUMENT,
        grpc.StatusCode.NOT_FOUND,
        grpc.StatusCode.PERMISSION_DENIED,
        grpc.StatusCode.UNAUTHENTICATED,
    }
)
"""The table's answers that are about the request, not about the table service's health."""


class HintServicer(pb_grpc.BotsServiceServicer):
    """The gRPC edge of the bots service. `tables` carries no token of its own: every
    call sends the caller's."""

    def __init__(self, tables: TableClient, limits: TokenBuckets) -> None:
        self._tables = tables
        self._limits = limits

    async def SuggestAction(
        self, request: pb.SuggestActionRequest, context: Any
    ) -> pb.SuggestActionResponse:
        try:
            response = await self._suggest(request, context)
        except KozyrError as error:
            HINTS.labels(error.reason).inc()
            raise
        HINTS.labels("given").inc()
        return response

    async def _suggest(
        self, request: pb.SuggestActionRequest, context: Any
    ) -> pb.SuggestActionResponse:
        player = current_principal().require(Role.PLAYER).subject
        wait = self._limits.take(player)
        if wait:
            raise texts.too_many_hints(self._limits.rate, self._limits.burst, wait)
        view = await self._own_view(request.table_id, context.invocation_metadata())
        if not view.HasField("seat"):
            raise texts.not_seated(request.table_id)
        if not view.hints_allowed:
            raise texts.hints_not_allowed(request.table_id)
        if view.finished:
            raise texts.table_finished(request.table_id)
        if view.seat not in view.turn.seats:
            raise texts.not_your_turn(request.table_id, view.version)
        try:
            action = choose(view, HINT_LEVEL)
        except NoMove:
            raise texts.not_your_turn(request.table_id, view.version) from None
        return pb.SuggestActionResponse(action=action, view_version=view.version, seat=view.seat)

    async def _own_view(self, table_id: str, metadata: Any) -> views_pb2.TableView:
        """The caller's view, read with his token (and his language for the table's texts)."""
        forwarded = call_metadata(
            token=bearer_token(metadata), language=metadata_value(metadata, LANGUAGE_KEY)
        )
        try:
            answer: table_pb.GetTableResponse = await self._tables.stub.GetTable(
                table_pb.GetTableRequest(table_id=table_id),
                metadata=forwarded,
                timeout=CALL_SECONDS,
            )
        except grpc.aio.AioRpcError as error:
            if error.code() in PASSED_ON:
                raise from_rpc_error(error) from None
            raise table_service_unavailable() from None
        return answer.view
