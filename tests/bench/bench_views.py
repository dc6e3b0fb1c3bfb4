"""The view path's CPU per move, in-process (issue 25, "Views shared").

    .venv/bin/python tests/bench/bench_views.py [--rounds 3]

Whole seeded games (3-5-8: 400 moves, Khözör: 250, tests/unit/table/test_table_views.py)
shown to every stream of a table at every version, two ways:

* alone: each viewer's view built for it alone (`table_view`, once per viewer and
  version, as before), then per stream its content compared and its response
  serialised — the path before views were shared;
* shared: `ViewCache`, as WatchTable uses it — each (viewer, version) built from the
  version's shared frame, compared and serialised once; a stream compares bytes.

Process CPU time (`time.process_time`, best of `--rounds`), so a loaded machine skews it
far less than wall time or a service's share of a core. Figures printed, never asserted.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from kozyr.api.table.v1 import table_service_pb2 as pb
from kozyr.api.table.v1 import views_pb2
from kozyr.games import khozor_teams, three_five_eight
from kozyr.table.domain.model import Table
from kozyr.table.edge.shown import ViewCache, table_view
from tests.unit.table.test_table_views import tables_of

Viewers = Sequence[int | None]


def alone(tables: list[Table], streams: Viewers) -> None:
    built: dict[tuple[int, int | None], views_pb2.TableView] = {}
    sent: dict[int, bytes] = {}
    for table in tables:
        for i, seat in enumerate(streams):
            view = built.get((table.version, seat))
            if view is None:
                view = built[(table.version, seat)] = table_view(table, seat)
            copy = views_pb2.TableView()
            copy.CopyFrom(view)
            copy.version = 0
            content = copy.SerializeToString(deterministic=True)
            if content != sent.get(i):
                pb.WatchTableResponse(view=view).SerializeToString()
                sent[i] = content


def shared(tables: list[Table], streams: Viewers) -> None:
    cache = ViewCache()
    sent: dict[int, bytes] = {}
    for table in tables:
        for i, seat in enumerate(streams):
            shown = cache.shown(table, seat)
            if shown.content != sent.get(i):
                assert shown.written
                sent[i] = shown.content


def per_move(
    way: Callable[[list[Table], Viewers], None], tables: list[Table], streams: Viewers, rounds: int
) -> float:
    best = float("inf")
    for _ in range(rounds):
        start = time.process_time()
        way(tables, streams)
        best = min(best, time.process_time() - start)
    return best / len(tables) * 1000


async def main(rounds: int) -> None:
    cases = [
        (three_five_eight.GAME_ID, 3, 0),
        (khozor_teams.GAME_ID, 8, 0),
        (khozor_teams.GAME_ID, 8, 20),
    ]
    print(f"View path CPU per move (ms, best of {rounds}): alone → shared")
    for game_id, seats, spectators in cases:
        tables = await tables_of(game_id)
        streams: list[int | None] = [*range(seats), *([None] * spectators)]
        before = per_move(alone, tables, streams, rounds)
        after = per_move(shared, tables, streams, rounds)
        print(
            f"  {game_id:17} {seats} seats + {spectators:2} spectators:"
            f" {before:5.2f} → {after:5.2f} ms  (× {after / before:.2f})"
        )


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3)
    asyncio.run(main(parser.parse_args().rounds))
