"""Views as the table shows them: each viewer's view of each table version built, compared
and serialised once, and shared by every reply and stream that shows it (issue 25).

A move is shown to every stream of the table: each seat's view, and the spectators'.
`ViewCache` keeps one `ShownView` per (table, version, viewer) — a seat's view and a
spectator's (viewer None) are never the same entry. For a game whose views differ only
in a few keys (`GamePlugin.seat_view`: a seat's hand and what else only it sees), what the
viewers of a version have in common is built once too (`_Frame`: the table's part and
the rest of the game view, from the spectator's view) and serialised once, and each
viewer's view is those bytes followed by its own part's (`ShownView.framed`): parsed,
exactly what `table_view` builds for it alone (tests/unit/table/test_table_views.py),
which remains the way for a game without a `seat_view` and for anything that does not
fit.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable, Hashable
from datetime import UTC, datetime
from typing import Any, TypeVar

from kozyr.api.common.v1 import seats_pb2
from kozyr.api.table.v1 import actions_pb2, views_pb2
from kozyr.api.table.v1 import table_service_pb2 as pb
from kozyr.table.domain.model import SeatControl, Table, open_hands
from kozyr.table.edge import seeds
from kozyr.table.edge.actions import action_from_command
from kozyr.table.edge.views import (
    constructed,
    fits,
    game_view_fields,
    game_view_to_proto,
    set_game_view,
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

_V = TypeVar("_V")


def table_view(table: Table, seat: int | None) -> views_pb2.TableView:
    """The whole client state of `seat` (None: a spectator), built for it alone.

    Built in one constructor call from plain data (protobuf's C code fills the nested
    messages), which costs a fraction of setting field by field; whatever does not fit
    that way exactly (`views.fits`) is filled strictly afterwards instead.
    """
    game, plugin = table.game, table.plugin
    fields = _table_fields(table)
    fields["version"] = table.version_for(seat)
    if seat is not None:
        fields["seat"] = seat
    moves = _moves(table, seat)
    actions = [dict([plugin.action_of(c)]) for c in moves]  # {oneof field: its fields}
    listed = all(fits(actions_pb2.Action, a) for a in actions)
    game_view = game.view(table.state, seat)
    fast = game_view_fields(table.game_id, game_view)
    if fast is not None and listed:
        whole = {**fields, "legal_actions": actions, fast[0]: fast[1]}
        built = constructed(views_pb2.TableView, whole)
        if built is not None:
            return built
    view = views_pb2.TableView(**fields)  # the strict way: the same view, or the drift
    set_game_view(view, game_view_to_proto(table.game_id, game_view))
    view.legal_actions.extend(action_from_command(c, plugin) for c in moves)
    return view


def _table_fields(table: Table) -> dict[str, Any]:
    """TableView's fields that every viewer of this version shares (all but the
    version, the seat, the legal moves and the game view)."""
    turn = table.turn
    over = table.is_over
    turn_info: dict[str, Any] = {
        "number": turn.number,
        "kind": turn.kind,
        "seats": list(turn.seats),
    }
    if table.turn_deadline is not None and turn.seats and not over:
        turn_info["deadline"] = _timestamp(table.turn_deadline)
    shared: dict[str, Any] = {
        "table_id": table.table_id,
        "game": table.plugin.code,
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
        "deals": seeds.deal_records(table),
    }
    upcoming = seeds.next_deal_record(table)
    if upcoming is not None:
        shared["next_deal"] = upcoming
    return shared


def _moves(table: Table, seat: int | None) -> list[Any]:
    """The moves `seat`'s view lists (none for a spectator, none once the game is over)."""
    if seat is None or table.is_over:
        return []
    return table.plugin.listed_moves(table.state, seat)


_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


def _timestamp(moment: datetime) -> dict[str, int]:
    """A Timestamp's fields (what `Timestamp.FromDatetime` sets; naive means UTC)."""
    delta = (moment if moment.tzinfo is not None else moment.replace(tzinfo=UTC)) - _EPOCH
    return {"seconds": delta.days * 86_400 + delta.seconds, "nanos": delta.microseconds * 1000}


