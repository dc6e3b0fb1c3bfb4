"""The gRPC edge of the table service: validate, authorise, call TableApp, shape replies.

Thin by design: every rule lives in the deciders, every state change in TableApp.
Errors are typed KozyrErrors; the runtime's interceptor maps them to statuses.
"""

from __future__ import annotations

import asyncio
import json
from collections import OrderedDict
from collections.abc import AsyncIterator
from datetime import UTC, datetime
from typing import Any, cast

import grpc
from google.protobuf.timestamp_pb2 import Timestamp

from kozyr.api.common.v1 import games_pb2, language_pb2, seats_pb2
from kozyr.api.table.v1 import actions_pb2, views_pb2
from kozyr.api.table.v1 import table_service_pb2 as pb
from kozyr.api.table.v1 import table_service_pb2_grpc as pb_grpc
from kozyr.games.plugin import AnyPlugin, UnknownGame, plugin_by_code, registered
from kozyr.runtime.auth import Principal, Role, current_principal
from kozyr.runtime.errors import InvalidArgument
from kozyr.runtime.interceptors import current_request_id, prefer_language
from kozyr.table import access, listing, validation
from kozyr.table.actions import action_from_command, command_from_action, fields_of
from kozyr.table.app import Actor, TableApp
from kozyr.table.views import fits, game_view_fields, game_view_to_proto, set_game_view
from kozyr.tables.history import history_data
from kozyr.tables.model import (
    COMPUTER,
    COVER_AFTER_MAX_SECONDS,
    DEFAULT_COMPUTER_LEVEL,
    SeatControl,
    Table,
)

CONTROLS = {
    seats_pb2.SEAT_CONTROL_PERSON: SeatControl.PERSON,
    seats_pb2.SEAT_CONTROL_COMPUTER: SeatControl.COMPUTER,
    seats_pb2.SEAT_CONTROL_ABSENT: SeatControl.ABSENT,
}
CONTROL_CODES = {v: k for k, v in CONTROLS.items()}
PRESENCE_CODES = {
    None: seats_pb2.PRESENCE_UNKNOWN,
    True: seats_pb2.PRESENCE_ONLINE,
    False: seats_pb2.PRESENCE_OFFLINE,
}
LEVELS = {
    seats_pb2.COMPUTER_LEVEL_EASY: "easy",
    seats_pb2.COMPUTER_LEVEL_NORMAL: "normal",
    seats_pb2.COMPUTER_LEVEL_HARD: "hard",
}
LEVEL_CODES = {v: k for k, v in LEVELS.items()}
LANGUAGES = {
    language_pb2.LANGUAGE_EN: "en",
    language_pb2.LANGUAGE_RO: "ro",
    language_pb2.LANGUAGE_IT: "it",
}


def actor_of(principal: Principal) -> Actor:
    return Actor(principal.subject, principal.role.value, current_request_id())


def _optional(message: Any, field: str) -> int | None:
    return int(getattr(message, field)) if message.HasField(field) else None


def table_view(table: Table, seat: int | None) -> views_pb2.TableView:
    """The whole client state of `seat` (None: a spectator).

    Built in one constructor call from plain data (protobuf's C code fills the nested
    messages), which costs a fraction of setting field by field; whatever does not fit
    that way exactly (`views.fits`) is filled strictly afterwards instead.
    """
    game, plugin = table.game, table.plugin
    turn = game.turn(table.state)
    over = table.is_over
    turn_info: dict[str, Any] = {
        "number": turn.number,
        "kind": turn.kind,
        "seats": list(turn.seats),
    }
    if table.turn_deadline is not None and turn.seats and not over:
        turn_info["deadline"] = _timestamp(table.turn_deadline)
    fields: dict[str, Any] = {
        "table_id": table.table_id,
        "game": plugin.code,
        "version": table.version_for(seat),
        "finished": over,
        "hints_allowed": not table.hints_off,
        "seats": [
            {
                "seat": i,
                "player_id": p,
                "control": CONTROL_CODES[table.control[i]],
                "online": table.is_online(i),
                "presence": PRESENCE_CODES[table.presence(i)],
                "level": LEVEL_CODES.get(
                    table.level_of(i) or "", seats_pb2.COMPUTER_LEVEL_UNSPECIFIED
                ),
            }
            for i, p in enumerate(table.seats)
        ],
        "turn": turn_info,
        "deals": [
            {"number": d.number, "commitment": d.commitment, "seed": d.seed or ""}
            for d in table.deals
        ],
    }
    if seat is not None:
        fields["seat"] = seat
    moves = plugin.listed_moves(table.state, seat) if seat is not None and not over else []
    actions = [dict([plugin.action_of(c)]) for c in moves]  # {oneof field: its fields}
    listed = all(fits(actions_pb2.Action, a) for a in actions)
    game_view = game.view(table.state, seat)
    fast = game_view_fields(table.game_id, game_view)
    if fast is not None and listed:
        try:
            whole: dict[str, Any] = {**fields, "legal_actions": actions, fast[0]: fast[1]}
            return views_pb2.TableView(**whole)
        except (TypeError, ValueError):  # e.g. a number out of its field's range
            pass
    view = views_pb2.TableView(**fields)  # the strict way: the same view, or the drift
    set_game_view(view, game_view_to_proto(table.game_id, game_view))
    view.legal_actions.extend(action_from_command(c, plugin) for c in moves)
    return view


_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


