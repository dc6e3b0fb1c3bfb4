"""The bots playing computer seats, in-process beside a real table service (real gRPC,
PostgreSQL and NATS), at Khözör's first turn — the opener's confirmation, open to a
whole team of persons and computers alike:

* the bots act for the computer seats of a `TurnStarted` only: they never so much as
  read a person's seat (what their input record shows), and a team whose lowest seat
  is a person's still gets its confirmation from one of its computers;
* a computer seat's two signals set in one turn are two requests with two request ids,
  both recorded in the table's log.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Sequence
from pathlib import Path

import pytest

from kozyr.api.common.v1 import games_pb2, seats_pb2
from kozyr.api.table.v1 import views_pb2
from kozyr.bus.streams import jetstream_name
from kozyr.bus.subjects import PUBLIC_CHANNEL
from kozyr.client import TableClient
from kozyr.runtime.auth import Role
from kozyr.table.adapters.repository import stream_of
from tests.integration.bots.conftest import running_bots
from tests.integration.table.conftest import RunningTableService, running_table_service
from tests.support.bots import requested_seats
from tests.support.bus import until_handled
from tests.support.tables import token

pytestmark = [pytest.mark.integration, pytest.mark.timeout(120)]

PERSONS = {0: "p0", 1: "p1"}
"""The lowest seat of either team is a person's (teams are the seats of one parity)."""
WAIT_SECONDS = 30.0
DEALS_TRIED = 60
"""Deals dealt until a seat of the opening team holds both a 3-set and a 5-set (about
one deal in five does)."""


@pytest.fixture
async def table(
    database_url: str, nats_url: str, subject_root: str
) -> AsyncIterator[RunningTableService]:
    async with running_table_service(database_url, nats_url, subject_root) as running:
        yield running


async def _open(table: RunningTableService, seats: Sequence[str | None], request_id: str) -> str:
    async with TableClient(table.target, token("matchmaker", Role.SERVICE)) as service:
        created = await service.create_table(
            games_pb2.GAME_KHOZOR_TEAMS, seats, request_id=request_id
        )
    return created.table_id


async def _after_the_confirmation(table: RunningTableService, table_id: str) -> views_pb2.TableView:
    """The table's view once the opener's confirmation is made (within WAIT_SECONDS)."""
    async with TableClient(table.target, token("admin", Role.ADMIN)) as admin:
        watch = admin.watch(table_id)
        try:
            async with asyncio.timeout(WAIT_SECONDS):
                async for view in watch:
                    if view.turn.kind != "confirm_opener":
                        return view
        finally:
            await watch.aclose()
    raise AssertionError("the watch ended")


async def test_the_bots_act_for_the_computer_seats_of_a_turn_only(
    table: RunningTableService, nats_url: str, subject_root: str, tmp_path: Path
) -> None:
    record = tmp_path / "bots-inputs.jsonl"
    seats = [PERSONS.get(seat) for seat in range(8)]
    async with running_bots(table, nats_url, subject_root, bots_input_log=str(record)):
        table_id = await _open(table, seats, "mixed")
        confirmed = await _after_the_confirmation(table, table_id)
        await until_handled(
            table.service.store,
            nats_url,
            jetstream_name(PUBLIC_CHANNEL, subject_root),
            "bots-public",
        )
    assert confirmed.turn.kind != "confirm_opener"
    asked = requested_seats(record, table_id)
    computers = {seat for seat in range(8) if seat not in PERSONS}
    assert asked["answer"], "the bots played the computer seats"
    assert asked["answer"] | asked["refusal"] <= computers, "the bots acted for a person's seat"


async def _seat_with_two_signals(table: RunningTableService) -> tuple[str, int]:
    """A table of eight persons whose opening team has a seat that holds both sets (so
    that its view lists a toggle of each signal), and that seat."""
    players = [f"p{seat}" for seat in range(8)]
    async with TableClient(table.target, token("matchmaker", Role.SERVICE)) as service:
        for attempt in range(DEALS_TRIED):
            table_id = await _open(table, players, f"signals-{attempt}")
            for seat in (await service.get_table(table_id)).turn.seats:
                view = await service.get_table(table_id, seat=seat)
                kinds = {
                    a.toggle_signal.signal
                    for a in view.legal_actions
                    if a.WhichOneof("action") == "toggle_signal"
                }
                if len(kinds) == 2:
                    return table_id, seat
    raise AssertionError(f"{DEALS_TRIED} deals without a seat holding both sets")


async def test_two_signals_of_one_turn_are_two_requests_both_recorded(
    table: RunningTableService, nats_url: str, subject_root: str
) -> None:
    """The seat is covered (a computer takes it over at its turn): before confirming the
    opener the bot sets both its signals, each with its own request id; a request id
    shared by the two would make the second a repeat of the first, refused, and that
    signal would wait for the seat's next turn."""
    table_id, seat = await _seat_with_two_signals(table)
    async with running_bots(table, nats_url, subject_root):
        async with TableClient(table.target, token("clock", Role.SERVICE)) as clock:
            covered = await clock.set_seat_control(
                table_id, seat, seats_pb2.SEAT_CONTROL_COMPUTER, request_id="cover"
            )
            assert covered.changed
        await _after_the_confirmation(table, table_id)
    events = await table.service.store.read(stream_of(table_id))
    move = next(e for e in events if str(e.metadata.get("request_id")).startswith("bots:"))
    signals = [
        e
        for e in events
        if e.type == "SignalSet" and e.data["seat"] == seat and e.position < move.position
    ]
    requests = [str(e.metadata.get("request_id")) for e in signals]
    assert len(signals) == 2, f"signals set before the bot's move: {requests}"
    assert len(set(requests)) == 2, requests
    assert all(r.startswith(f"bots-signal:{table_id}:") for r in requests), requests
    assert {e.data["kind"] for e in signals} == {"three_set", "five_set"}
