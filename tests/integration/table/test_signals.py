"""Khözör signals over the API: limited per seat, and invisible to the other team in
every number — views, pinned moves, the watch stream and history (docs/api.md, "Versions")."""

from __future__ import annotations

import asyncio
import contextlib
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
from kozyr.games.khozor_teams import Team, team_of
from kozyr.runtime.auth import Role
from kozyr.runtime.errors import error_details
from kozyr.table.app import Actor, TableApp, TapLimit
from kozyr.table.edge.actions import command_from_action
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
    # The oldest of the four taps leaves the hour's window in just under an hour (the
    # exact count is tests/unit/table/test_signal_taps.py's, on a clock of its own).
    assert 3500 < int(details.metadata["retryAfterSeconds"]) <= 3600
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


@dataclass
class TwoTeamTable:
    """A Khözör table waiting for the opener, where a seat of each team holds a set."""

    table_id: str
    signallers: dict[Team, tuple[int, actions_pb2.Action]]
    """Per team, a seat that may signal and its tap."""
    opening: tuple[int, ...]
    """The seats of the opening team (any of them may confirm the opener)."""


async def _two_team_table(target: str) -> TwoTeamTable:
    """A fresh table where each team has a seat with a set to signal."""
    async with TableClient(target, token("mm", Role.SERVICE)) as service:
        for attempt in range(30):  # a deal without a set on one of the teams is rare
            created = await service.create_table(
                games_pb2.GAME_KHOZOR_TEAMS, PLAYERS, request_id=f"two-{attempt}"
            )
            found: dict[Team, tuple[int, actions_pb2.Action]] = {}
            for seat in range(8):
                view = await service.get_table(created.table_id, seat=seat)
                toggles = _toggles(view)
                if toggles:
                    found.setdefault(team_of(seat), (seat, toggles[0]))
            if len(found) == 2:
                return TwoTeamTable(created.table_id, found, tuple(view.turn.seats))
    raise AssertionError("thirty deals without a set on each team")


Look = tuple[views_pb2.TableView, list[tuple[int, str, str]]]
"""A viewer's view and history."""


def _set_by(view: views_pb2.TableView) -> set[int]:
    return {s.seat for s in view.khozor_teams.signals if s.three_set or s.five_set}


async def test_every_seat_sees_its_own_team_s_signals_and_never_the_other_team_s(
    table_service: RunningTableService,
) -> None:
    """Every seat 0..7 (seat 0 is a seat, not the spectator) and the spectator, in
    every number — views, history, pinned moves, watch streams — while both teams
    signal, a different number of times: each seat counts its own team's taps only."""
    target = table_service.target
    table = await _two_team_table(target)
    table_id = table.table_id
    taps = {Team.A: 3, Team.B: 1}  # set, clear, set; and set
    async with contextlib.AsyncExitStack() as stack:
        seats = [
            await stack.enter_async_context(TableClient(target, token(PLAYERS[seat])))
            for seat in range(8)
        ]
        spectator = await stack.enter_async_context(TableClient(target, token("stranger")))
        admin = await stack.enter_async_context(TableClient(target, token("mod", Role.ADMIN)))
        viewers: dict[int | None, TableClient] = {**dict(enumerate(seats)), None: spectator}

        async def looks() -> dict[int | None, Look]:
            return {
                seat: (await c.get_table(table_id), _history(await c.history(table_id)))
                for seat, c in viewers.items()
            }

        before = await looks()
        base = before[0][0].version
        assert {view.version for view, _ in before.values()} == {base}
        streams = {seat: seats[seat].watch(table_id, from_version=base - 1) for seat in range(8)}
        async with asyncio.timeout(60):
            for stream in streams.values():  # the current view at once: each watch is live
                assert (await anext(stream)).version == base

        seen = before
        for team in (Team.A, Team.B):
            signaller, tap = table.signallers[team]
            for _ in range(taps[team]):
                await seats[signaller].submit(table_id, tap)
            now = await looks()
            for seat, (view, history) in now.items():
                if seat is None or team_of(seat) is not team:
                    assert (view, history) == seen[seat], f"seat {seat}: not a byte changes"
                    continue
                old_view, old_history = seen[seat]
                assert view.version == old_view.version + taps[team], seat
                assert history[: len(old_history)] == old_history, seat
                new = [(number, kind) for number, kind, _ in history[len(old_history) :]]
                kinds = ["SignalSet", "SignalCleared", "SignalSet"][: taps[team]]
                numbers = range(old_view.version + 1, view.version + 1)
                assert new == list(zip(numbers, kinds, strict=True)), seat
                assert _set_by(view) == {signaller}, seat
            seen = now

        # Pinned to its own version a seat's move is decided (here refused by the rules:
        # the pin held); pinned one below, it is stale, and told its own version.
        outsider = next(s for s in range(8) if s not in table.opening)
        probe = actions_pb2.Action(confirm_opener=actions_pb2.ConfirmOpener(opener_seat=outsider))
        for seat, client in enumerate(seats):
            version = seen[seat][0].version
            assert version == base + taps[team_of(seat)], seat
            await _expect(
                grpc.StatusCode.FAILED_PRECONDITION,
                client.submit(table_id, probe, expected_version=version),
            )
            stale = await _expect(
                grpc.StatusCode.ABORTED,
                client.submit(table_id, probe, expected_version=version - 1),
            )
            assert error_details(stale).metadata["currentVersion"] == str(version), seat

        mover = table.opening[0]
        view = seen[mover][0]
        confirm = next(a for a in view.legal_actions if a.WhichOneof("action") == "confirm_opener")
        moved = await seats[mover].submit(table_id, confirm, expected_version=view.version)
        assert moved.view.version == view.version + 1
        assert moved.view.khozor_teams.phase == "play"

        # Each stream sent views for its own team's taps (maybe folded into one) and the
        # move, each with the seat's own number; none for the other team's taps.
        for seat, stream in streams.items():
            final = base + taps[team_of(seat)] + 1
            versions: list[int] = []
            async with asyncio.timeout(60):
                while not versions or versions[-1] < final:
                    versions.append((await anext(stream)).version)
            await stream.aclose()
            assert versions == sorted(set(versions)), f"seat {seat}: a view for nothing new"
            assert set(versions) <= set(range(base + 1, final + 1)), seat
            assert versions[-1] == final, seat

        # History one event a page: the same events, numbered 1, 2, 3 ... for everyone.
        for seat, client in viewers.items():
            whole = await client.history(table_id)
            paged = await client.history(table_id, page_size=1)
            assert _history(paged) == _history(whole), seat
            mine = seen[seat][0].version + 1
            assert [e.version for e in paged] == list(range(1, mine + 1)), seat
            assert json.loads(paged[-1].data_json)["opener"] == confirm.confirm_opener.opener_seat

        # The log (a moderator's numbers) holds every tap, in place.
        log = await admin.history(table_id)
        assert len(log) == base + sum(taps.values()) + 1
        signals = ["SignalSet", "SignalCleared", "SignalSet", "SignalSet"]
        assert [e.type for e in log[base:-1]] == signals


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