def _timestamp(moment: datetime) -> dict[str, int]:
    """A Timestamp's fields (what `Timestamp.FromDatetime` sets; naive means UTC)."""
    delta = (moment if moment.tzinfo is not None else moment.replace(tzinfo=UTC)) - _EPOCH
    return {"seconds": delta.days * 86_400 + delta.seconds, "nanos": delta.microseconds * 1000}


class ShownView:
    """One viewer's view of one table version, and its wire forms, each made at most once
    and shared by every reply and every stream that shows it (never mutated).

    A move shows each seat's view (and the spectators') to every stream of that viewer:
    built, compared and serialised once here, the same bytes are written to each.
    """

    __slots__ = ("_content", "_written", "view")

    def __init__(self, view: views_pb2.TableView) -> None:
        self.view = view
        self._content: bytes | None = None
        self._written: bytes | None = None

    @property
    def content(self) -> bytes:
        """The view without its version (`_content`): what a stream compares with the
        view it last sent."""
        if self._content is None:
            self._content = _content(self.view)
        return self._content

    @property
    def written(self) -> bytes:
        """The view's `WatchTableResponse`, serialised: what every stream of its viewer
        writes (`add_to_server`: WatchTable's responses go out as given)."""
        if self._written is None:
            self._written = pb.WatchTableResponse(view=self.view).SerializeToString()
        return self._written


class ViewCache:
    """Recent views by (table, version, seat): a change is shown to every watcher of a
    seat, and to the mover in his reply, from one build. A seat's view and a spectator's
    (seat None) are never the same entry. Views are never mutated."""

    def __init__(self, size: int = 4096) -> None:
        self._views: OrderedDict[tuple[str, int, int | None], ShownView] = OrderedDict()
        self._size = size

    def shown(self, table: Table, seat: int | None) -> ShownView:
        key = (table.table_id, table.version, seat)
        found = self._views.get(key)
        if found is None:
            found = self._views[key] = ShownView(table_view(table, seat))
            if len(self._views) > self._size:
                self._views.popitem(last=False)
        return found

    def view(self, table: Table, seat: int | None) -> views_pb2.TableView:
        return self.shown(table, seat).view


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
        seat = access.viewer_seat(current_principal(), table, _optional(request, "seat"))
        return pb.GetTableResponse(view=self.views.view(table, seat))

    async def WatchTable(  # type: ignore[override]  # it yields the serialised responses
        self, request: pb.WatchTableRequest, context: grpc.aio.ServicerContext
    ) -> AsyncIterator[bytes]:
        """Every version the caller's viewer has not seen, as serialised WatchTableResponses
        shared by every stream of the same viewer (`ShownView.written`, `add_to_server`)."""
        table_id = validation.table_id(request.table_id)
        last = validation.version(request.from_version, "from_version")
        principal = current_principal()
        requested = _optional(request, "seat")
        with self.app.notifier.watching(table_id) as watch:
            # Registered before the first read, so no append after it goes unheard.
            table = await self.app.load(table_id)  # NOT_FOUND first
            watch.hear(table.version)
            last, sent = self._resume(table, access.viewer_seat(principal, table, requested), last)
            while not self.shutting_down.is_set():
                changed = watch.changed()
                if watch.heard > last:
                    table = await self.app.tables.at_least(table_id, watch.heard)
                    if table.version > last:
                        seat = access.viewer_seat(principal, table, requested)
                        shown = self.views.shown(table, seat)
                        if shown.content != sent:
                            yield shown.written
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

    async def SubmitAction(
        self, request: pb.SubmitActionRequest, context: grpc.aio.ServicerContext
    ) -> pb.SubmitActionResponse:
        prefer_language(LANGUAGES.get(request.language))
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
        return pb.SubmitActionResponse(
            view=self.views.view(outcome.table, seat), duplicate=outcome.duplicate
        )

    async def GetHistory(
        self, request: pb.GetHistoryRequest, context: grpc.aio.ServicerContext
    ) -> pb.GetHistoryResponse:
        principal = current_principal()
        table_id = validation.table_id(request.table_id)
        start = validation.version(request.from_version, "from_version")
        size = validation.page_size(request.page_size)
        requested = _optional(request, "seat")
        table = await self.app.load(table_id)
        seat = access.viewer_seat(principal, table, requested)
        full = principal.role is Role.ADMIN and requested is None
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


def add_to_server(servicer: TableServicer, server: grpc.aio.Server) -> None:
    """Register the service as generated, except that WatchTable's responses are written
    as the servicer yields them: already serialised, once per viewer and version
    (`ShownView.written`), however many streams show them. On the wire they are the
    same `WatchTableResponse`; only who serialises them changes."""
    generated = _Registration()
    pb_grpc.add_TableServiceServicer_to_server(servicer, cast(grpc.aio.Server, generated))
    handlers = dict(generated.handlers)
    watch = handlers["WatchTable"]
    handlers["WatchTable"] = grpc.unary_stream_rpc_method_handler(
        watch.unary_stream, request_deserializer=watch.request_deserializer
    )  # no response serializer: grpc writes bytes as they are
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
    """A game as the enum names it (THREE_FIVE_EIGHT), or its id if the enum does not."""
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


def _content(view: views_pb2.TableView) -> bytes:
    """A view without its version: a change this seat cannot see (the other team's
    signal) sends no new view, so the stream does not even reveal *that* it happened."""
    copy = views_pb2.TableView()
    copy.CopyFrom(view)
    copy.version = 0
    return copy.SerializeToString(deterministic=True)
