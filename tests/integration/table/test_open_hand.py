"""Open-hand spectating on a delay over the real API (docs/open-hand.md): GetTable,
WatchTable and GetHistory with `open_hand` show the table `open_hand_delay` moves
behind with every hand, checked against the seats' own views recorded as the game went;
the refusals, with their reasons in every language (real PostgreSQL, NATS and gRPC)."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Mapping

import grpc
import pytest

from kozyr.api.common.v1 import games_pb2
from kozyr.api.table.v1 import table_service_pb2 as pb
from kozyr.api.table.v1 import views_pb2
from kozyr.client import TableClient
from kozyr.runtime.auth import BOTS_SUBJECT, Role
from kozyr.runtime.errors import error_details
from tests.integration.table.conftest import RunningTableService
from tests.support.tables import KHOZOR_PLAYERS, moves_back, token

pytestmark = pytest.mark.integration

DELAY = 3
Hands = tuple[tuple[str, ...], ...]


async def _log_version(admin: TableClient, table_id: str) -> int:
    """The table's log version, as an admin's unredacted history counts it."""
    page: pb.GetHistoryResponse = await admin.stub.GetHistory(
        pb.GetHistoryRequest(table_id=table_id, page_size=1), metadata=admin.metadata
    )
    return page.version


async def _hands(admin: TableClient, table_id: str) -> Hands:
    """Every seat's hand now, from each seat's own view (sorted: the order is the view's)."""
    views = [await admin.get_table(table_id, seat=s) for s in range(len(KHOZOR_PLAYERS))]
    return tuple(tuple(sorted(v.khozor_teams.hand)) for v in views)


def _shown(view: views_pb2.TableView) -> Hands:
    return tuple(tuple(sorted(h.cards)) for h in view.open_hand.hands)


async def _move(admin: TableClient, table_id: str) -> None:
    """One move of the seat on turn (its first listed move that is no signal tap)."""
    live = await admin.get_table(table_id)
    seat = live.turn.seats[0]
    view = await admin.get_table(table_id, seat=seat)
    action = next(a for a in view.legal_actions if a.WhichOneof("action") != "toggle_signal")
    await admin.submit(table_id, action, seat=seat)


async def _open_table(target: str, delay: int) -> str:
    async with TableClient(target, token("matchmaker", Role.SERVICE)) as service:
        created = await service.create_table(
            games_pb2.GAME_KHOZOR_TEAMS,
            list(KHOZOR_PLAYERS),
            table=pb.TableOptions(open_hand_delay=delay),
        )
        return created.table_id


async def test_the_open_hand_view_is_the_table_delay_moves_ago_with_every_hand(
    table_service: RunningTableService,
) -> None:
    target = table_service.target
    table_id = await _open_table(target, DELAY)
    async with (
        TableClient(target, token("moderator", Role.ADMIN)) as admin,
        TableClient(target, token("stranger")) as stranger,
    ):
        watch = stranger.watch(table_id, open_hand=True)
        async with asyncio.timeout(60):  # a guard against a hang, no timed assertion
            streamed = [await anext(watch)]
        recorded: dict[int, Hands] = {}
        made: list[int] = []  # each move's log position
        compared = 0
        for _ in range(12):
            live = await _log_version(admin, table_id)
            recorded[live] = await _hands(admin, table_id)
            view = await stranger.get_table(table_id, open_hand=True)
            assert view.open_hand.delay == DELAY
            assert view.open_hand.log_version == moves_back(made, DELAY, live)
            assert all(h.seat == i for i, h in enumerate(view.open_hand.hands))
            if view.open_hand.log_version in recorded:
                assert _shown(view) == recorded[view.open_hand.log_version]
                compared += 1
            plain = await stranger.get_table(table_id)
            assert not plain.HasField("open_hand")  # the ordinary spectator: live, no hands
            assert not plain.khozor_teams.hand
            made.append(live + 1)
            await _move(admin, table_id)
        assert compared >= 12 - DELAY, "each view shows the table right before a move"
        final = await stranger.get_table(table_id, open_hand=True)
        live = await _log_version(admin, table_id)
        assert final.open_hand.log_version == moves_back(made, DELAY, live) > 1
        # the stream shows the same views, the delay behind, every hand shown, up to now
        async with asyncio.timeout(60):
            while streamed[-1].version < final.version:
                streamed.append(await anext(watch))
        await watch.aclose()
        assert streamed[0].open_hand.log_version == 1, "no move made yet: nothing dealt"
        assert streamed[-1] == final
        for view in streamed:
            if view.open_hand.log_version in recorded:
                assert _shown(view) == recorded[view.open_hand.log_version]
        # the history stops where the view does
        history = await stranger.history(table_id, open_hand=True)
        spectator = await stranger.history(table_id)
        assert [e.version for e in history] == list(range(1, final.version + 1))
        assert history == spectator[: len(history)]
        assert len(spectator) > len(history)


async def test_a_watch_resumed_at_its_view_sends_only_what_is_newer(
    table_service: RunningTableService,
) -> None:
    target = table_service.target
    table_id = await _open_table(target, DELAY)
    async with (
        TableClient(target, token("moderator", Role.ADMIN)) as admin,
        TableClient(target, token("stranger")) as stranger,
    ):
        for _ in range(DELAY + 1):
            await _move(admin, table_id)
        held = await stranger.get_table(table_id, open_hand=True)
        watch = stranger.watch(table_id, from_version=held.version, open_hand=True)
        await _move(admin, table_id)
        first = await anext(watch)
        await watch.aclose()
        assert first.version > held.version
        assert first.open_hand.log_version > held.open_hand.log_version


async def _refusal(
    call: Awaitable[object],
) -> tuple[grpc.StatusCode, str | None, Mapping[str, str]]:
    with pytest.raises(grpc.aio.AioRpcError) as caught:
        await call
    details = error_details(caught.value)
    return caught.value.code(), details.reason, details.messages


@pytest.mark.parametrize("rpc", ["get", "watch", "history"])
async def test_open_hand_refusals_on_every_channel(
    table_service: RunningTableService, rpc: str
) -> None:
    target = table_service.target
    table_id = await _open_table(target, DELAY)
    async with TableClient(target, token("matchmaker", Role.SERVICE)) as service:
        closed = await service.create_table(games_pb2.GAME_KHOZOR_TEAMS, list(KHOZOR_PLAYERS))
    cases = [
        ("stranger", closed.table_id, None, grpc.StatusCode.FAILED_PRECONDITION, "OPEN_HAND_OFF"),
        ("p3", table_id, None, grpc.StatusCode.PERMISSION_DENIED, "OPEN_HAND_SEATED"),
        ("stranger", table_id, 2, grpc.StatusCode.INVALID_ARGUMENT, "OPEN_HAND_WITH_SEAT"),
    ]
    for who, table, seat, code, reason in cases:
        async with TableClient(target, token(who)) as client:
            call: Awaitable[object]
            if rpc == "get":
                call = client.get_table(table, seat=seat, open_hand=True)
            elif rpc == "history":
                call = client.history(table, seat=seat, open_hand=True)
            else:
                call = anext(client.watch(table, seat=seat, open_hand=True))
            got = await _refusal(call)
        assert got[:2] == (code, reason), (who, table, seat)
        assert set(got[2]) >= {"en", "ro", "it"}
    async with TableClient(target, token(BOTS_SUBJECT, Role.SERVICE)) as bots:
        got = await _refusal(bots.get_table(table_id, open_hand=True))
    assert got[:2] == (grpc.StatusCode.PERMISSION_DENIED, "OPEN_HAND_SEATED")


async def test_a_delay_out_of_bounds_opens_no_table(table_service: RunningTableService) -> None:
    async with TableClient(table_service.target, token("matchmaker", Role.SERVICE)) as service:
        for delay in (-1, 1001):
            got = await _refusal(
                service.create_table(
                    games_pb2.GAME_KHOZOR_TEAMS,
                    list(KHOZOR_PLAYERS),
                    table=pb.TableOptions(open_hand_delay=delay),
                )
            )
            assert got[:2] == (grpc.StatusCode.INVALID_ARGUMENT, "INVALID_TABLE_SETUP")
            assert "open_hand_delay" in got[2]["en"]
