"""The hard players' moves are kept: on seeded positions of both games the hard level
chooses what the recorded moves say (tests/unit/bots/hard_moves.json).

The record was written by the bots' own hard players of before (PIMC reading the proto
view, `kozyr.bots.hard_*`), before they moved into the game packages to read neutral
data; a search capped by worlds, never by time, is deterministic (its generator is
seeded per decision), so any change in what a search knows, samples, tries or values
changes some move here. Regenerate only for a change meant to change play:

    .venv/bin/python -m tests.unit.bots.test_hard_moves_kept
"""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

import pytest
from google.protobuf import json_format

from kozyr.bots.knowledge import Knowledge, knowledge
from kozyr.bots.levels import Level, choose, turn_moves
from kozyr.bots.search import Budget
from kozyr.table.edge.shown import table_view
from tests.support import tournament
from tests.support.tournament import KHOZOR, THREE_FIVE_EIGHT

RECORD = Path(__file__).with_name("hard_moves.json")
BUDGET = Budget(milliseconds=600_000, worlds=6)
"""Worlds only: a decision's time never cuts it (the record is reproducible anywhere)."""
POSITIONS = {THREE_FIVE_EIGHT: (range(4), 13, 150), KHOZOR: (range(2), 19, 10_000)}
"""Per game: the seeds of its games, every how many decisions a position is taken (and
every contract, exchange and discard) and how many decisions of a game are played."""
ALWAYS = frozenset({"contract", "discard", "exchange_give"})
VIEW_ONLY = 5
"""Every this many positions the seat's history is withheld (the view alone)."""


def positions(game_id: str) -> list[tuple[str, Knowledge]]:
    """(a position's name, the acting seat's knowledge) along randomly played games with
    all options varied by seed; only decisions with a choice (more than one move)."""
    seeds, every, length = POSITIONS[game_id]
    found: list[tuple[str, Knowledge]] = []
    for seed in seeds:
        options = {"must_trump": True} if game_id == THREE_FIVE_EIGHT and seed % 2 else {}
        players = ("hard",) * tournament.SEATS[game_id]
        game = tournament.start(game_id, players, seed, options)
        rng = random.Random(seed)
        step = 0
        while not game.table.is_over and step < length:
            seat = game.table.game.turn(game.table.state).seats[0]
            view = table_view(game.table, seat)
            moves = turn_moves(view)
            taken = (step % every == 0 and len(moves) > 1) or view.turn.kind in ALWAYS
            if taken:
                history = () if len(found) % VIEW_ONLY == 0 else game.histories[seat]
                found.append((f"{game_id}/{seed}/{step}", knowledge(view, history)))
            tournament.apply(game, seat, rng.choice(moves))
            step += 1
    return found


def hard_move(known: Knowledge) -> dict[str, Any]:
    action = choose(known.view, Level.HARD, known, BUDGET)
    return json_format.MessageToDict(action, preserving_proto_field_name=True)


def record() -> dict[str, dict[str, Any]]:
    return {name: hard_move(k) for g in POSITIONS for name, k in positions(g)}


@pytest.mark.parametrize("game_id", sorted(POSITIONS))
def test_the_hard_level_plays_the_recorded_moves(game_id: str) -> None:
    recorded = json.loads(RECORD.read_text(encoding="utf-8"))
    found = positions(game_id)
    assert len(found) >= 20
    differ = {n: (hard_move(k), recorded[n]) for n, k in found if hard_move(k) != recorded[n]}
    assert not differ, f"{len(differ)} of {len(found)} moves changed: {differ}"


if __name__ == "__main__":
    RECORD.write_text(json.dumps(record(), indent=1, sort_keys=True) + "\n", encoding="utf-8")
