"""The gRPC edge of matchmaking: check the request, one lobby decision or one read.

Every shape check comes before any read or write (INVALID_ARGUMENT, nothing changed);
every rule check is in the pure decisions, run on the caught-up lobby, so a refusal
appends nothing either.
"""

from __future__ import annotations

import asyncio
import re
import uuid
from collections.abc import AsyncIterator
from datetime import timedelta
from typing import Any

from google.protobuf.duration_pb2 import Duration
from google.protobuf.timestamp_pb2 import Timestamp

from kozyr.api.matchmaking.v1 import matchmaking_service_pb2 as pb
from kozyr.api.matchmaking.v1 import matchmaking_service_pb2_grpc as pb_grpc
from kozyr.client.texts import table_service_unavailable
from kozyr.games.catalogue import UnknownGame, game_by_code, game_by_id, info_of, registered
from kozyr.matchmaking import decisions, texts
from kozyr.matchmaking.book import LobbyBook
from kozyr.matchmaking.leavers import Record
from kozyr.matchmaking.lobby import Lobby, Party, QueueOptions
from kozyr.matchmaking.matching import MatchRules, estimated_wait, level_for
from kozyr.matchmaking.placing import Placer
from kozyr.matchmaking.ratebook import RatingBook, RatingRecord
from kozyr.matchmaking.timing import Clock
from kozyr.runtime.auth import Role, current_principal
from kozyr.runtime.interceptors import prefer_request_language

_REQUEST_ID = re.compile(r"[\x21-\x7e]{1,128}")
_UUID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")
_CODE = re.compile(r"[A-Za-z0-9]{6}")
LEVEL_NAMES = {1: "easy", 2: "normal", 3: "hard"}
"""ComputerLevel numbers (kozyr.common.v1) → the lobby's level names."""
PLAYER_COVER_AFTER = (30, 3600)
"""The cover_after_seconds a player may ask for (0: the clock's default): not below the
clock's offline threshold's order of magnitude, not above the table service's limit."""
STATES = {
    "searching": pb.TICKET_STATE_SEARCHING,
    "placing": pb.TICKET_STATE_PLACING,
    "matched": pb.TICKET_STATE_MATCHED,
    "cancelled": pb.TICKET_STATE_CANCELLED,
    "expired": pb.TICKET_STATE_EXPIRED,
}
WATCH_POLL_SECONDS = 1.0
PLACE_SECONDS = 10.0
"""How long CreatePrivateTable waits for its table by default
(`KOZYR_MATCHMAKING_PRIVATE_TABLE_WAIT_SECONDS`)."""


def _request_id(value: str) -> str:
    if not _REQUEST_ID.fullmatch(value):
        raise texts.invalid_request_id()
    return value


def _uuid(value: str, field: str) -> str:
    if not _UUID.fullmatch(value):
        raise texts.invalid_id(field)
    return value


def _game(value: int) -> str:
    """The id of the registered game whose `kozyr.common.v1.Game` number is `value`."""
    try:
        return game_by_code(value).id
    except UnknownGame:
        games = sorted(registered(), key=lambda p: p.code)
        raise texts.invalid_game([p.id for p in games]) from None


def _code(game: str) -> Any:
    """The `kozyr.common.v1.Game` number of a game (an open enum: typed Any here, a game
    may be newer than the generated enum)."""
    return game_by_id(game).code


def _lift_reason(value: str) -> str:
    if not 1 <= len(value) <= 500 or not value.isprintable() or not value.strip():
        raise texts.invalid_lift_reason()
    return value


def leaver_message(record: Record | None, now: Any) -> pb.LeaverStatus:
    """A player's leaver record; the cooldown only while it runs."""
    if record is None:
        return pb.LeaverStatus()
    status = pb.LeaverStatus(strikes=record.strikes, clean_tables=record.clean)
    if record.until is not None and record.blocks(now):
        status.cooldown_until.CopyFrom(_timestamp(record.until))
    return status


