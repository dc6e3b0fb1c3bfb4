"""Khözör signals over the API: limited per seat, and invisible to the other team in
every number — views, pinned moves, the watch stream and history (docs/api.md, "Versions")."""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

import grpc
import pytest

from kozyr.api.common.v1 import games_pb2
from kozyr.api.table.v1 import actions_pb2, views_pb2
from kozyr.api.table.v1 import table_service_pb2 as pb
from kozyr.client import TableClient
from kozyr.games import khozor_teams
from kozyr.runtime.auth import Role
from kozyr.runtime.errors import error_details
from kozyr.table.actions import command_from_action
from kozyr.table.app import Actor, TableApp, TapLimit
from tests.integration.table.conftest import RunningTableService
from tests.support.tables import token

pytestmark = pytest.mark.integration

PLAYERS = [f"p{i}" for i in range(8)]


@dataclass
class SignalTable:
    """A Khözör table waiting for the opener's confirmation, and a seat that may signal."""

    table_id: str
    signaller: int
    signal: actions_pb2.Action

    def player(self, seat: int) -> str:
        return PLAYERS[seat]


def _toggles(view: views_pb2.TableView) -> list[actions_pb2.Action]:
    return [a for a in view.legal_actions if a.WhichOneof("action") == "toggle_signal"]


async def _table(target: str, *, opening_team_signals: bool) -> SignalTable:
    """A fresh table where a seat holds a set, on the opening team or not (as asked)."""
    for attempt in range(30):  # a deal where no seat of a team holds a set is rare
        async with TableClient(target, token("mm", Role.SERVICE)) as service:
            created = await service.create_table(
                games_pb2.GAME_KHOZOR_TEAMS, PLAYERS, request_id=f"sig-{attempt}"
            )
            for seat in range(8):
                view = await service.get_table(created.table_id, seat=seat)
                opening = seat in view.turn.seats  # the opening team confirms the opener
                toggles = _toggles(view)
                if toggles and opening is opening_team_signals:
                    return SignalTable(created.table_id, seat, toggles[0])
    raise AssertionError("thirty deals without a set on the wanted team")


async def _expect(code: grpc.StatusCode, call: object) -> grpc.aio.AioRpcError:
    with pytest.raises(grpc.aio.AioRpcError) as caught:
        await call  # type: ignore[misc]
    assert caught.value.code() == code, caught.value.details()
    return caught.value


def _history(events: list[pb.HistoryEvent]) -> list[tuple[int, str, str]]:
    return [(e.version, e.type, e.data_json) for e in events]


async def test_signal_taps_are_limited_per_seat(table_service: RunningTableService) -> None:
    app = table_service.service.app
    app.tap_limit = TapLimit(taps=4, window=timedelta(hours=1))
    table = await _table(table_service.target, opening_team_signals=False)
    async with TableClient(table_service.target, token(table.player(table.signaller))) as client:
        for _ in range(4):  # set, clear, set, clear: within the limit
            await client.submit(table.table_id, table.signal)
        refused = await _expect(
            grpc.StatusCode.RESOURCE_EXHAUSTED, client.submit(table.table_id, table.signal)
        )
        before = await client.get_table(table.table_id)
    details = error_details(refused)
    assert details.reason == "TOO_MANY_SIGNALS"
    assert details.metadata["limit"] == "4"
    assert details.metadata["windowSeconds"] == "3600"
    assert set(details.messages) == {"en", "ro", "it"}
    assert not any(s.three_set or s.five_set for s in before.khozor_teams.signals)
    # The window is counted from the log's times: an hour later the seat may tap again.
    later = TableApp(
        app.store,
        clock=lambda: datetime.now(UTC) + timedelta(hours=1, minutes=1),
        tap_limit=app.tap_limit,
    )
    done = await later.submit(
        table.table_id,
        command_from_action(khozor_teams.GAME_ID, table.signaller, table.signal),
        request_id="an-hour-later",
        actor=Actor(table.player(table.signaller), "player"),
    )
    assert done.table.version == before.version + 1


