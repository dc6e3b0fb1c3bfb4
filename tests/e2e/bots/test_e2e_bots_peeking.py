"""No peeking, checked on the bots process's own inputs (real processes, PostgreSQL and
NATS): with KOZYR_BOTS_INPUT_LOG the process records every public event it is handed
and every answer and refusal of the table service, exactly as received. A 3-5-8 table
(a scripted person and two computers) and a Khözör table (one person in each team, six
computers of mixed levels, the persons signalling now and then) are played to the end;
then every input goes through the leak checker against the admin's history:

* public events: no card and no unrevealed seed at all (a spectator's bar);
* every view, submit reply and history the bots got is of a computer seat, and shows
  only what that seat may know at its version — never a card of a person's hand, nor
  the other team's signals;
* refusals: no card in their texts.

And the bots identity is refused a person's seat: its view, its history and a move.
"""

from __future__ import annotations

import asyncio
import copy
import random
from collections import defaultdict
from dataclasses import replace
from pathlib import Path
from typing import Any

import grpc
import pytest
from google.protobuf import json_format

from kozyr.api.common.v1 import games_pb2
from kozyr.api.table.v1 import events_pb2
from kozyr.api.table.v1 import table_service_pb2 as pb
from kozyr.client import TableClient
from kozyr.runtime.auth import BOTS_SUBJECT, Role
from kozyr.runtime.errors import error_details
from tests.e2e.bots.conftest import BotsStack
from tests.e2e.bots.games import GAME_SECONDS, computer, open_table
from tests.e2e.leaks import (
    KHOZOR_TEAMS,
    THREE_FIVE_EIGHT,
    LoggedEvent,
    Seen,
    find_leaks,
    logged_events,
    seen_history,
    seen_public,
    seen_view,
)
from tests.e2e.players import ScriptedClient, chooser, play_table
from tests.support.bots import decoded
from tests.support.bots import inputs as inputs_of
from tests.support.tables import Seat, token

pytestmark = pytest.mark.e2e

SeatList = list[str | pb.SeatAssignment | None]
THREE_FIVE_EIGHT_SEATS: SeatList = ["ana", computer("normal"), computer("easy")]
KHOZOR_PERSONS = {0: "p0", 3: "p3"}  # one in each team (teams are seats of one parity)
KHOZOR_LEVELS = ["normal", "easy", "normal", "easy", "easy", "normal", "normal", "easy"]
KHOZOR_SEATS: SeatList = [
    KHOZOR_PERSONS.get(seat) or computer(level) for seat, level in enumerate(KHOZOR_LEVELS)
]


def _answer_items(entry: dict[str, Any]) -> tuple[str, int | None, list[Seen]]:
    """The table and seat an answer is about, and what the bots received in it."""
    request = decoded(entry["request_type"], entry["request"])
    seat = request.seat if request.HasField("seat") else None
    answer = decoded(entry["type"], entry["data"])
    where = f"{entry['method']} (seat {seat})"
    if isinstance(answer, pb.GetTableResponse | pb.SubmitActionResponse):
        return request.table_id, seat, [seen_view(answer.view, where)]
    if isinstance(answer, pb.GetHistoryResponse):
        return request.table_id, seat, [seen_history(event) for event in answer.events]
    raise AssertionError(f"an answer the check does not know: {entry['type']}")


async def _admin_history(stack: BotsStack, table_id: str) -> list[LoggedEvent]:
    async with TableClient(stack.table.target, token("admin", Role.ADMIN)) as admin:
        return logged_events(await admin.history(table_id))


async def _play(stack: BotsStack, table_id: str, persons: dict[int, str]) -> None:
    rng = random.Random(7)
    clients = [
        ScriptedClient(lambda: stack.table.target, table_id, player, seat,
                       chooser(Seat(seat, player, rng), rng, signal_rate=0.2))
        for seat, player in persons.items()
    ]  # fmt: skip
    await play_table(clients, GAME_SECONDS)


