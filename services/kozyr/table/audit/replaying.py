"""`replay`: a table's story deal by deal, as the moderator, one seat or a spectator saw
it; `open_hand_replay`: as an open-hand spectator may see it now (docs/open-hand.md)."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass, replace

from kozyr.eventstore import RecordedEvent
from kozyr.table.adapters.repository import deadline_of
from kozyr.table.audit.games import AuditError, Data, NoOpenHand, NoSuchSeat, profile_of
from kozyr.table.audit.text import describe_error, render_replay, step_text
from kozyr.table.domain import model
from kozyr.table.domain.history import history_data
from kozyr.table.domain.model import Table


@dataclass(frozen=True, slots=True)
class Origin:
    """Who caused an event and when, from its metadata: a moderator's question in most
    disputes ("did I play that card, or the clock?"). Never shown in a seat's replay."""

    actor: str
    role: str
    request_id: str | None
    recorded_at: str

    @classmethod
    def of(cls, event: RecordedEvent) -> Origin:
        meta = event.metadata
        request_id = meta.get("request_id")
        return cls(
            actor=str(meta.get("actor", "?")),
            role=str(meta.get("role", "?")),
            request_id=request_id if isinstance(request_id, str) else None,
            recorded_at=event.recorded_at.isoformat(),
        )

    def to_dict(self) -> Data:
        return {
            "actor": self.actor,
            "role": self.role,
            "request_id": self.request_id,
            "recorded_at": self.recorded_at,
        }


@dataclass(frozen=True, slots=True)
class Step:
    """One event as the viewer saw it (`data` is redacted for a seat; `origin` is the
    moderator's only) at a table of `game_id` (whose plugin writes its text).

    `recorded_at` (ISO 8601 with its zone) is every viewer's: a seat's history carries
    the time of each event it was shown (GetHistory's `recorded_at`)."""

    position: int
    type: str
    data: Data
    origin: Origin | None = None
    game_id: str | None = None
    recorded_at: str = ""

    def to_dict(self) -> Data:
        return {
            "position": self.position,
            "type": self.type,
            "recorded_at": self.recorded_at,
            "data": self.data,
            "text": step_text(self.type, self.data, self.game_id),
            "origin": None if self.origin is None else self.origin.to_dict(),
        }


@dataclass(frozen=True, slots=True)
class DealReplay:
    """One deal (3-5-8) or round (Khözör): its deal event, then every later step."""

    number: int
    start: Step
    steps: tuple[Step, ...]

    @property
    def tricks(self) -> list[Data]:
        """The completed tricks in order, for a game with tricks (3-5-8; public facts)."""
        trick = profile_of(self.start.game_id).trick if self.start.game_id else None
        if trick is None:
            return []
        return [s.data for s in self.steps if s.type == trick.trick_event]

    def to_dict(self) -> Data:
        return {
            "number": self.number,
            "start": self.start.to_dict(),
            "steps": [s.to_dict() for s in self.steps],
            "tricks": self.tricks,
        }


@dataclass(frozen=True, slots=True)
class OpenHands:
    """What an open-hand spectator's replay adds (docs/open-hand.md): every seat's hand
    at log `version`, the one right before the move `delay` moves back (or the end)."""

    delay: int
    version: int
    hands: tuple[tuple[str, ...], ...]

    def to_dict(self) -> Data:
        return {"delay": self.delay, "version": self.version, "hands": list(self.hands)}


@dataclass(frozen=True, slots=True)
class Replay:
    """A whole table as one viewer may see it: the moderator (no seat, not a spectator),
    a seat, or a spectator (with `open_hands`: an open-hand one, cut at its delay)."""

    table_id: str
    game_id: str
    seat: int | None
    seats: tuple[str, ...]
    options: Data
    version: int
    over: bool
    result: Data
    opening: tuple[Step, ...]
    deals: tuple[DealReplay, ...]
    ending: tuple[Step, ...]
    spectator: bool = False
    open_hands: OpenHands | None = None

    @property
    def moderator(self) -> bool:
        """Every card and who sent each command: the moderator's replay."""
        return self.seat is None and not self.spectator

    def to_dict(self) -> Data:
        return {
            "table_id": self.table_id,
            "game_id": self.game_id,
            "seat": self.seat,
            "spectator": self.spectator,
            "open_hands": None if self.open_hands is None else self.open_hands.to_dict(),
            "seats": list(self.seats),
            "options": self.options,
            "version": self.version,
            "over": self.over,
            "result": self.result,
            "opening": [s.to_dict() for s in self.opening],
            "deals": [d.to_dict() for d in self.deals],
            "ending": [s.to_dict() for s in self.ending],
        }

    def to_text(self) -> str:
        return render_replay(self)