def _player_id(value: str) -> str:
    if not 1 <= len(value) <= 128 or not value.isprintable() or not value.strip():
        raise texts.invalid_player_id()
    return value


def _options(request: Any, game: str) -> QueueOptions:
    """The table options of a request whose oneof `options` holds the game's message,
    and whose `table` holds the table's own options a player may choose. The game's
    options a ticket may carry, and their bounds, are the game's own (`GameInfo.options`)."""
    which = request.WhichOneof("options")
    if which is not None and which != game:
        raise texts.options_game_mismatch()
    chosen: dict[str, int | bool] = {}
    if which is not None:
        given = getattr(request, which)
        for option in info_of(game).options:
            value = getattr(given, option.name, None)
            if value is None or not option.ticket:
                continue
            if not option.accepts(value):
                raise texts.invalid_option(option.name, value, option.low, option.high)
            chosen[option.name] = value
    cover = int(request.table.cover_after_seconds)
    if cover != 0 and not PLAYER_COVER_AFTER[0] <= cover <= PLAYER_COVER_AFTER[1]:
        raise texts.invalid_cover_after(cover, *PLAYER_COVER_AFTER)
    level = _computer_level(request)
    return QueueOptions.of(chosen, cover, level)


def _computer_level(request: Any) -> str:
    """The level a request asks for ("" for none): `table.computer_level`, else a private
    table's deprecated int `computer_level` (the same numbers), never two different ones."""
    chosen = int(request.table.computer_level)
    if chosen and chosen not in LEVEL_NAMES:
        raise texts.invalid_computer_level(chosen)
    legacy = int(getattr(request, "computer_level", 0))
    if legacy and legacy not in LEVEL_NAMES:
        raise texts.invalid_computer_level(legacy)
    if chosen and legacy and chosen != legacy:
        raise texts.computer_level_conflict(legacy, chosen)
    return LEVEL_NAMES.get(chosen or legacy, "")


def _timestamp(value: Any) -> Timestamp:
    stamp = Timestamp()
    stamp.FromDatetime(value)
    return stamp


def _duration(value: timedelta) -> Duration:
    duration = Duration()
    duration.FromTimedelta(timedelta(seconds=round(value.total_seconds())))
    return duration


def party_message(lobby: Lobby, party: Party) -> pb.Party:
    ticket = lobby.party_ticket(party)
    return pb.Party(
        party_id=party.party_id,
        code=party.code,
        player_ids=list(party.members),
        ticket_id=ticket.ticket_id if ticket and ticket.party_id == party.party_id else "",
    )


def rating_message(record: RatingRecord) -> pb.Rating:
    return pb.Rating(
        player_id=record.player_id,
        game=_code(record.game),
        mu=record.skill.mu,
        sigma=record.skill.sigma,
        ordinal=max(0.0, record.ordinal) if record.tables == 0 else record.ordinal,
        tables=record.tables,
    )


