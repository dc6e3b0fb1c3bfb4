"""The gRPC edge of the table service: validate, authorise, call TableApp, shape replies.

Thin by design: every rule lives in the deciders, every state change in TableApp.
Errors are typed KozyrErrors; the runtime's interceptor maps them to statuses.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any, cast

import grpc
from google.protobuf.timestamp_pb2 import Timestamp

from kozyr.api.common.v1 import games_pb2, seats_pb2
from kozyr.api.table.v1 import table_service_pb2 as pb
from kozyr.api.table.v1 import table_service_pb2_grpc as pb_grpc
from kozyr.games.plugin import AnyPlugin, UnknownGame, plugin_by_code, registered
from kozyr.runtime.auth import Principal, Role, current_principal
from kozyr.runtime.errors import InvalidArgument
from kozyr.runtime.interceptors import current_request_id, prefer_request_language
from kozyr.table.app import Actor, TableApp
from kozyr.table.domain.history import history_data
from kozyr.table.domain.model import (
    COMPUTER,
    COVER_AFTER_MAX_SECONDS,
    DEFAULT_COMPUTER_LEVEL,
    Table,
)
from kozyr.table.edge import access, listing, validation
from kozyr.table.edge.actions import command_from_action, fields_of
from kozyr.table.edge.shown import CONTROLS, LEVELS, ShownView, ViewCache


def actor_of(principal: Principal) -> Actor:
    return Actor(principal.subject, principal.role.value, current_request_id())


def _optional(message: Any, field: str) -> int | None:
    return int(getattr(message, field)) if message.HasField(field) else None


class TableServicer(pb_grpc.TableServiceServicer):
    """kozyr.table.v1.TableService over a TableApp."""

    def __init__(self, app: TableApp, shutting_down: asyncio.Event | None = None) -> None:
        self.app = app
        self.shutting_down = shutting_down or asyncio.Event()
        self.views = ViewCache()

    async def CreateTable(
        self, request: pb.CreateTableRequest, context: grpc.aio.ServicerContext
    ) -> pb.CreateTableResponse:
        principal = current_principal().require(Role.SERVICE, Role.ADMIN)
        plugin = _plugin(request.game)
        outcome = await self.app.create(
            request_id=validation.request_id(request.request_id),
            game_id=plugin.id,
            options=_options(request, plugin),
            seats=[_occupant(s) for s in request.seats],
            actor=actor_of(principal),
            levels=[_level(s.level, "") for s in request.seats],
            cover_after_seconds=_cover_after(request.table.cover_after_seconds),
            computer_level=_level(request.table.computer_level, DEFAULT_COMPUTER_LEVEL),
            hints_off=request.table.hints_off,
            open_hand_delay=request.table.open_hand_delay,
            seed_window=request.table.seed_window_seconds,
        )
        return pb.CreateTableResponse(
            table_id=outcome.table.table_id, version=outcome.table.version
        )

    async def stop_watches(self) -> None:
        """End every WatchTable stream (at shutdown): each sees `shutting_down` and returns."""
        self.shutting_down.set()
        self.app.notifier.wake_all()

    async def GetTable(
        self, request: pb.GetTableRequest, context: grpc.aio.ServicerContext
    ) -> pb.GetTableResponse:
        table = await self.app.load(validation.table_id(request.table_id))
        if request.open_hand:
            access.open_hand_viewer(current_principal(), table, _optional(request, "seat"))
            return pb.GetTableResponse(view=(await self._open_hand(table)).view)
        seat = access.viewer_seat(current_principal(), table, _optional(request, "seat"))
        return pb.GetTableResponse(view=self.views.view(table, seat))

    async def _open_hand(self, table: Table) -> ShownView:
        """The open-hand spectator's view now: the table `open_hand_delay` moves ago,
        every hand shown (docs/open-hand.md)."""
        past = await self.app.tables.at_version(table.table_id, table.open_hand_version())
        return self.views.open_hand(past, table.open_hand_delay)

    async def WatchTable(  # type: ignore[override]  # it writes the serialised responses
        self, request: pb.WatchTableRequest, context: grpc.aio.ServicerContext
    ) -> None:
        """Every version the caller's viewer has not seen, as serialised WatchTableResponses
        shared by every stream of the same viewer (`ShownView.written`, `add_to_server`),
        written with `context.write` (a coroutine, not an async generator: no generator
        step and no `asend` object a push)."""
        table_id = validation.table_id(request.table_id)
        last = validation.version(request.from_version, "from_version")
        principal = current_principal()
        requested = _optional(request, "seat")
        with self.app.notifier.watching(table_id) as watch:
            # Registered before the first read, so no append after it goes unheard.
            table = await self.app.load(table_id)  # NOT_FOUND first
            watch.hear(table.version)
            if request.open_hand:
                access.open_hand_viewer(principal, table, requested)
                last, sent = await self._resume_open_hand(table, last)
            else:
                last, sent = self._resume(
                    table, access.viewer_seat(principal, table, requested), last
                )
            while not self.shutting_down.is_set():
                changed = watch.changed()
                if watch.heard > last:
                    table = await self.app.tables.at_least(table_id, watch.heard)
                    if table.version > last:
                        if request.open_hand:
                            shown = await self._open_hand(table)
                        else:
                            seat = access.viewer_seat(principal, table, requested)
                            shown = self.views.shown(table, seat)
                        if shown.content != sent:
                            await context.write(shown.written)
                            sent = shown.content
                        last = table.version
                        continue
                await changed.wait()  # also set by `stop_watches` (the watch poller is
                # the safety net that turns a lost notification into a late one)

    def _resume(self, table: Table, seat: int | None, seen: int) -> tuple[int, bytes]:
        """Where a watch that has seen `seat`'s version `seen` stands: the log version
        it has seen, and the content of the view it holds (b"": none known).

        Versions are counted per viewer (docs/api.md, "Versions"): at the seat's current
        version the client holds the current view, whatever the log holds besides.
        """
        current = table.version_for(seat)
        if current > seen:
            return seen, b""  # below the log's version: the current view is sent at once
        held = self.views.shown(table, seat).content if current == seen else b""
        return table.version + seen - current, held

    async def _resume_open_hand(self, table: Table, seen: int) -> tuple[int, bytes]:
        """`_resume` for an open-hand watch: `seen` counts the open-hand view's versions
        (a spectator's, of the past table it shows). A client at the view's current
        version holds its content; any other is sent the current view at once."""
        shown = await self._open_hand(table)
        if seen and shown.view.version == seen:
            return table.version, shown.content
        return 0, b""

    async def SubmitAction(  # type: ignore[override]  # it returns the serialised response
        self, request: pb.SubmitActionRequest, context: grpc.aio.ServicerContext
    ) -> bytes:
        """The move, and the mover's view after it as a serialised SubmitActionResponse:
        the bytes its WatchTable streams write (`ShownView.written`: the view is field 1
        of both responses), with `duplicate` after them when set."""
        prefer_request_language(request.language)
        principal = current_principal()
        table_id = validation.table_id(request.table_id)
        request_id = validation.request_id(request.request_id)
        expected = _optional(request, "expected_version")
        if expected is not None:
            validation.version(expected, "expected_version")
        requested = _optional(request, "seat")
        # Seats and the game never change: any known version of the table tells the seat
        # (control is checked against the table the move is decided on).
        table = self.app.tables.cached(table_id) or await self.app.load(table_id)
        seat = access.claimed_seat(principal, table, requested)
        command = command_from_action(table.game_id, seat, request.action)  # malformed: refused
        outcome = await self.app.submit(
            table_id,
            command,
            request_id=request_id,
            actor=actor_of(principal),
            expected_version=expected,
            viewer=seat,
            check=lambda t: access.acting_seat(principal, t, requested),
            acting_person=seat if principal.role is Role.PLAYER else None,
        )
        written = self.views.shown(outcome.table, seat).written
        return written + _DUPLICATE if outcome.duplicate else written

    async def GetHistory(
        self, request: pb.GetHistoryRequest, context: grpc.aio.ServicerContext
    ) -> pb.GetHistoryResponse:
        principal = current_principal()
        table_id = validation.table_id(request.table_id)
        start = validation.version(request.from_version, "from_version")
        size = validation.page_size(request.page_size)
        requested = _optional(request, "seat")
        table = await self.app.load(table_id)
        if request.open_hand:  # the spectator's history of the table the delay ago
            access.open_hand_viewer(principal, table, requested)
            table = await self.app.tables.at_version(table_id, table.open_hand_version())
            seat = None
        else:
            seat = access.viewer_seat(principal, table, requested)
        full = principal.role is Role.ADMIN and requested is None and not request.open_hand
        page = await self.app.history(table, seat, start, size, full=full)
        shown = []
        for number, event in page:
            data = history_data(table, event, seat, full)
            if data is None:
                continue
            stamp = Timestamp()
            stamp.FromDatetime(event.recorded_at)
            shown.append(
                pb.HistoryEvent(
                    version=number,
                    type=event.type,
                    data_json=json.dumps(data, sort_keys=True),
                    recorded_at=stamp,
                )
            )
        version = table.version if full else table.version_for(seat)
        last = page[-1][0] if page else 0
        return pb.GetHistoryResponse(
            events=shown, next_from_version=last if last < version else 0, version=version
        )

    async def ExpireTurn(
        self, request: pb.ExpireTurnRequest, context: grpc.aio.ServicerContext
    ) -> pb.ExpireTurnResponse:
        principal = current_principal().require(Role.SERVICE, Role.ADMIN)
        table_id = validation.table_id(request.table_id)
        turn_number = validation.version(request.turn_number, "turn_number")
        outcome = await self.app.expire_turn(table_id, turn_number, actor_of(principal))
        return pb.ExpireTurnResponse(applied=outcome.applied, version=outcome.table.version)

    async def SetSeatControl(
        self, request: pb.SetSeatControlRequest, context: grpc.aio.ServicerContext
    ) -> pb.SetSeatControlResponse:
        principal = current_principal().require(Role.SERVICE, Role.ADMIN)
        table_id = validation.table_id(request.table_id)
        control = CONTROLS.get(request.control)
        if control is None:
            raise InvalidArgument("INVALID_CONTROL", "control must be PERSON, COMPUTER or ABSENT")
        outcome = await self.app.set_seat_control(
            table_id,
            request.seat,
            control,
            request_id=validation.request_id(request.request_id),
            actor=actor_of(principal),
        )
        return pb.SetSeatControlResponse(version=outcome.table.version, changed=outcome.applied)

    async def SetSeatPresence(
        self, request: pb.SetSeatPresenceRequest, context: grpc.aio.ServicerContext
    ) -> pb.SetSeatPresenceResponse:
        principal = current_principal().require(Role.SERVICE, Role.ADMIN)
        outcome = await self.app.set_seat_presence(
            validation.table_id(request.table_id),
            request.seat,
            request.online,
            request_id=validation.request_id(request.request_id),
            actor=actor_of(principal),
        )
        return pb.SetSeatPresenceResponse(version=outcome.table.version, changed=outcome.applied)

    async def SetClientSeed(
        self, request: pb.SetClientSeedRequest, context: grpc.aio.ServicerContext
    ) -> pb.SetClientSeedResponse:
        """A seat's client seed for the next deal (docs/fair-deal.md §9)."""
        prefer_request_language(request.language)
        principal = current_principal()
        table_id = validation.table_id(request.table_id)
        request_id = validation.request_id(request.request_id)
        client_seed = validation.client_seed(request.client_seed)
        requested = _optional(request, "seat")
        table = self.app.tables.cached(table_id) or await self.app.load(table_id)
        seat = access.seeding_seat(principal, table, requested)
        outcome = await self.app.set_client_seed(
            table_id,
            seat,
            request.deal_number,
            client_seed,
            request_id=request_id,
            actor=actor_of(principal),
        )
        return pb.SetClientSeedResponse(
            version=outcome.table.version_for(seat), duplicate=outcome.duplicate
        )

    async def ListTables(
        self, request: pb.ListTablesRequest, context: grpc.aio.ServicerContext
    ) -> pb.ListTablesResponse:
        current_principal().require(Role.ADMIN)
        query = listing.query_of(request)
        size = listing.page_size(request.page_size)
        after = listing.cursor_of(request.page_token, query)
        directory = self.app.directory
        if directory is None:
            raise listing.no_directory()
        found = await directory.find(query, size + 1, after)
        return listing.response(found, size, query)


_DUPLICATE = pb.SubmitActionResponse(duplicate=True).SerializeToString()
"""SubmitActionResponse.duplicate set, on the wire: appended to a view's bytes."""


def add_to_server(servicer: TableServicer, server: grpc.aio.Server) -> None:
    """Register the service as generated, except that WatchTable's and SubmitAction's
    responses are written as the servicer gives them: already serialised, once per
    viewer and version (`ShownView.written`), however many streams and replies show
    them. On the wire they are the same responses; only who serialises them changes."""
    generated = _Registration()
    pb_grpc.add_TableServiceServicer_to_server(servicer, cast(grpc.aio.Server, generated))
    handlers = dict(generated.handlers)
    watch, submit = handlers["WatchTable"], handlers["SubmitAction"]
    # no response serializers: grpc writes bytes as they are
    handlers["WatchTable"] = grpc.unary_stream_rpc_method_handler(
        watch.unary_stream, request_deserializer=watch.request_deserializer
    )
    handlers["SubmitAction"] = grpc.unary_unary_rpc_method_handler(
        submit.unary_unary, request_deserializer=submit.request_deserializer
    )
    server.add_generic_rpc_handlers((grpc.method_handlers_generic_handler(SERVICE, handlers),))
    server.add_registered_method_handlers(SERVICE, handlers)


SERVICE = pb.DESCRIPTOR.services_by_name["TableService"].full_name


class _Registration:
    """Stands in for a server to take the generated handlers as they would be registered."""

    handlers: dict[str, grpc.RpcMethodHandler]

    def add_generic_rpc_handlers(self, handlers: Any) -> None:
        pass  # the same handlers come by name below

    def add_registered_method_handlers(
        self, service: str, handlers: dict[str, grpc.RpcMethodHandler]
    ) -> None:
        self.handlers = handlers


def _occupant(seat: pb.SeatAssignment) -> str:
    kind = seat.WhichOneof("occupant")
    if kind == "player_id":
        return validation.player_id(seat.player_id)
    if kind == "computer" and seat.computer:
        return COMPUTER
    raise InvalidArgument("INVALID_SEAT_ASSIGNMENT", "each seat needs a player_id or computer")


def _level(code: int, unspecified: str) -> str:
    """A ComputerLevel number as the table stores it; `unspecified` for 0."""
    if code == seats_pb2.COMPUTER_LEVEL_UNSPECIFIED:
        return unspecified
    if code not in LEVELS:
        raise InvalidArgument(
            "INVALID_COMPUTER_LEVEL", "a computer level must be EASY, NORMAL or HARD"
        )
    return LEVELS[seats_pb2.ComputerLevel.ValueType(code)]


def _cover_after(seconds: int) -> int:
    if not 0 <= seconds <= COVER_AFTER_MAX_SECONDS:
        raise InvalidArgument(
            "INVALID_COVER_AFTER",
            f"cover_after_seconds must be between 1 and {COVER_AFTER_MAX_SECONDS} (0: the default)",
        )
    return seconds


def _plugin(code: int) -> AnyPlugin:
    """The registered game of a `kozyr.common.v1.Game` number."""
    if code != games_pb2.GAME_UNSPECIFIED:
        try:
            return plugin_by_code(code)
        except UnknownGame:
            pass
    names = [_game_name(p) for p in sorted(registered(), key=lambda p: p.code)]
    listed = f"{', '.join(names[:-1])} or {names[-1]}" if len(names) > 1 else "".join(names)
    raise InvalidArgument("INVALID_GAME", f"game must be {listed}")


def _game_name(plugin: AnyPlugin) -> str:
    """A game as the `Game` enum names it (without GAME_), or its id if the enum does not."""
    try:
        return games_pb2.Game.Name(games_pb2.Game.ValueType(plugin.code)).removeprefix("GAME_")
    except ValueError:
        return plugin.id


def _options(request: pb.CreateTableRequest, plugin: AnyPlugin) -> dict[str, Any]:
    """The options of the `options` oneof's field named after the game (none: defaults),
    as the plugin reads their fields."""
    given = request.WhichOneof("options")
    if given is None:
        return {}
    if given != plugin.id:
        raise InvalidArgument("OPTIONS_GAME_MISMATCH", f"{given} options for a {plugin.id} table")
    return plugin.options_from_wire(fields_of(getattr(request, given)))