def _decoded(events: Sequence[RecordedEvent]) -> Iterator[tuple[RecordedEvent, Table]]:
    """Each event with the table right after it; AuditError if the stream is no table
    or does not fold (run `verify` to learn why)."""
    table: Table | None = None
    for event in events:
        try:
            decoded = model.decode(table, event.type, event.data)
            table = model.apply(table, decoded, deadline_of(event), event.recorded_at)
        except Exception as err:
            raise AuditError(
                f"event #{event.position} ({event.type}) cannot be replayed: {describe_error(err)}"
            ) from None
        yield event, table


def replay(
    events: Sequence[RecordedEvent], seat: int | None = None, *, spectator: bool = False
) -> Replay:
    """The game deal by deal; every card for the moderator (seat None), or only what
    `seat` saw — or, `spectator`, what a spectator saw: each game event passes through
    the game's `redact` for that viewer, as GetHistory's does."""
    moderator = seat is None and not spectator
    if not events:
        raise AuditError("the stream holds no events")
    opening: list[Step] = []
    deals: list[tuple[int, Step, list[Step]]] = []
    ending: list[Step] = []
    table: Table | None = None
    for event, table in _decoded(events):
        profile = profile_of(table.game_id)
        _check_seat(table, seat)
        data = _as_seen(table, event, seat, moderator)
        if data is None:
            continue
        origin = Origin.of(event) if moderator else None
        step = Step(
            event.position, event.type, data, origin, table.game_id, event.recorded_at.isoformat()
        )
        if event.type == profile.deal_event:
            deals.append((int(data[profile.number_field]), step, []))
        elif event.type == profile.result_event or ending:
            ending.append(step)
        elif deals:
            deals[-1][2].append(step)
        else:
            opening.append(step)
    assert table is not None
    return Replay(
        table_id=table.table_id,
        game_id=table.game_id,
        seat=seat,
        seats=table.seats,
        options=dict(table.options),
        version=table.version,
        over=table.is_over,
        result=table.game.result(table.state),
        opening=tuple(opening),
        deals=tuple(DealReplay(n, start, tuple(steps)) for n, start, steps in deals),
        ending=tuple(ending),
        spectator=spectator,
    )


def open_hand_replay(events: Sequence[RecordedEvent]) -> Replay:
    """What an open-hand spectator may see of the table now (docs/open-hand.md): the
    spectator's replay cut where his view is — right before the move the table's delay
    moves back, the whole table once it is over — with every seat's hand there; the
    same cut as GetTable's and GetHistory's `open_hand`. NoOpenHand at a table without
    the option."""
    tables = [table for _, table in _decoded(events)]
    if not tables:
        raise AuditError("the stream holds no events")
    final = tables[-1]
    if final.open_hand_delay <= 0:
        raise NoOpenHand("this table has no open-hand spectating (its open_hand_delay is 0)")
    shown = final.open_hand_version()
    cut = replay(events[:shown], spectator=True)
    hands = OpenHands(final.open_hand_delay, shown, model.open_hands(tables[shown - 1]))
    return replace(cut, open_hands=hands)


def _check_seat(table: Table, seat: int | None) -> None:
    if seat is not None and not 0 <= seat < len(table.seats):
        raise NoSuchSeat(f"there is no seat {seat}: this table has seats 0-{len(table.seats) - 1}")


def _as_seen(table: Table, event: RecordedEvent, seat: int | None, moderator: bool) -> Data | None:
    """The event's data for the viewer: whole for the moderator, else exactly what the
    table service's GetHistory gives that seat or a spectator (`history_data`: table
    events are public, game events pass the game's redaction; None: never learnt of)."""
    data = history_data(table, event, seat, full=moderator)
    return None if data is None else dict(data)