class _Frame:
    """What every viewer's view of one version of a table whose game has a `seat_view`
    shares, built and serialised once (`wire`, which each viewer's own part follows): a
    TableView holding the table's part and the game view without the viewers' own keys
    (`own`, taken from the spectator's view: nothing in it is hidden from anyone); None
    where it does not fit as data (then `table_view` builds every view, strictly). For a
    game without a `seat_view` `table_view` builds each viewer's: sharing the table's
    part alone saved nothing measurable (tests/bench/bench_views.py), sharing the game
    view too is what pays.
    """

    __slots__ = ("field", "message", "own", "wire")

    def __init__(self, table: Table, seat_view: Callable[[Any, int | None], dict[str, Any]]):
        public = table.game.view(table.state, None)
        self.own = frozenset(seat_view(table.state, None))
        self.wire: bytes | None = None
        fast = game_view_fields(table.game_id, public)
        self.field = "" if fast is None else fast[0]
        if fast is None:
            return  # not as data: `table_view` builds each view, strictly
        fields = _table_fields(table)
        fields[self.field] = {k: v for k, v in fast[1].items() if k not in self.own}
        try:
            shared = views_pb2.TableView(**fields)
        except (TypeError, ValueError):  # e.g. a number out of its field's range
            return
        self.message = type(getattr(shared, self.field))
        self.wire = shared.SerializeToString(deterministic=True)

    def shown(self, table: Table, seat: int | None) -> ShownView | None:
        """`seat`'s view: its own part after the shared part's bytes (`ShownView.framed`);
        None where its own part does not fit as data (then `table_view` builds it,
        strictly)."""
        plugin = table.plugin
        if self.wire is None or plugin.seat_view is None:
            return None
        part = plugin.seat_view(table.state, seat)
        if part.keys() != self.own:
            return None
        mine = dict(plugin.view_to_wire(part))  # key by key, as for a whole view
        if not fits(self.message, mine):
            return None
        actions = [dict([plugin.action_of(c)]) for c in _moves(table, seat)]
        if not all(fits(actions_pb2.Action, a) for a in actions):
            return None
        own: dict[str, Any] = {"legal_actions": actions, self.field: mine}
        if seat is not None:
            own["seat"] = seat
        try:
            viewers = views_pb2.TableView(**own)
        except (TypeError, ValueError):
            return None
        return ShownView.framed(self.wire, viewers, table.version_for(seat))


class ShownView:
    """One viewer's view of one table version, and its wire forms, each made at most once
    and shared by every reply and every stream that shows it (never mutated).

    Either whole (`ShownView(view)`: the view built for its viewer alone, serialised as
    it is) or framed (`framed`: its frame's shared bytes, then the viewer's own part's),
    where the message itself is parsed only if a reply or GetTable asks for it.
    """

    __slots__ = ("_content", "_view", "_written")

    def __init__(self, view: views_pb2.TableView) -> None:
        self._view: views_pb2.TableView | None = view
        self._content: bytes | None = None
        self._written: bytes | None = None

    @classmethod
    def framed(cls, shared: bytes, own: views_pb2.TableView, version: int) -> ShownView:
        """The view that is `shared` (its frame's part, serialised) with `own` (the
        viewer's part, without its version) and `version` merged in, made as bytes: a
        message's serialisations one after another parse as the messages merged, and the
        parts set disjoint fields (the game view, in both, merges field by field), so no
        whole message is copied, merged or serialised per viewer. Byte for byte it
        differs from the whole view's serialisation (fields out of number order); parsed
        it is the same view (tests/unit/table/test_table_views.py)."""
        shown = cls.__new__(cls)
        shown._view = None
        shown._content = shared + own.SerializeToString(deterministic=True)
        body = shown._content + views_pb2.TableView(version=version).SerializeToString()
        shown._written = _VIEW_TAG + _varint(len(body)) + body
        return shown

    @property
    def view(self) -> views_pb2.TableView:
        if self._view is None:  # framed: the message is what its bytes parse as
            self._view = pb.WatchTableResponse.FromString(self.written).view
        return self._view

    @property
    def content(self) -> bytes:
        """The view without its version: what a stream compares with the view it last
        sent. A change this viewer cannot see (the other team's signal) sends no new
        view, so the stream does not even reveal *that* it happened. Equal bytes always
        mean equal views; a framed and a whole view never compare equal, which costs at
        most one view sent again (a version whose own part does not fit as data)."""
        if self._content is None:
            copy = views_pb2.TableView()
            copy.CopyFrom(self.view)
            copy.version = 0
            self._content = copy.SerializeToString(deterministic=True)
        return self._content

    @property
    def written(self) -> bytes:
        """The view's `WatchTableResponse`, serialised: what every stream of its viewer
        writes, and the mover's SubmitActionResponse too (the view is field 1 of both;
        `servicer.add_to_server`: their responses go out as given)."""
        if self._written is None:
            self._written = pb.WatchTableResponse(view=self.view).SerializeToString()
        return self._written


