"""A small async client of kozyr.matchmaking.v1.MatchmakingService: queue, parties, ratings."""

from __future__ import annotations

import uuid
from collections.abc import AsyncGenerator

from google.protobuf.message import Message

from kozyr.api.common.v1 import games_pb2
from kozyr.api.matchmaking.v1 import matchmaking_service_pb2 as pb
from kozyr.api.matchmaking.v1 import matchmaking_service_pb2_grpc as pb_grpc
from kozyr.api.table.v1 import table_service_pb2 as table_pb
from kozyr.client.channel import ServiceClient
from kozyr.client.games import set_game_options, set_named_game_options

MATCHMAKING_SERVICE = pb.DESCRIPTOR.services_by_name["MatchmakingService"].full_name


class MatchmakingClient(ServiceClient):
    """One channel to a matchmaking service, acting with one token (retries as
    `TableClient`: every write carries a request id or is decided idempotently)."""

    SERVICE = MATCHMAKING_SERVICE

    def __init__(
        self, target: str, token: str | None, *, language: str | None = None, retry: bool = True
    ) -> None:
        super().__init__(target, token, language=language, retry=retry)
        self.stub = pb_grpc.MatchmakingServiceStub(self._channel)

    async def enter_queue(
        self,
        game: games_pb2.Game.ValueType,
        *,
        request_id: str | None = None,
        party_id: str = "",
        fill_with_computers: bool = False,
        options: Message | None = None,
        table: table_pb.TableOptions | None = None,
        **game_options: Message,
    ) -> pb.EnterQueueResponse:
        """A ticket for the caller (or his party, which he leads) in the game's queue;
        `options`: the game's options message (any game's, `GameInfo.options` says which
        fields a ticket may carry), or by keyword `<game id>=`
        (`kozyr.client.games.set_named_game_options`);
        `table`: the table's own options he chooses (cover_after_seconds, computer_level)."""
        request = pb.EnterQueueRequest(
            request_id=request_id or str(uuid.uuid4()),
            game=game,
            party_id=party_id,
            fill_with_computers=fill_with_computers,
            table=table,
        )
        if options is not None:
            set_game_options(request, options)
        set_named_game_options(request, game_options)
        response: pb.EnterQueueResponse = await self.stub.EnterQueue(
            request, metadata=self.metadata
        )
        return response

    async def cancel(self, ticket_id: str) -> bool:
        """Leave the queue; False when the ticket was already cancelled."""
        response: pb.CancelTicketResponse = await self.stub.CancelTicket(
            pb.CancelTicketRequest(ticket_id=ticket_id), metadata=self.metadata
        )
        return response.cancelled

    async def watch_ticket(self, ticket_id: str) -> AsyncGenerator[pb.WatchTicketResponse, None]:
        """The ticket now and after every change, until matched, cancelled or expired."""
        call = self.stub.WatchTicket(
            pb.WatchTicketRequest(ticket_id=ticket_id), metadata=self.metadata
        )
        async for response in call:
            yield response

    async def create_party(self, *, request_id: str | None = None) -> pb.Party:
        response: pb.CreatePartyResponse = await self.stub.CreateParty(
            pb.CreatePartyRequest(request_id=request_id or str(uuid.uuid4())),
            metadata=self.metadata,
        )
        return response.party

    async def join_party(self, code: str) -> pb.Party:
        response: pb.JoinPartyResponse = await self.stub.JoinParty(
            pb.JoinPartyRequest(code=code), metadata=self.metadata
        )
        return response.party

    async def leave_party(self) -> bool:
        """Leave the party; True when the caller led it and it is disbanded."""
        response: pb.LeavePartyResponse = await self.stub.LeaveParty(
            pb.LeavePartyRequest(), metadata=self.metadata
        )
        return response.disbanded

    async def party(self) -> pb.Party | None:
        response: pb.GetPartyResponse = await self.stub.GetParty(
            pb.GetPartyRequest(), metadata=self.metadata
        )
        return response.party if response.HasField("party") else None

    async def create_private_table(
        self,
        game: games_pb2.Game.ValueType,
        *,
        request_id: str | None = None,
        fill_with_computers: bool = True,
        table: table_pb.TableOptions | None = None,
        computer_level: int = 0,
        options: Message | None = None,
    ) -> pb.CreatePrivateTableResponse:
        """A table for the caller's party (or himself), computers in the free seats;
        `options`: the game's options message (any game's);
        `table`: the table's own options he chooses (cover_after_seconds, computer_level).
        `computer_level` sets the deprecated int field (kept to test that it still works)."""
        request = pb.CreatePrivateTableRequest(
            request_id=request_id or str(uuid.uuid4()),
            game=game,
            fill_with_computers=fill_with_computers,
            table=table,
        )
        if computer_level:
            request.computer_level = computer_level
        if options is not None:
            set_game_options(request, options)
        response: pb.CreatePrivateTableResponse = await self.stub.CreatePrivateTable(
            request, metadata=self.metadata
        )
        return response

    async def rating(self, game: games_pb2.Game.ValueType, player_id: str = "") -> pb.Rating:
        response: pb.GetRatingResponse = await self.stub.GetRating(
            pb.GetRatingRequest(game=game, player_id=player_id), metadata=self.metadata
        )
        return response.rating

    async def leaderboard(
        self, game: games_pb2.Game.ValueType, *, page_size: int = 0, page_token: str = ""
    ) -> pb.ListLeaderboardResponse:
        response: pb.ListLeaderboardResponse = await self.stub.ListLeaderboard(
            pb.ListLeaderboardRequest(game=game, page_size=page_size, page_token=page_token),
            metadata=self.metadata,
        )
        return response

    async def my_tables(self, player_id: str = "", *, page_size: int = 0) -> list[pb.PlayerTable]:
        response: pb.ListMyTablesResponse = await self.stub.ListMyTables(
            pb.ListMyTablesRequest(player_id=player_id, page_size=page_size),
            metadata=self.metadata,
        )
        return list(response.tables)

    async def leaver_status(self, player_id: str = "") -> pb.LeaverStatus:
        """The player's leaver record (ListMyTables's `leaver`): strikes, cooldown."""
        response: pb.ListMyTablesResponse = await self.stub.ListMyTables(
            pb.ListMyTablesRequest(player_id=player_id, page_size=1), metadata=self.metadata
        )
        return response.leaver

    async def lift_leaver_penalty(
        self, player_id: str, reason: str, request_id: str | None = None
    ) -> pb.LiftLeaverPenaltyResponse:
        """Admin: end a player's cooldown and take his latest strike back (an appeal)."""
        response: pb.LiftLeaverPenaltyResponse = await self.stub.LiftLeaverPenalty(
            pb.LiftLeaverPenaltyRequest(
                player_id=player_id, reason=reason, request_id=request_id or str(uuid.uuid4())
            ),
            metadata=self.metadata,
        )
        return response
