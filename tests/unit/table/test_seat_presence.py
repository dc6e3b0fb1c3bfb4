"""A seat's presence has three states (issue 26): a person's seat starts unknown — the
clock has recorded nothing yet — and the first `SetSeatPresence` ends that, whichever
way it goes; a computer seat is always online. Views say so in `SeatInfo.presence`
(and `online` is true only when known online)."""

from __future__ import annotations

from kozyr.api.common.v1 import seats_pb2
from kozyr.eventstore import InMemoryEventStore
from kozyr.games import three_five_eight
from kozyr.table.app import Actor, TableApp
from kozyr.table.edge.shown import table_view

MATCHMAKER = Actor("matchmaker", "service")
CLOCK = Actor("clock", "service")


def _presence(view: object) -> list[tuple[int, bool]]:
    return [(s.presence, s.online) for s in view.seats]  # type: ignore[attr-defined]


async def test_people_start_unknown_computers_online_and_the_clock_s_word_ends_it() -> None:
    app = TableApp(InMemoryEventStore())
    created = await app.create(
        request_id="create",
        game_id=three_five_eight.GAME_ID,
        options={},
        seats=("ana", "bogdan", ""),
        actor=MATCHMAKER,
    )
    table = created.table
    unknown = (seats_pb2.PRESENCE_UNKNOWN, False)
    online = (seats_pb2.PRESENCE_ONLINE, True)
    offline = (seats_pb2.PRESENCE_OFFLINE, False)
    for seat in (0, 1, 2, None):
        assert _presence(table_view(table, seat)) == [unknown, unknown, online], seat

    went = await app.set_seat_presence(table.table_id, 0, False, request_id="p0", actor=CLOCK)
    assert went.applied, "offline is news for an unknown seat"
    came = await app.set_seat_presence(table.table_id, 1, True, request_id="p1", actor=CLOCK)
    assert came.applied, "online is news for an unknown seat"
    again = await app.set_seat_presence(table.table_id, 1, True, request_id="p2", actor=CLOCK)
    assert not again.applied
    assert _presence(table_view(again.table, None)) == [offline, online, online]
