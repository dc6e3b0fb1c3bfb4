"""The public table events on the wire: `kozyr.table.v1.PublicTableEvent` messages.

`outbox_messages` turns the events of one append into the messages the table service
queues with it (`kozyr.eventstore.NewMessage`, channel "public", type = the event's
name), so that the relay publishes them on "<root>.public.table.<id>.<Type>".
The consumers (bots, clock, matchmaking) read them back with
`kozyr.tablewire.public` (`decode`, `published_event`).
"""

from __future__ import annotations

from collections.abc import Sequence

from google.protobuf.struct_pb2 import Struct

from kozyr.api.common.v1 import seats_pb2
from kozyr.api.table.v1 import events_pb2
from kozyr.bus.subjects import PUBLIC_CHANNEL
from kozyr.eventstore import NewMessage
from kozyr.games.codec import to_json
from kozyr.table.domain.model import SeatControl
from kozyr.table.domain.public import (
    DealEnded,
    PublicEvent,
    PublicSeat,
    SeatControlChanged,
    TableFinished,
    TableOpened,
    TurnEnd,
    TurnEnded,
    TurnStarted,
)

_CONTROL = {
    SeatControl.PERSON: seats_pb2.SEAT_CONTROL_PERSON,
    SeatControl.COMPUTER: seats_pb2.SEAT_CONTROL_COMPUTER,
    SeatControl.ABSENT: seats_pb2.SEAT_CONTROL_ABSENT,
}
_TURN_END = {
    TurnEnd.PLAYED: events_pb2.TURN_END_PLAYED,
    TurnEnd.EXPIRED: events_pb2.TURN_END_EXPIRED,
    TurnEnd.SUPERSEDED: events_pb2.TURN_END_SUPERSEDED,
}


def outbox_messages(table_id: str, events: Sequence[PublicEvent]) -> list[NewMessage]:
    """One outbox message per public event, in order."""
    return [
        NewMessage(
            PUBLIC_CHANNEL, type(event).__name__, encode(table_id, event).SerializeToString()
        )
        for event in events
    ]


def encode(table_id: str, event: PublicEvent) -> events_pb2.PublicTableEvent:
    """The wire message of one public event."""
    message = events_pb2.PublicTableEvent(table_id=table_id)
    match event:
        case TableOpened():
            options = Struct()
            options.update(to_json(dict(event.options)))
            message.table_opened.CopyFrom(
                events_pb2.TableOpened(
                    game_id=event.game_id,
                    options=options,
                    seats=_seats(event.seats),
                    cover_after_seconds=event.cover_after_seconds,
                )
            )
        case TurnStarted():
            started = events_pb2.TurnStarted(
                number=event.number, kind=event.kind, seats=_seats(event.seats)
            )
            if event.deadline is not None:
                started.deadline.FromDatetime(event.deadline)
            message.turn_started.CopyFrom(started)
        case TurnEnded():
            message.turn_ended.CopyFrom(
                events_pb2.TurnEnded(number=event.number, how=_TURN_END[event.how])
            )
        case SeatControlChanged():
            message.seat_control_changed.CopyFrom(
                events_pb2.SeatControlChanged(seat=_seat(event.seat))
            )
        case DealEnded():
            message.deal_ended.CopyFrom(
                events_pb2.DealEnded(deal=event.deal, scores=list(event.scores))
            )
        case TableFinished():
            results = [
                events_pb2.SeatResult(
                    seat=r.seat,
                    player_id=r.player_id,
                    place=r.place,
                    score=r.score,
                    turns=r.turns,
                    covered_turns=r.covered_turns,
                    turns_since_cover=r.turns_since_cover,
                    covered_at_end=r.covered_at_end,
                )
                for r in event.results
            ]
            message.table_finished.CopyFrom(
                events_pb2.TableFinished(game_id=event.game_id, results=results)
            )
    return message


def _seat(seat: PublicSeat) -> events_pb2.PublicSeat:
    return events_pb2.PublicSeat(
        seat=seat.seat, player_id=seat.player_id, control=_CONTROL[seat.control]
    )


def _seats(seats: Sequence[PublicSeat]) -> list[events_pb2.PublicSeat]:
    return [_seat(seat) for seat in seats]
