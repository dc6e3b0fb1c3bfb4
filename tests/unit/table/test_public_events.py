"""The public table events of whole games, played through the real TableApp on the
in-memory event store: what the outbox queues beside the raw events, decoded as a
consumer on NATS would (`kozyr.tablewire.public.decode`).

Players move, the clock now and then plays a timed-out turn's default move, and now and
then a seat that must act is covered by a computer and given back. The checks are what
clock, bots and matchmaking rely on: the table opens first and finishes last; every turn
a seat had to take is announced with its kind, seats, controls and the recorded
deadline, and ended once (played, expired or superseded); every deal's end is told with
the scores; the result names places and scores per player; nothing names a card or a
seed; and an append that changes none of those facts (a Khözör signal) queues nothing.
"""

from __future__ import annotations

import random
import re
from dataclasses import dataclass
from datetime import UTC, datetime

import pytest
from google.protobuf import json_format

from kozyr.api.table.v1 import events_pb2
from kozyr.eventstore import InMemoryEventStore, QueuedMessage, RecordedEvent
from kozyr.games import khozor_teams, three_five_eight
from kozyr.table.app import Actor, TableApp
from kozyr.table.domain.model import SeatControl, Table
from kozyr.tablewire.public import decode
from tests.unit.table.test_audit_games import (
    CLOCK,
    MATCHMAKER,
    PLAYERS,
    TIMEOUT_ODDS,
    choose,
)

COVER_ODDS = 0.02
"""How often the seat that must act is covered by a computer (and given back later)."""
CARD = re.compile(r"(?<![A-Za-z0-9])(?:10|[2-9JQKA])[CDHS](?![A-Za-z0-9])|JK-")


@dataclass(frozen=True)
class Append:
    """One append as the outbox holds it: its events, then its public messages."""

    events: tuple[RecordedEvent, ...]
    public: tuple[events_pb2.PublicTableEvent, ...]
    types: tuple[str, ...]
    """The message types (the subjects' last token)."""


@dataclass(frozen=True)
class Played:
    table: Table
    appends: tuple[Append, ...]
    covers: int

    @property
    def public(self) -> list[events_pb2.PublicTableEvent]:
        return [event for append in self.appends for event in append.public]


async def play(game_id: str, seed: int) -> Played:
    rng = random.Random(seed)
    store = InMemoryEventStore()
    app = TableApp(store, new_seed=lambda: rng.randbytes(32))
    table = (
        await app.create(
            request_id="create",
            game_id=game_id,
            options={},
            seats=PLAYERS[game_id],
            actor=MATCHMAKER,
        )
    ).table
    covered: int | None = None
    covers = 0
    for moves in range(100_000):
        if table.is_over:
            break
        turn = table.game.turn(table.state)
        if covered is not None:
            table = await cover(app, table, covered, SeatControl.PERSON, f"back-{moves}")
            covered = None
        elif rng.random() < COVER_ODDS:
            covered, covers = turn.seats[0], covers + 1
            table = await cover(app, table, covered, SeatControl.COMPUTER, f"cover-{moves}")
        elif rng.random() < TIMEOUT_ODDS:
            table = (await app.expire_turn(table.table_id, turn.number, CLOCK)).table
        else:
            seat, command = choose(table, rng)
            player = Actor(table.seats[seat], "player")
            outcome = await app.submit(
                table.table_id, command, request_id=f"move-{moves}", actor=player
            )
            table = outcome.table
    return Played(table, await outbox_appends(store), covers)


async def cover(app: TableApp, table: Table, seat: int, control: SeatControl, key: str) -> Table:
    outcome = await app.set_seat_control(table.table_id, seat, control, request_id=key, actor=CLOCK)
    return outcome.table


async def outbox_appends(store: InMemoryEventStore) -> tuple[Append, ...]:
    """The outbox cut into appends: an append's messages follow its events."""
    async with store.outbox_reader(lock_key=1, on_queued=lambda: None) as reader:
        assert await reader.lead()
        entries = await reader.pending(1_000_000)
    appends: list[Append] = []
    events: list[RecordedEvent] = []
    messages: list[QueuedMessage] = []
    for entry in [*entries, None]:
        item = None if entry is None else entry.item
        if events and (
            item is None
            or (isinstance(item, RecordedEvent) and messages)
            or (isinstance(item, RecordedEvent) and item.metadata != events[-1].metadata)
        ):
            public = tuple(decode(m.payload) for m in messages)
            appends.append(Append(tuple(events), public, tuple(m.type for m in messages)))
            events, messages = [], []
        if isinstance(item, RecordedEvent):
            events.append(item)
        elif isinstance(item, QueuedMessage):
            assert item.channel == "public"
            messages.append(item)
    return tuple(appends)


@pytest.fixture(scope="module", params=[three_five_eight.GAME_ID, khozor_teams.GAME_ID])
async def played(request: pytest.FixtureRequest) -> Played:
    return await play(str(request.param), seed=9)


def case(event: events_pb2.PublicTableEvent) -> str:
    name = event.WhichOneof("event")
    assert name is not None
    return name


