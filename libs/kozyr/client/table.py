"""A small async client of kozyr.table.v1.TableService.

It adds what every caller needs and nothing else: the bearer token, a request id per
call (so retries are safe), the language of error messages, a retry policy for an
overloaded or restarting service, and typed helpers. Errors surface as
grpc.aio.AioRpcError; `kozyr.runtime.errors.error_details` reads their reason.
"""

from __future__ import annotations

import secrets
import uuid
from collections.abc import AsyncGenerator, Sequence
from datetime import datetime
from typing import Unpack

from google.protobuf.message import Message

from kozyr.api.common.v1 import games_pb2, seats_pb2
from kozyr.api.table.v1 import actions_pb2, views_pb2
from kozyr.api.table.v1 import table_service_pb2 as pb
from kozyr.api.table.v1 import table_service_pb2_grpc as pb_grpc
from kozyr.client.channel import ChannelOptions, ServiceClient, retry_service_config
from kozyr.client.games import set_game_options, set_named_game_options

TABLE_SERVICE = pb.DESCRIPTOR.services_by_name["TableService"].full_name

RETRY_SERVICE_CONFIG = retry_service_config(TABLE_SERVICE)
"""The table client's retry policy. Safe for every TableService method: the writes carry
a request id and the service answers a repeat with the first result (SubmitAction,
CreateTable, SetSeatControl), ExpireTurn names the turn it ends, the reads change nothing."""


def random_client_seed() -> str:
    """A client seed nobody can guess: 32 hex digits from the operating system's CSPRNG."""
    return secrets.token_hex(16)


def new_request_id() -> str:
    return uuid.uuid4().hex