_VIEW_TAG = bytes([pb.WatchTableResponse.DESCRIPTOR.fields_by_name["view"].number << 3 | 2])
"""WatchTableResponse.view's key on the wire: its field number, wire type 2 (bytes)."""


def _varint(value: int) -> bytes:
    """`value` (≥ 0) as a protobuf varint: seven bits a byte, low first, high bit = more."""
    out = bytearray()
    while value > 0x7F:
        out.append(value & 0x7F | 0x80)
        value >>= 7
    out.append(value)
    return bytes(out)


def _keep(entries: OrderedDict[Any, _V], key: Hashable, value: _V, size: int) -> _V:
    """Add `value` to `entries`, dropping the oldest beyond `size`."""
    entries[key] = value
    if len(entries) > size:
        entries.popitem(last=False)
    return value


OPEN_HAND = "open-hand"
"""The viewer key of the open-hand spectator's views (docs/open-hand.md), which no seat's
(an int) nor the ordinary spectator's (None) can equal."""

Viewer = int | str | None


def open_hand_view(past: Table, delay: int, spectator: views_pb2.TableView) -> views_pb2.TableView:
    """The open-hand spectator's view of `past` (the table `delay` moves ago): the
    ordinary spectator's view of that version with every seat's hand added."""
    view = views_pb2.TableView()
    view.CopyFrom(spectator)
    hands = [
        views_pb2.SeatHand(seat=seat, cards=cards) for seat, cards in enumerate(open_hands(past))
    ]
    view.open_hand.CopyFrom(views_pb2.OpenHand(delay=delay, log_version=past.version, hands=hands))
    return view


class ViewCache:
    """Recent views by (table, version, viewer): a change is shown to every stream of a
    viewer, and to the mover in his reply, from one build; the viewers of one version
    share its `_Frame`. A seat's view, a spectator's and an open-hand spectator's
    (`OPEN_HAND`, keyed by the past version it shows) are never the same entry."""

    def __init__(self, size: int = 4096) -> None:
        self._views: OrderedDict[tuple[str, int, Viewer], ShownView] = OrderedDict()
        self._frames: OrderedDict[tuple[str, int], _Frame] = OrderedDict()
        self._size = size

    def shown(self, table: Table, seat: int | None) -> ShownView:
        key = (table.table_id, table.version, seat)
        found = self._views.get(key)
        if found is None:
            found = _keep(self._views, key, self._build(table, seat), self._size)
        return found

    def view(self, table: Table, seat: int | None) -> views_pb2.TableView:
        return self.shown(table, seat).view

    def open_hand(self, past: Table, delay: int) -> ShownView:
        """The open-hand spectator's view of `past`, the table as it was `delay` log
        events ago (`TableRepository.at_version`): one entry per past version, shared
        by every open-hand stream of the table."""
        key = (past.table_id, past.version, OPEN_HAND)
        found = self._views.get(key)
        if found is None:
            view = open_hand_view(past, delay, self.view(past, None))
            found = _keep(self._views, key, ShownView(view), self._size)
        return found

    def _build(self, table: Table, seat: int | None) -> ShownView:
        seat_view = table.plugin.seat_view
        if seat_view is None:
            return ShownView(table_view(table, seat))
        key = (table.table_id, table.version)
        frame = self._frames.get(key)
        if frame is None:
            frame = _keep(self._frames, key, _Frame(table, seat_view), max(1, self._size // 4))
        return frame.shown(table, seat) or ShownView(table_view(table, seat))