class MatchmakingServicer(pb_grpc.MatchmakingServiceServicer):
    def __init__(
        self,
        book: LobbyBook,
        ratings: RatingBook,
        placer: Placer,
        clock: Clock,
        rules: MatchRules,
        shutting_down: asyncio.Event | None = None,
        *,
        place_seconds: float = PLACE_SECONDS,
    ) -> None:
        self._book = book
        self._ratings = ratings
        self._placer = placer
        self._clock = clock
        self._rules = rules
        self._place_seconds = place_seconds
        self.shutting_down = shutting_down or asyncio.Event()

    # ------------------------------------------------------------------ tickets

    async def EnterQueue(
        self, request: pb.EnterQueueRequest, context: Any
    ) -> pb.EnterQueueResponse:
        prefer_request_language(request.language)
        player = current_principal().require(Role.PLAYER).subject
        request_id = _request_id(request.request_id)
        game = _game(request.game)
        options = _options(request, game)
        party_id = _uuid(request.party_id, "party_id") if request.party_id else ""
        ticket_id = decisions.derived_id("ticket", player, request_id)
        if party_id:
            await self._book.catch_up()  # whose ratings to read: the party as it is now
        players = decisions.queue_players(self._book.lobby, player, party_id, game)
        skills = await self._ratings.skills(game, players)
        now = self._clock.now()

        def decide(lobby: Lobby) -> list[decisions.Event]:
            if ticket_id in lobby.tickets or ticket_id in lobby.outcomes:
                return []
            members = decisions.queue_players(lobby, player, party_id, game)
            if set(members) - set(skills):
                raise texts.busy()  # the party changed while its ratings were read
            return decisions.enter(
                lobby, ticket_id=ticket_id, players=members, party_id=party_id, game=game,
                options=options, fill_now=request.fill_with_computers, skills=skills, now=now,
            )  # fmt: skip

        events = await self._book.decide(f"enter:{player}:{request_id}", decide)
        return pb.EnterQueueResponse(ticket_id=ticket_id, duplicate=not events)

    async def CancelTicket(
        self, request: pb.CancelTicketRequest, context: Any
    ) -> pb.CancelTicketResponse:
        player = current_principal().require(Role.PLAYER).subject
        ticket_id = _uuid(request.ticket_id, "ticket_id")
        events = await self._book.decide(
            f"cancel:{ticket_id}", lambda lobby: decisions.cancel(lobby, player, ticket_id)
        )
        return pb.CancelTicketResponse(cancelled=bool(events))

    async def WatchTicket(
        self, request: pb.WatchTicketRequest, context: Any
    ) -> AsyncIterator[pb.WatchTicketResponse]:
        principal = current_principal()
        ticket_id = _uuid(request.ticket_id, "ticket_id")
        await self._book.catch_up()
        last: pb.WatchTicketResponse | None = None
        while not self.shutting_down.is_set():
            view = self._ticket_view(ticket_id, principal.subject, principal.role)
            if last is None or _differs(view, last):
                yield view
                last = view
            if view.state not in (pb.TICKET_STATE_SEARCHING, pb.TICKET_STATE_PLACING):
                return
            await self._book.wait_change(WATCH_POLL_SECONDS)

    def _ticket_view(self, ticket_id: str, subject: str, role: Role) -> pb.WatchTicketResponse:
        lobby = self._book.lobby
        ticket = lobby.tickets.get(ticket_id)
        if ticket is not None:
            if role is Role.PLAYER and subject not in ticket.players:
                raise texts.not_your_ticket(ticket_id)
            state = "placing" if ticket.match_id else "searching"
            wait = estimated_wait(lobby, ticket, self._clock.now(), self._rules)
            return pb.WatchTicketResponse(
                ticket_id=ticket_id,
                state=STATES[state],
                game=_code(ticket.game),
                player_ids=list(ticket.players),
                estimated_wait=_duration(wait if state == "searching" else timedelta(0)),
                queued_at=_timestamp(ticket.opened_at),
            )
        outcome = lobby.outcomes.get(ticket_id)
        if outcome is None:
            raise texts.ticket_not_found(ticket_id)
        if role is Role.PLAYER and subject not in outcome.players:
            raise texts.not_your_ticket(ticket_id)
        return pb.WatchTicketResponse(
            ticket_id=ticket_id,
            state=STATES[outcome.state],
            game=_code(outcome.game),
            player_ids=list(outcome.players),
            queued_at=_timestamp(outcome.opened_at),
            table_id=outcome.table_id,
            seats=[pb.TicketSeat(player_id=p, seat=s) for p, s in outcome.seats],
        )

    # ------------------------------------------------------------------ parties

    async def CreateParty(
        self, request: pb.CreatePartyRequest, context: Any
    ) -> pb.CreatePartyResponse:
        player = current_principal().require(Role.PLAYER).subject
        request_id = _request_id(request.request_id)
        party_id = decisions.derived_id("party", player, request_id)
        await self._book.decide(
            f"party:{player}:{request_id}",
            lambda lobby: decisions.create_party(lobby, player, party_id),
        )
        lobby = self._book.lobby
        party = lobby.parties.get(party_id)
        if party is None:  # created, then disbanded, before this retry
            raise texts.party_not_found(party_id)
        return pb.CreatePartyResponse(party=party_message(lobby, party))

    async def JoinParty(self, request: pb.JoinPartyRequest, context: Any) -> pb.JoinPartyResponse:
        player = current_principal().require(Role.PLAYER).subject
        code = request.code.strip().upper()
        if not _CODE.fullmatch(code):
            raise texts.invalid_id("code")
        party = await self._book.answer(
            f"join:{uuid.uuid4()}", lambda lobby: decisions.join_party(lobby, player, code)
        )
        return pb.JoinPartyResponse(party=party_message(self._book.lobby, party))

    async def LeaveParty(
        self, request: pb.LeavePartyRequest, context: Any
    ) -> pb.LeavePartyResponse:
        player = current_principal().require(Role.PLAYER).subject
        disbanded = await self._book.answer(
            f"leave:{uuid.uuid4()}", lambda lobby: decisions.leave_party(lobby, player)
        )
        return pb.LeavePartyResponse(disbanded=disbanded)

    async def GetParty(self, request: pb.GetPartyRequest, context: Any) -> pb.GetPartyResponse:
        player = current_principal().require(Role.PLAYER).subject
        await self._book.catch_up()
        lobby = self._book.lobby
        party = lobby.party_with(player)
        if party is None:
            return pb.GetPartyResponse()
        return pb.GetPartyResponse(party=party_message(lobby, party))

    async def CreatePrivateTable(
        self, request: pb.CreatePrivateTableRequest, context: Any
    ) -> pb.CreatePrivateTableResponse:
        player = current_principal().require(Role.PLAYER).subject
        request_id = _request_id(request.request_id)
        game = _game(request.game)
        options = _options(request, game)
        match_id = decisions.derived_id("private", player, request_id)
        await self._book.catch_up()
        if match_id not in self._book.lobby.made:
            level = await self._private_level(player, game, options)
            await self._book.decide(
                f"private:{player}:{request_id}",
                lambda lobby: decisions.private_match(
                    lobby, player_id=player, match_id=match_id, game=game, options=options,
                    fill=request.fill_with_computers, level=level, now=self._clock.now(),
                ),
            )  # fmt: skip
            await self._placed(match_id)
        table_id = self._book.lobby.made.get(match_id)
        if table_id is None:
            raise table_service_unavailable()
        table = self._book.lobby.tables.get(table_id)
        seats = table.seats if table else ()
        return pb.CreatePrivateTableResponse(
            table_id=table_id, seats=[pb.TicketSeat(player_id=p, seat=s) for p, s in seats]
        )

    async def _private_level(self, player: str, game: str, options: QueueOptions) -> str:
        """The computers' level at a private table: the one asked for, else the one that
        suits the mean rating of the caller's party (or of him alone)."""
        if options.computer_level:
            return options.computer_level
        party = self._book.lobby.party_with(player)
        members = tuple(party.members) if party else (player,)
        skills = await self._ratings.skills(game, members)
        return level_for(sum(s.mu for s in skills.values()) / len(skills))

    async def _placed(self, match_id: str) -> None:
        """Wait for a decided match's table to open, or answer that it is opening.

        asyncio.wait, not wait_for: the placement task is shared (a retry of the call and
        the tick's place_overdue get the same one), so running out of patience here must
        not cancel it — the table still opens, and the retry the UNAVAILABLE invites
        finds it."""
        match = self._book.lobby.matches.get(match_id)
        if match is None:
            return
        placing = self._placer.place_soon(match)
        done, _ = await asyncio.wait({placing}, timeout=self._place_seconds)
        if not done:
            raise texts.table_opening()

    # ------------------------------------------------------------------ ratings

    async def GetRating(self, request: pb.GetRatingRequest, context: Any) -> pb.GetRatingResponse:
        game = _game(request.game)
        player = self._whose(request.player_id, anyone=True)
        return pb.GetRatingResponse(rating=rating_message(await self._ratings.rating(game, player)))

    async def ListLeaderboard(
        self, request: pb.ListLeaderboardRequest, context: Any
    ) -> pb.ListLeaderboardResponse:
        game = _game(request.game)
        if not 0 <= request.page_size <= 200:
            raise texts.invalid_page_size(200, request.page_size)
        size = request.page_size or 50
        token = request.page_token
        if token and not token.isdigit():
            raise texts.invalid_page_token()
        offset = int(token or 0)
        page = self._ratings.leaderboard.page(game, offset, size + 1)
        entries = [
            pb.LeaderboardEntry(
                rank=offset + i + 1,
                rating=rating_message(RatingRecord(p, game, skill, tables, tables)),
            )
            for i, (p, skill, tables) in enumerate(page[:size])
        ]
        more = len(page) > size
        return pb.ListLeaderboardResponse(
            entries=entries, next_page_token=str(offset + size) if more else ""
        )

    async def ListMyTables(
        self, request: pb.ListMyTablesRequest, context: Any
    ) -> pb.ListMyTablesResponse:
        player = self._whose(request.player_id, anyone=False)
        if not 0 <= request.page_size <= 100:
            raise texts.invalid_page_size(100, request.page_size)
        size = request.page_size or 20
        await self._book.catch_up()
        found: list[pb.PlayerTable] = []
        lobby = self._book.lobby
        for table_id in reversed(lobby.seated.get(player, ())):
            table = lobby.tables[table_id]
            found.append(
                pb.PlayerTable(
                    table_id=table.table_id, game=_code(table.game),
                    seat=dict(table.seats)[player], finished=False,
                    at=_timestamp(table.opened_at),
                )
            )  # fmt: skip
        del found[size:]
        history = []
        for game in (plugin.id for plugin in registered()):
            history += await self._ratings.history(game, player, size)
        history.sort(key=lambda t: t.at, reverse=True)
        for rated in history[: max(0, size - len(found))]:
            found.append(
                pb.PlayerTable(
                    table_id=rated.table_id, game=_code(rated.game), seat=rated.seat,
                    finished=True, place=rated.place, score=rated.score,
                    rating_change=rated.change, at=_timestamp(rated.at),
                    abandoned=rated.abandoned,
                )
            )  # fmt: skip
        leaver = leaver_message(lobby.leavers.get(player), self._clock.now())
        return pb.ListMyTablesResponse(tables=found, leaver=leaver)

    # ------------------------------------------------------------------ leavers

    async def LiftLeaverPenalty(
        self, request: pb.LiftLeaverPenaltyRequest, context: Any
    ) -> pb.LiftLeaverPenaltyResponse:
        admin = current_principal().require(Role.ADMIN).subject
        player = _player_id(request.player_id)
        reason = _lift_reason(request.reason)
        request_id = _request_id(request.request_id)
        now = self._clock.now()
        events = await self._book.decide(
            f"lift:{admin}:{request_id}",
            lambda lobby: decisions.lift_penalty(lobby, player, admin, reason, now),
        )
        record = self._book.lobby.leavers.get(player)
        return pb.LiftLeaverPenaltyResponse(lifted=bool(events), leaver=leaver_message(record, now))

    @staticmethod
    def _whose(player_id: str, *, anyone: bool) -> str:
        """The player a read is about: the caller when empty (players only); another
        player's for anyone (`anyone`), else for services and admins only."""
        principal = current_principal()
        if not player_id:
            if principal.role is not Role.PLAYER:
                raise texts.player_id_required()
            return principal.subject
        player_id = _player_id(player_id)
        if not anyone and player_id != principal.subject:
            if principal.role is Role.PLAYER:  # he may call this, for himself only
                raise texts.not_your_player(player_id)
            principal.require(Role.SERVICE, Role.ADMIN)
        return player_id


def _differs(view: pb.WatchTicketResponse, last: pb.WatchTicketResponse) -> bool:
    """A new state, or an estimate moved by 5 s or more: worth sending."""
    if view.state != last.state:
        return True
    return abs(view.estimated_wait.seconds - last.estimated_wait.seconds) >= 5