class TableClient(ServiceClient):
    """One channel to a table service, acting with one token.

    Calls refused with UNAVAILABLE or RESOURCE_EXHAUSTED are retried by gRPC
    (`RETRY_SERVICE_CONFIG`); `retry=False` turns that off (tests of the raw answers).
    """

    SERVICE = TABLE_SERVICE

    def __init__(self, target: str, token: str | None, **options: Unpack[ChannelOptions]) -> None:
        super().__init__(target, token, **options)
        self.stub = pb_grpc.TableServiceStub(self._channel)

    async def create_table(
        self,
        game: games_pb2.Game.ValueType,
        seats: Sequence[str | pb.SeatAssignment | None],
        *,
        request_id: str | None = None,
        options: Message | None = None,
        table: pb.TableOptions | None = None,
        **game_options: Message,
    ) -> pb.CreateTableResponse:
        """Open a table; a seat is a player id, None for a computer, or a whole
        `SeatAssignment` (a computer seat with its level). `options`: the game's options
        message (any game's), or by keyword
        `<game id>=` (`kozyr.client.games.set_named_game_options`);
        `table`: the table's own options (cover_after, computer level)."""
        request = pb.CreateTableRequest(
            request_id=request_id or new_request_id(),
            game=game,
            seats=[_assignment(p) for p in seats],
            table=table,
        )
        if options is not None:
            set_game_options(request, options)
        set_named_game_options(request, game_options)
        return await self.create(request)

    async def create(self, request: pb.CreateTableRequest) -> pb.CreateTableResponse:
        """Open a table from a whole request (a caller that builds it itself, such as
        matchmaking placing a match, with the match's request id)."""
        response: pb.CreateTableResponse = await self.stub.CreateTable(
            request, metadata=self.metadata
        )
        return response

    async def get_table(
        self, table_id: str, *, seat: int | None = None, open_hand: bool = False
    ) -> views_pb2.TableView:
        """The caller's view; `open_hand`: the open-hand spectator's, on the table's
        delay (docs/open-hand.md)."""
        request = pb.GetTableRequest(table_id=table_id, open_hand=open_hand)
        if seat is not None:
            request.seat = seat
        response: pb.GetTableResponse = await self.stub.GetTable(request, metadata=self.metadata)
        return response.view

    async def watch(
        self,
        table_id: str,
        *,
        from_version: int = 0,
        seat: int | None = None,
        open_hand: bool = False,
    ) -> AsyncGenerator[views_pb2.TableView, None]:
        """Fresh views after every change; resume with the last version you saw."""
        request = pb.WatchTableRequest(
            table_id=table_id, from_version=from_version, open_hand=open_hand
        )
        if seat is not None:
            request.seat = seat
        call = self.stub.WatchTable(request, metadata=self.metadata)
        try:
            async for response in call:
                yield response.view
        finally:
            call.cancel()

    async def submit(
        self,
        table_id: str,
        action: actions_pb2.Action,
        *,
        request_id: str | None = None,
        expected_version: int | None = None,
        seat: int | None = None,
    ) -> pb.SubmitActionResponse:
        request = pb.SubmitActionRequest(
            table_id=table_id, request_id=request_id or new_request_id(), action=action
        )
        if expected_version is not None:
            request.expected_version = expected_version
        if seat is not None:
            request.seat = seat
        response: pb.SubmitActionResponse = await self.stub.SubmitAction(
            request, metadata=self.metadata
        )
        return response

    async def set_client_seed(
        self,
        table_id: str,
        deal_number: int,
        client_seed: str | None = None,
        *,
        request_id: str | None = None,
        seat: int | None = None,
    ) -> pb.SetClientSeedResponse:
        """Contribute to the next deal's seed (docs/fair-deal.md §9): `client_seed` as the
        player typed it, else a random one (`random_client_seed`)."""
        request = pb.SetClientSeedRequest(
            table_id=table_id,
            request_id=request_id or new_request_id(),
            deal_number=deal_number,
            client_seed=client_seed or random_client_seed(),
        )
        if seat is not None:
            request.seat = seat
        response: pb.SetClientSeedResponse = await self.stub.SetClientSeed(
            request, metadata=self.metadata
        )
        return response

    async def history(
        self,
        table_id: str,
        *,
        seat: int | None = None,
        page_size: int = 1000,
        from_version: int = 0,
        open_hand: bool = False,
    ) -> list[pb.HistoryEvent]:
        """Every event the caller may see after its version `from_version`, all pages
        (`open_hand`: the open-hand spectator's, on the table's delay)."""
        events: list[pb.HistoryEvent] = []
        start = from_version
        while True:
            request = pb.GetHistoryRequest(
                table_id=table_id, from_version=start, page_size=page_size, open_hand=open_hand
            )
            if seat is not None:
                request.seat = seat
            page: pb.GetHistoryResponse = await self.stub.GetHistory(
                request, metadata=self.metadata
            )
            events.extend(page.events)
            if not page.next_from_version:
                return events
            start = page.next_from_version

    async def expire_turn(self, table_id: str, turn_number: int) -> pb.ExpireTurnResponse:
        request = pb.ExpireTurnRequest(table_id=table_id, turn_number=turn_number)
        response: pb.ExpireTurnResponse = await self.stub.ExpireTurn(
            request, metadata=self.metadata
        )
        return response

    async def set_seat_control(
        self,
        table_id: str,
        seat: int,
        control: seats_pb2.SeatControl.ValueType,
        *,
        request_id: str | None = None,
    ) -> pb.SetSeatControlResponse:
        request = pb.SetSeatControlRequest(
            table_id=table_id,
            seat=seat,
            control=control,
            request_id=request_id or new_request_id(),
        )
        response: pb.SetSeatControlResponse = await self.stub.SetSeatControl(
            request, metadata=self.metadata
        )
        return response

    async def set_seat_presence(
        self, table_id: str, seat: int, online: bool, *, request_id: str | None = None
    ) -> pb.SetSeatPresenceResponse:
        request = pb.SetSeatPresenceRequest(
            table_id=table_id, seat=seat, online=online, request_id=request_id or new_request_id()
        )
        response: pb.SetSeatPresenceResponse = await self.stub.SetSeatPresence(
            request, metadata=self.metadata
        )
        return response

    async def list_tables(
        self,
        *,
        player_id: str = "",
        created_since: datetime | None = None,
        state: pb.TableState.ValueType = pb.TABLE_STATE_UNSPECIFIED,
        page_size: int = 0,
        page_token: str = "",
    ) -> pb.ListTablesResponse:
        """One page of the tables found, newest first (admin only)."""
        request = pb.ListTablesRequest(
            player_id=player_id, state=state, page_size=page_size, page_token=page_token
        )
        if created_since is not None:
            request.created_since.FromDatetime(created_since)
        response: pb.ListTablesResponse = await self.stub.ListTables(
            request, metadata=self.metadata
        )
        return response


def _assignment(seat: str | pb.SeatAssignment | None) -> pb.SeatAssignment:
    if isinstance(seat, pb.SeatAssignment):
        return seat
    return pb.SeatAssignment(computer=True) if seat is None else pb.SeatAssignment(player_id=seat)
