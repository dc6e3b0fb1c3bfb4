"""Who may see what, over the real API: watching another seat, history per role, and
ExpireTurn with a turn that is not the open one (real PostgreSQL, NATS and gRPC)."""

from __future__ import annotations

import json
import re

import grpc
import pytest

from kozyr.api.common.v1 import games_pb2
from kozyr.api.table.v1 import table_service_pb2 as pb
from kozyr.client import TableClient
from kozyr.runtime.auth import BOTS_SUBJECT, Role
from kozyr.runtime.errors import error_details
from kozyr.table.adapters.repository import stream_of
from kozyr.table.app import Actor
from tests.integration.table.conftest import RunningTableService
from tests.support.tables import token

pytestmark = pytest.mark.integration

PLAYERS = ["ana", "bogdan", "chiara"]
CARD = re.compile(r'"((?:10|[2-9JQKA])[CDHS])"')


async def _new_358(target: str) -> str:
    async with TableClient(target, token("matchmaker", Role.SERVICE)) as service:
        created = await service.create_table(games_pb2.GAME_THREE_FIVE_EIGHT, PLAYERS)
        return created.table_id


# --------------------------------------------------------------------------- WatchTable


@pytest.mark.parametrize(
    ("watcher", "seat"),
    [("ana", 1), ("ana", 2), ("stranger", 0), ("stranger", 1)],
    ids=["seated-other-seat", "seated-last-seat", "unseated-seat-0", "unseated-seat-1"],
)
async def test_a_player_watching_another_seat_is_refused(
    table_service: RunningTableService, watcher: str, seat: int
) -> None:
    """A player sees only his own seat; one not seated sees the spectator's view."""
    table_id = await _new_358(table_service.target)
    async with TableClient(table_service.target, token(watcher)) as client:
        stream = client.watch(table_id, seat=seat)
        with pytest.raises(grpc.aio.AioRpcError) as caught:
            await anext(stream)
        await stream.aclose()
    assert caught.value.code() == grpc.StatusCode.PERMISSION_DENIED
    assert error_details(caught.value).reason == "NOT_YOUR_SEAT"


async def test_a_player_watching_his_own_seat_by_number_sees_it(
    table_service: RunningTableService,
) -> None:
    table_id = await _new_358(table_service.target)
    async with TableClient(table_service.target, token("bogdan")) as bogdan:
        stream = bogdan.watch(table_id, seat=1)
        view = await anext(stream)
        await stream.aclose()
    assert view.seat == 1
    assert len(view.three_five_eight.hand) == 6


# --------------------------------------------------------------------------- GetHistory


def _history_text(events: list[pb.HistoryEvent]) -> list[tuple[int, str, object]]:
    return [(e.version, e.type, json.loads(e.data_json)) for e in events]


def _hands_dealt(events: list[pb.HistoryEvent]) -> list[list[str]]:
    """The hands of the first deal, from an unredacted history."""
    dealt = next(e for e in events if e.type == "CardsDealt")
    return [[str(c) for c in hand] for hand in json.loads(dealt.data_json)["hands"]]


async def _history(
    target: str, subject: str, role: Role, table_id: str, seat: int | None = None
) -> list[pb.HistoryEvent]:
    async with TableClient(target, token(subject, role)) as client:
        return await client.history(table_id, seat=seat)


async def test_history_is_redacted_by_role_and_seat(table_service: RunningTableService) -> None:
    target = table_service.target
    table_id = await _new_358(target)
    full = await _history(target, "moderator", Role.ADMIN, table_id)
    hands = _hands_dealt(full)
    assert all(len(hand) == 16 for hand in hands), "an admin without seat: the whole truth"
    spectator = await _history(target, "stranger", Role.PLAYER, table_id)
    bogdan = await _history(target, "bogdan", Role.PLAYER, table_id)

    # A service without a seat gets the spectator's history: no hidden card at all.
    service = await _history(target, "matchmaker", Role.SERVICE, table_id)
    assert _history_text(service) == _history_text(spectator)
    shown = set(CARD.findall(json.dumps(_history_text(service))))
    assert not shown & {card for hand in hands for card in hand}

    # A seat named by an admin or a service: that seat's history, its own cards only.
    for subject, role in (("moderator", Role.ADMIN), ("matchmaker", Role.SERVICE)):
        for_seat = await _history(target, subject, role, table_id, seat=1)
        assert _history_text(for_seat) == _history_text(bogdan), f"{role.value} seat 1"
        seen = set(CARD.findall(json.dumps(_history_text(for_seat))))
        assert seen, "seat 1 sees its own first six cards"
        assert seen <= set(hands[1]), f"{role.value} naming seat 1 saw other seats' cards"
    assert _history_text(full) != _history_text(bogdan)


# --------------------------------------------------------------------------- ExpireTurn


async def test_expire_turn_of_a_turn_that_is_not_open_changes_nothing(
    table_service: RunningTableService,
) -> None:
    """Directly against the service's TableApp and its PostgreSQL log: an older turn
    (already played) and a newer one (not reached yet) are both applied=False."""
    target = table_service.target
    app = table_service.service.app
    table_id = await _new_358(target)
    clock = Actor("clock", Role.SERVICE.value)
    table = await app.load(table_id)
    turn = table.game.turn(table.state).number
    played = await app.expire_turn(table_id, turn, clock)
    assert played.applied
    head = await app.store.head(stream_of(table_id))
    assert head is not None
    now = played.table.game.turn(played.table.state).number
    assert now > turn
    for stale in (turn, now - 1, now + 1, now + 2, now + 1_000, 0):
        if stale == now:
            continue
        outcome = await app.expire_turn(table_id, stale, clock)
        assert not outcome.applied, f"turn {stale} while {now} is open"
        assert outcome.table.version == head.version
        assert await app.store.head(stream_of(table_id)) == head, f"turn {stale} appended"
    assert (await app.expire_turn(table_id, now, clock)).applied, "the open turn expires"


# --------------------------------------------------------------------------- the bots


async def test_the_bots_see_and_act_only_for_computer_seats(
    table_service: RunningTableService,
) -> None:
    """No peeking (issue 11): the bots identity reads a seat only while a computer plays it;
    another service still reads any seat."""
    async with TableClient(table_service.target, token("matchmaker", Role.SERVICE)) as service:
        created = await service.create_table(games_pb2.GAME_THREE_FIVE_EIGHT, ["ana", None, None])
        table_id = created.table_id
        assert len((await service.get_table(table_id, seat=0)).three_five_eight.hand) == 6
    async with TableClient(table_service.target, token(BOTS_SUBJECT, Role.SERVICE)) as bots:
        for read in (bots.get_table(table_id, seat=0), bots.history(table_id, seat=0)):
            with pytest.raises(grpc.aio.AioRpcError) as caught:
                await read
            assert caught.value.code() == grpc.StatusCode.PERMISSION_DENIED
            assert error_details(caught.value).reason == "SEAT_NOT_COMPUTER"
        stream = bots.watch(table_id, seat=0)
        with pytest.raises(grpc.aio.AioRpcError) as caught:
            await anext(stream)
        await stream.aclose()
        assert error_details(caught.value).reason == "SEAT_NOT_COMPUTER"
        computer = await bots.get_table(table_id, seat=1)
        assert computer.seat == 1
        assert len(computer.three_five_eight.hand) == 6
        spectator = await bots.get_table(table_id)
        assert not spectator.HasField("seat")
        assert not spectator.three_five_eight.hand
