"""`table_view` builds each view in one constructor call from plain data; the result is
byte for byte what the strict field-by-field way builds, for every seat and the
spectator at every version of whole games (legal moves, deadlines, deal records)."""

from __future__ import annotations

import itertools
import random
from typing import Any

import pytest

from kozyr.api.table.v1 import views_pb2
from kozyr.eventstore import InMemoryEventStore
from kozyr.games import khozor_teams, three_five_eight
from kozyr.table.app import Actor, TableApp
from kozyr.table.domain.model import Table
from kozyr.table.edge import shown, views
from kozyr.table.edge.shown import table_view
from tests.unit.table.test_audit_games import MATCHMAKER, PLAYERS, choose

MOVES = {three_five_eight.GAME_ID: 400, khozor_teams.GAME_ID: 250}


async def tables_of(game_id: str) -> list[Table]:
    """The table at every version of a game played with seeded random moves on seeded
    deals: the same game every run (deals from the service's random seeds once made a
    Khözör game in which no signal went unseen, and the test below failed by chance)."""
    deals = random.Random(11)
    app = TableApp(InMemoryEventStore(), new_seed=lambda: deals.randbytes(32))
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
    unchanged = _contents_tell_views_apart(cache, tables, viewers)
    if game_id == khozor_teams.GAME_ID:
        assert unchanged, "another team's signal changes nothing a seat sees"


def _contents_tell_views_apart(
    cache: shown.ViewCache, tables: list[Table], viewers: list[int | None]
) -> int:
    """A stream sends a view when its `content` differs from the last one sent: equal
    contents must mean the same view but for its version, and a change the viewer can see
    must change them (a framed view's content is its bytes without the version). Returns
    how many (version, viewer) showed nothing new."""
    unchanged = 0
    for before, after in itertools.pairwise(tables):
        for seat in viewers:
            old, new = cache.shown(before, seat), cache.shown(after, seat)
            same = _without_version(old.view) == _without_version(new.view)
            assert (old.content == new.content) == same, (after.version, seat)
            unchanged += same
    return unchanged


def _without_version(view: views_pb2.TableView) -> bytes:
    copy = views_pb2.TableView()
    copy.CopyFrom(view)
    copy.version = 0
    return copy.SerializeToString(deterministic=True)


@pytest.mark.parametrize("size", [0, 1, 100, 126, 127, 128, 129, 255, 256, 16_383, 16_384, 70_000])
def test_a_framed_view_parses_as_its_parts_merged_at_any_length(size: int) -> None:
    """`ShownView.framed` writes the view's length itself (a varint): every length a
    view may have, across the varint's byte boundaries, parses back whole."""
    shared = views_pb2.TableView(table_id="t" * size, hints_allowed=True)
    own = views_pb2.TableView(seat=2)
    framed = shown.ShownView.framed(shared.SerializeToString(), own, 9)
    assert framed.view == views_pb2.TableView(
        table_id="t" * size, hints_allowed=True, seat=2, version=9
    )
