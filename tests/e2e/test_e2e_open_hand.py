"""A delayed open-hand spectator on a Khözör table (issue 27; docs/open-hand.md): the
table service as a real process, eight scripted clients playing the match to its end,
and a spectator watching it open-handed. Everything he received — every streamed view,
a GetTable now and then, his history — goes through the leak checker: a card may reach
him only once it has stayed where it is for `DELAY` players' moves."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from kozyr.api.common.v1 import games_pb2
from kozyr.api.table.v1 import table_service_pb2 as pb
from kozyr.api.table.v1 import views_pb2
from kozyr.client import TableClient
from kozyr.infra import Infrastructure
from kozyr.runtime.auth import Role
from tests.e2e.conftest import Deployment, deployment_for_module
from tests.e2e.leaks import (
    KHOZOR_TEAMS,
    LoggedEvent,
    Seen,
    find_leaks,
    find_open_hand_leaks,
    logged_events,
    seen_history,
    seen_view,
)
from tests.e2e.players import play_table
from tests.e2e.tables import admin_client, scripted_clients
from tests.support.tables import token

pytestmark = pytest.mark.e2e

DELAY = 5
MATCH_TIMEOUT = 150.0


@dataclass
class Watched:
    """The match's log and what the open-hand spectator received."""

    admin: list[LoggedEvent]
    views: list[Seen]
    history: list[pb.HistoryEvent]
    final: views_pb2.TableView


async def _live(admin: TableClient, table_id: str) -> int:
    """The table's log version now: an upper bound of the one a view just received was
    built at, so an honest view always passes (a view too new by more than the moves
    made between the build and this read is caught)."""
    page: pb.GetHistoryResponse = await admin.stub.GetHistory(
        pb.GetHistoryRequest(table_id=table_id, page_size=1), metadata=admin.metadata
    )
    return page.version


async def _spectate(deployment: Deployment, table_id: str, views: list[Seen]) -> None:
    """Watch open-handed to the end, and ask GetTable now and then."""
    async with (
        TableClient(deployment.target, token(f"spectator-{table_id[:8]}")) as me,
        admin_client(deployment.target) as admin,
    ):

        async def note(view: views_pb2.TableView, where: str) -> None:
            live = await _live(admin, table_id)
            views.append(
                Seen("view", live, seen_view(view, where).data, f"{where} v{view.version}")
            )

        async for view in me.watch(table_id, open_hand=True):
            await note(view, "streamed view")
            if len(views) % 7 == 0:
                await note(await me.get_table(table_id, open_hand=True), "GetTable")
            if view.finished:
                return


@pytest.fixture(scope="module")
async def watched(
    infra: Infrastructure, tmp_path_factory: pytest.TempPathFactory
) -> AsyncIterator[Watched]:
    log_dir: Path = tmp_path_factory.mktemp("open-hand")
    async with deployment_for_module(infra, log_dir) as deployment:
        tag = uuid.uuid4().hex[:8]
        players = [f"p{seat}-{tag}" for seat in range(8)]
        async with TableClient(deployment.target, token("matchmaker", Role.SERVICE)) as mm:
            created = await mm.create_table(
                games_pb2.GAME_KHOZOR_TEAMS,
                players,
                table=pb.TableOptions(open_hand_delay=DELAY),
            )
        table_id = created.table_id
        seats, _ = scripted_clients(deployment, games_pb2.GAME_KHOZOR_TEAMS, table_id, players, 8)
        views: list[Seen] = []
        spectating = asyncio.ensure_future(_spectate(deployment, table_id, views))
        await play_table(seats, MATCH_TIMEOUT)
        async with asyncio.timeout(60):  # a guard against a hang, no timed assertion
            await spectating
        async with (
            admin_client(deployment.target) as admin,
            TableClient(deployment.target, token(f"spectator-{tag}")) as me,
        ):
            admin_log = logged_events(await admin.history(table_id))
            history = await me.history(table_id, open_hand=True)
            final = await me.get_table(table_id, open_hand=True)
        yield Watched(admin_log, views, history, final)


async def test_the_open_hand_spectator_never_saw_a_card_before_it_was_delay_moves_old(
    watched: Watched,
) -> None:
    assert len(watched.views) > 50, "the spectator saw too little to judge"
    end = watched.admin[-1].version
    problems = find_open_hand_leaks(
        KHOZOR_TEAMS, watched.admin, DELAY, watched.views, finished_at=end
    )
    assert not problems, f"{len(problems)} problems: {problems[:20]}"
    shown = {int(v.data["open_hand"].get("log_version", 0)) for v in watched.views}
    assert len(shown) > 50
    assert any(
        any(row.get("cards") for row in v.data["open_hand"].get("hands", [])) for v in watched.views
    ), "no hand was ever shown"


async def test_his_history_is_the_spectators_and_the_delay_ends_with_the_game(
    watched: Watched,
) -> None:
    assert watched.final.finished
    assert watched.final.open_hand.log_version == watched.admin[-1].version
    seen = [seen_history(e) for e in watched.history]
    assert find_leaks(KHOZOR_TEAMS, watched.admin, None, seen) == []
    assert [e.version for e in watched.history] == list(range(1, watched.final.version + 1))