def test_the_table_opens_first_and_finishes_last_once(played: Played) -> None:
    cases = [case(e) for e in played.public]
    assert cases[0] == "table_opened"
    assert cases[-1] == "table_finished"
    assert cases.count("table_opened") == cases.count("table_finished") == 1
    opened = played.public[0].table_opened
    assert opened.game_id == played.table.game_id
    assert [s.player_id for s in opened.seats] == list(PLAYERS[played.table.game_id])
    assert all(e.table_id == played.table.table_id for e in played.public)


def test_each_message_type_names_its_case(played: Played) -> None:
    for append in played.appends:
        for kind, event in zip(append.types, append.public, strict=True):
            assert type(getattr(event, case(event))).__name__ == kind


def test_every_turn_started_is_ended_once(played: Played) -> None:
    open_turn: int | None = None
    superseded = 0
    for event in played.public:
        if case(event) == "turn_started":
            assert open_turn is None, f"turn {event.turn_started.number} opened over {open_turn}"
            open_turn = event.turn_started.number
        elif case(event) == "turn_ended":
            assert open_turn == event.turn_ended.number
            open_turn = None
            superseded += event.turn_ended.how == events_pb2.TURN_END_SUPERSEDED
    assert open_turn is None
    assert played.covers
    assert superseded == 2 * played.covers  # each cover of an acting seat, and its return


def test_every_turn_a_seat_took_is_announced_with_its_deadline(played: Played) -> None:
    """The turns in the raw events' metadata are exactly the turns announced, each with
    the kind, seats and deadline recorded in the append that opened it."""
    announced: dict[int, tuple[str, list[int], datetime]] = {}
    for append in played.appends:
        for event in append.public:
            if case(event) == "turn_started":
                started = event.turn_started
                announced[started.number] = (
                    started.kind,
                    [s.seat for s in started.seats],
                    started.deadline.ToDatetime(tzinfo=UTC),
                )
    recorded: dict[int, tuple[str, list[int], datetime]] = {}
    for append in played.appends:
        turn = append.events[-1].metadata["turn"]
        if turn["seats"] and turn["kind"] not in ("chance", "over"):
            deadline = datetime.fromisoformat(append.events[-1].metadata["deadline"])
            recorded.setdefault(turn["number"], (turn["kind"], turn["seats"], deadline))
    assert announced == recorded


def test_controls_in_turns_follow_seat_control_changes(played: Played) -> None:
    controls = {s.seat: s.control for s in played.public[0].table_opened.seats}
    for event in played.public:
        if case(event) == "seat_control_changed":
            controls[event.seat_control_changed.seat.seat] = event.seat_control_changed.seat.control
        if case(event) == "turn_started":
            for seat in event.turn_started.seats:
                assert seat.control == controls[seat.seat]


def test_expired_turns_are_told_as_expired(played: Played) -> None:
    expiries = {
        int(a.events[0].metadata["request_id"].removeprefix("expire-turn-"))
        for a in played.appends
        if a.events[0].metadata["request_id"].startswith("expire-turn-")
    }
    told = {
        e.turn_ended.number
        for e in played.public
        if case(e) == "turn_ended" and e.turn_ended.how == events_pb2.TURN_END_EXPIRED
    }
    assert expiries
    assert told == expiries


def test_every_deal_end_and_the_result_are_told(played: Played) -> None:
    table = played.table
    standing = table.game.standing(table.state)
    deals = [e.deal_ended for e in played.public if case(e) == "deal_ended"]
    assert [d.deal for d in deals] == list(range(1, standing.deals_ended + 1))
    assert list(deals[-1].scores) == list(standing.scores)
    finished = played.public[-1].table_finished
    assert [(r.seat, r.player_id, r.place, r.score) for r in finished.results] == [
        (seat, table.seats[seat], standing.places[seat], standing.scores[seat])
        for seat in range(len(table.seats))
    ]
    if table.game_id == three_five_eight.GAME_ID:
        assert standing.deals_ended == three_five_eight.DEALS
        assert list(standing.scores) == list(table.game.result(table.state)["totals"])
    else:
        winner = table.game.result(table.state)["winner"]
        assert {r.seat % 2 for r in finished.results if r.place == 1} == {"AB".index(winner)}


def test_no_public_event_names_a_card_or_a_seed(played: Played) -> None:
    seeds = [
        value
        for append in played.appends
        for event in append.events
        for key, value in event.data.items()
        if key == "seed"
    ]
    assert seeds
    for event in played.public:
        text = json_format.MessageToJson(event)
        assert not CARD.search(text), text
        assert not any(seed in text for seed in seeds), text


def test_appends_that_change_no_public_fact_queue_nothing(played: Played) -> None:
    """Khözör signals change no turn, control or score: nothing is queued for them, so
    not even the timing of a public message says a signal was made."""
    signals = [
        a for a in played.appends if {e.type for e in a.events} <= {"SignalSet", "SignalCleared"}
    ]
    if played.table.game_id == khozor_teams.GAME_ID:
        assert signals
    assert all(not a.public for a in signals)
