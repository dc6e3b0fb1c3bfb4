"""A computer seat's move, chosen from its seat's view alone (DESIGN.md §1: no peeking).

The view lists the seat's legal moves as ready-made `Action` messages
(`TableView.legal_actions`); a level picks one of them — or, for the one choice too
wide to list (3-5-8's discard, listed as its default only), builds another legal one
from the hand the view shows. Nothing here reads anything but the view, and every
choice is deterministic: two replicas that read the same view send the same move, so
the table's request-id idempotency never sees two different moves for one turn.

- `easy` — the table's own "lowest safe move" (the timeout's default): in 3-5-8 the
  lowest listed card by rank (ties ♣ ♦ ♥ ♠) and the first unused contract, in Khözör
  the first listed move (the engine lists the default first).
- `normal` — rules of thumb per game (`kozyr.bots.three_five_eight`, `kozyr.bots.khozor`).
"""

from __future__ import annotations

from enum import StrEnum

from kozyr.api.table.v1 import actions_pb2, views_pb2
from kozyr.bots import khozor, three_five_eight


class Level(StrEnum):
    """How well a computer seat plays (docs/bots.md)."""

    EASY = "easy"
    NORMAL = "normal"


class NoMove(LookupError):
    """The view lists no move for its seat (not its turn, or the game is over)."""


def turn_moves(view: views_pb2.TableView) -> list[actions_pb2.Action]:
    """The listed moves that answer the turn: Khözör's signal toggles are left out (they
    are not a decision, and a bot's turn must end with its one action)."""
    return [a for a in view.legal_actions if a.WhichOneof("action") != "toggle_signal"]


def choose(view: views_pb2.TableView, level: Level) -> actions_pb2.Action:
    """The move of the view's seat at `level`; NoMove if it has none."""
    moves = turn_moves(view)
    if not moves:
        raise NoMove(view.table_id)
    game = view.WhichOneof("game_view")
    if game == "three_five_eight":
        if level is Level.EASY:
            return three_five_eight.easy(moves)
        return three_five_eight.normal(view.three_five_eight, moves)
    if game == "khozor_teams" and level is Level.NORMAL:
        return khozor.normal(view.khozor_teams, moves)
    return moves[0]
