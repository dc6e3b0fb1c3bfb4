"""`table_view` builds each view in one constructor call from plain data; the result is
byte for byte what the strict field-by-field way builds, for every seat and the
spectator at every version of whole games (legal moves, deadlines, deal records)."""

from __future__ import annotations

import random
from typing import Any

import pytest

from kozyr.eventstore import InMemoryEventStore
from kozyr.games import khozor_teams, three_five_eight
from kozyr.table.app import Actor, TableApp
from kozyr.table.domain.model import Table
from kozyr.table.edge import shown, views
from kozyr.table.edge.shown import table_view
from tests.unit.table.test_audit_games import MATCHMAKER, PLAYERS, choose

MOVES = {three_five_eight.GAME_ID: 400, khozor_teams.GAME_ID: 250}


async def tables_of(game_id: str) -> list[Table]:
    """The table at every version of a game played with seeded random moves."""
    app = TableApp(InMemoryEventStore())
    rng = random.Random(7)
    created = await app.create(
        request_id="create", game_id=game_id, options={}, seats=PLAYERS[game_id], actor=MATCHMAKER
    )
    tables = [created.table]
    for move in range(MOVES[game_id]):
        table = tables[-1]
        if table.is_over:
            break
        seat, command = choose(table, rng)
        outcome = await app.submit(
            table.table_id, command, request_id=f"m{move}", actor=Actor(table.seats[seat], "player")
        )
        tables.append(outcome.table)
    return tables


@pytest.mark.parametrize("game_id", [three_five_eight.GAME_ID, khozor_teams.GAME_ID])
async def test_one_constructor_call_builds_the_strict_view(
    game_id: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    tables = await tables_of(game_id)
    viewers: list[int | None] = [None, *range(len(PLAYERS[game_id]))]
    fast = {(t.version, s): table_view(t, s) for t in tables for s in viewers}

    def nothing_fits(*_: Any) -> None:
        return None

    monkeypatch.setattr(shown, "game_view_fields", nothing_fits)
    monkeypatch.setattr(views, "_built", nothing_fits)  # game views and moves field by field
    for table in tables:
        for seat in viewers:
            strict = table_view(table, seat)
            built = fast[(table.version, seat)]
            assert built.SerializeToString(deterministic=True) == strict.SerializeToString(
                deterministic=True
            ), (table.version, seat)
    assert any(v.legal_actions for v in fast.values())
    assert any(v.turn.HasField("deadline") for v in fast.values())


@pytest.mark.parametrize("game_id", [three_five_eight.GAME_ID, khozor_teams.GAME_ID])
async def test_views_shown_from_one_frame_per_version_are_each_viewers_own(
    game_id: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """For a game with a `seat_view` (both games), `ViewCache` builds what the viewers of
    a version share once (`_Frame`) and merges each viewer's own part in: byte for byte
    the view `table_view` builds for it alone, a spectator's included — and never by
    falling back to it."""
    tables = await tables_of(game_id)
    viewers: list[int | None] = [None, *range(len(PLAYERS[game_id]))]
    alone = {(t.version, s): table_view(t, s) for t in tables for s in viewers}
    frames: list[int] = []
    real_frame = shown._Frame.__init__

    def counted(frame: Any, table: Table, seat_view: Any) -> None:
        frames.append(table.version)
        real_frame(frame, table, seat_view)

    monkeypatch.setattr(shown._Frame, "__init__", counted)
    monkeypatch.setattr(shown, "table_view", None)  # a fallback would fail
    cache = shown.ViewCache()
    for table in tables:
        for seat in viewers:
            got = cache.shown(table, seat)
            assert got is cache.shown(table, seat)
            assert got.view.SerializeToString(deterministic=True) == alone[
                (table.version, seat)
            ].SerializeToString(deterministic=True), (table.version, seat)
    assert frames == [t.version for t in tables], "one frame per version, for every viewer"