async def _assert_bots_refused_a_persons_seat(stack: BotsStack, table_id: str) -> None:
    """At Ana's first turn (the computers play up to it, then the table waits for her):
    the bots identity may not read her seat, its history, nor make her move."""
    async with TableClient(stack.table.target, token("ana")) as ana:
        async with asyncio.timeout(30):
            async for view in ana.watch(table_id):
                if 0 in view.turn.seats:
                    break
    async with TableClient(stack.table.target, token(BOTS_SUBJECT, Role.SERVICE)) as bots:
        move = bots.submit(table_id, view.legal_actions[0], expected_version=view.version, seat=0)
        for call in (bots.get_table(table_id, seat=0), bots.history(table_id, seat=0), move):
            with pytest.raises(grpc.aio.AioRpcError) as caught:
                await call
            assert caught.value.code() == grpc.StatusCode.PERMISSION_DENIED
            assert error_details(caught.value).reason == "SEAT_NOT_COMPUTER"


async def test_no_hidden_card_reaches_the_bots_process(
    bots_stack: BotsStack, tmp_path: Path
) -> None:
    inputs = tmp_path / "bots-inputs.jsonl"
    await bots_stack.start_bots(bots_input_log=inputs)
    tables = {
        await open_table(bots_stack, games_pb2.GAME_THREE_FIVE_EIGHT, THREE_FIVE_EIGHT_SEATS):
            (THREE_FIVE_EIGHT, {0}),
        await open_table(bots_stack, games_pb2.GAME_KHOZOR_TEAMS, KHOZOR_SEATS):
            (KHOZOR_TEAMS, set(KHOZOR_PERSONS)),
    }  # fmt: skip
    three_five_eight, khozor = tables
    await _assert_bots_refused_a_persons_seat(bots_stack, three_five_eight)
    await asyncio.gather(
        _play(bots_stack, three_five_eight, {0: "ana"}), _play(bots_stack, khozor, KHOZOR_PERSONS)
    )
    admin = {table_id: await _admin_history(bots_stack, table_id) for table_id in tables}

    public: defaultdict[str, list[Seen]] = defaultdict(list)
    private: defaultdict[tuple[str, int | None], list[Seen]] = defaultdict(list)
    kinds: defaultdict[str, int] = defaultdict(int)
    for number, entry in enumerate(inputs_of(inputs)):
        kinds[entry["kind"]] += 1
        if entry["kind"] == "event":
            event: events_pb2.PublicTableEvent = decoded(entry["type"], entry["data"])
            data = json_format.MessageToDict(event)
            public[event.table_id].append(seen_public(data, f"input #{number} {entry['subject']}"))
        elif entry["kind"] == "answer":
            table_id, seat, seen = _answer_items(entry)
            private[table_id, seat] += seen
        else:  # a refusal: its texts may name no card at all
            request = decoded(entry["request_type"], entry["request"])
            where = f"input #{number} refusal {entry['reason']} of {entry['method']}"
            public[request.table_id].append(seen_public({"texts": entry["texts"]}, where))
    assert kinds["event"] > 100, dict(kinds)
    assert kinds["answer"] > 100, dict(kinds)

    problems: list[str] = []
    for table_id, items in public.items():
        if table_id in tables:
            problems += find_leaks(tables[table_id][0], admin[table_id], None, items)
    for (table_id, seat), items in private.items():
        if table_id not in tables:
            continue
        game, persons = tables[table_id]
        assert seat is not None, "the bots read a spectator's view"
        assert seat not in persons, f"the bots read a person's seat {seat}"
        assert all(_is_of(item, seat) for item in items)
        problems += find_leaks(game, admin[table_id], seat, items)
    assert not problems, problems[:20]
    assert {seat for table_id, seat in private if table_id == khozor} == {1, 2, 4, 5, 6, 7}
    _assert_the_check_bites(admin[three_five_eight], private[three_five_eight, 1])


def _assert_the_check_bites(admin: list[LoggedEvent], views: list[Seen]) -> None:
    """The same check, on one of those views with a card of Ana's added, reports it."""
    ana_card = next(e for e in admin if e.type == "CardsDealt").data["hands"][0][0]
    first = next(item for item in views if item.kind == "view")
    leaky = copy.deepcopy(first.data)
    leaky[THREE_FIVE_EIGHT]["hand"].append(ana_card)
    problems = find_leaks(THREE_FIVE_EIGHT, admin, 1, [replace(first, data=leaky)])
    assert any(f"card {ana_card}" in problem for problem in problems), problems


def _is_of(item: Seen, seat: int) -> bool:
    """A view names its seat; a history event is the seat's by the request."""
    return item.kind != "view" or item.data.get("seat") == seat