async def test_the_other_team_never_sees_a_signal_in_any_number(
    table_service: RunningTableService,
) -> None:
    table = await _table(table_service.target, opening_team_signals=False)
    rival = (table.signaller + 1) % 8  # on the opening team: may confirm the opener
    mate = (table.signaller + 2) % 8
    target = table_service.target
    async with (
        TableClient(target, token(table.player(table.signaller))) as signaller,
        TableClient(target, token(table.player(rival))) as other,
        TableClient(target, token(table.player(mate))) as teammate,
        TableClient(target, token("stranger")) as spectator,
        TableClient(target, token("moderator", Role.ADMIN)) as admin,
    ):
        seen = await other.get_table(table.table_id)
        history = await other.history(table.table_id)
        watched = await spectator.get_table(table.table_id)
        mate_before = await teammate.get_table(table.table_id)
        stream = other.watch(table.table_id, from_version=seen.version)
        for _ in range(3):  # set, clear, set
            await signaller.submit(table.table_id, table.signal)

        assert await other.get_table(table.table_id) == seen, "not a byte changes for them"
        assert _history(await other.history(table.table_id)) == _history(history)
        assert await spectator.get_table(table.table_id) == watched
        mate_after = await teammate.get_table(table.table_id)
        assert mate_after.version == mate_before.version + 3
        shown = {s.seat: s for s in mate_after.khozor_teams.signals}
        assert shown[table.signaller].three_set or shown[table.signaller].five_set
        mate_history = await teammate.history(table.table_id)
        assert [e.version for e in mate_history] == list(range(1, mate_after.version + 1))
        assert [e.type for e in mate_history[-3:]] == ["SignalSet", "SignalCleared", "SignalSet"]

        # Their move pinned to the version they saw still applies: the taps are not theirs.
        confirm = next(a for a in seen.legal_actions if a.WhichOneof("action") == "confirm_opener")
        moved = await other.submit(table.table_id, confirm, expected_version=seen.version)
        assert moved.view.version == seen.version + 1
        streamed = await anext(stream)
        assert streamed.version == seen.version + 1, "no view was sent for the taps"
        await stream.aclose()
        after = await other.history(table.table_id, page_size=1)  # one event a page
        assert _history(after) == [
            *_history(history),
            *_history(await other.history(table.table_id))[len(history) :],
        ]
        assert [e.version for e in after] == list(range(1, moved.view.version + 1))
        assert json.loads(after[-1].data_json)["opener"] == confirm.confirm_opener.opener_seat
        stale = await _expect(
            grpc.StatusCode.ABORTED,
            other.submit(table.table_id, confirm, expected_version=seen.version),
        )
        assert error_details(stale).metadata["currentVersion"] == str(seen.version + 1)

        # The log (a moderator's numbers) holds every tap, in place.
        log = await admin.history(table.table_id)
        assert len(log) == seen.version + 3 + 1
        assert [e.type for e in log[-4:-1]] == ["SignalSet", "SignalCleared", "SignalSet"]


async def test_a_seat_s_pinned_move_goes_through_while_the_other_team_signals(
    table_service: RunningTableService,
) -> None:
    """The opening team confirms at its version while a seat of the other team taps."""
    table = await _table(table_service.target, opening_team_signals=False)
    rival = (table.signaller + 1) % 8
    target = table_service.target
    async with (
        TableClient(target, token(table.player(table.signaller))) as signaller,
        TableClient(target, token(table.player(rival))) as other,
    ):
        seen = await other.get_table(table.table_id)
        await signaller.submit(table.table_id, table.signal)
        confirm = next(a for a in seen.legal_actions if a.WhichOneof("action") == "confirm_opener")
        await signaller.submit(table.table_id, table.signal)
        done = await other.submit(table.table_id, confirm, expected_version=seen.version)
    assert done.view.khozor_teams.phase == "play"
    assert not done.duplicate
