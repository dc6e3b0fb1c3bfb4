"""A computer seat's move, chosen from what its seat may know (DESIGN.md §1: no peeking).

The view lists the seat's legal moves as ready-made `Action` messages
(`TableView.legal_actions`); a level picks one of them — or, for the one choice too
wide to list (3-5-8's discard, listed as its default only), builds another legal one
from the hand the view shows. `easy` and `normal` read the view alone; `hard` also
reads the seat's own redacted history of the deal (`kozyr.bots.knowledge`), never
anything of another seat. Every choice is deterministic (`hard`: its random generator
is seeded by table, turn and seat), so two replicas that read the same view send the
same move, and the table's request-id idempotency never sees two different moves.

- `easy` — the table's own "lowest safe move" (the timeout's default): in 3-5-8 the
  lowest listed card by rank (ties ♣ ♦ ♥ ♠) and the first unused contract, in Khözör
  the first listed move (the engine lists the default first).
- `normal` — rules of thumb per game, each game's own (`GameInfo.levels`:
  `kozyr.games.three_five_eight.computer`, `kozyr.games.khozor_teams.computer`).
- `hard` — perfect-information Monte Carlo over the hidden cards (`kozyr.bots.search`,
  `kozyr.bots.hard_three_five_eight`, `kozyr.bots.hard_khozor`).

Which levels a game has, and who plays them, is the game's to say (`GameInfo.levels`):
a level with a player of the game's own is played by it, on the view and the listed
moves as neutral data (`kozyr.client.games`), its move made an `Action` again; a level
mapped to None by this service's player of that game (whose players read the proto
view); a level the game does not offer is played by the nearest weaker one it does
(else the weakest).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from enum import StrEnum

from kozyr.api.table.v1 import actions_pb2, views_pb2
from kozyr.bots import hard_khozor, hard_three_five_eight
from kozyr.bots.knowledge import Knowledge, knowledge
from kozyr.bots.search import Budget
from kozyr.client.games import UnknownGame, action_of, move_of, neutral_view, plugin_of
from kozyr.games.info import LEVELS, ComputerPlayer


class Level(StrEnum):
    """How well a computer seat plays (docs/bots.md)."""

    EASY = "easy"
    NORMAL = "normal"
    HARD = "hard"


Search = Callable[[Knowledge, Sequence[actions_pb2.Action], Budget], actions_pb2.Action]
SEARCHES: dict[str, Search] = {
    "three_five_eight": hard_three_five_eight.choose,
    "khozor_teams": hard_khozor.choose,
}
"""This service's own `hard` players (`GameInfo.levels` maps hard to None), by the game's
field in `TableView.game_view`: PIMC on the engine, reading the seat's history."""


class NoMove(LookupError):
    """The view lists no move for its seat (not its turn, or the game is over)."""


def turn_moves(view: views_pb2.TableView) -> list[actions_pb2.Action]:
    """The listed moves that answer the turn: Khözör's signal toggles are left out (they
    are not a decision, and a bot's turn must end with its one action)."""
    return [a for a in view.legal_actions if a.WhichOneof("action") != "toggle_signal"]


def choose(
    view: views_pb2.TableView,
    level: Level,
    known: Knowledge | None = None,
    budget: Budget | None = None,
) -> actions_pb2.Action:
    """The move of the view's seat at `level`; NoMove if it has none.

    `known` (hard only): the seat's view and its redacted history of the current deal;
    without it the hard level knows the view alone. `budget` (hard only): the search's
    time and world cap (`Budget()`: `KOZYR_BOTS_HARD_BUDGET_MS`'s default).
    """
    moves = turn_moves(view)
    if not moves:
        raise NoMove(view.table_id)
    offered, player = game_level(view, level)
    if player is not None:
        return action_of(player(neutral_view(view), [move_of(m) for m in moves]))
    search = SEARCHES.get(view.WhichOneof("game_view") or "")
    if offered is Level.HARD and search is not None:
        seen = known if known is not None else knowledge(view, [])
        return search(seen, moves, budget or Budget())
    return moves[0]


def game_level(view: views_pb2.TableView, level: Level) -> tuple[Level, ComputerPlayer | None]:
    """The level the view's game plays for `level` (`GameInfo.levels`: the nearest weaker
    one it offers, else its weakest) and that level's own player, None when this
    service plays it. A game this process does not know: `level`, no player of its own."""
    try:
        offered = plugin_of(view).info.levels
    except UnknownGame:
        return level, None
    at_most = [name for name in LEVELS[: LEVELS.index(level) + 1] if name in offered]
    name = at_most[-1] if at_most else next(n for n in LEVELS if n in offered)
    return Level(name), offered[name]


def announced(view: views_pb2.TableView) -> list[actions_pb2.Action]:
    """What the view's seat makes known before its move (`GameInfo.announce`: Khözör's
    true team signals), among every move the view lists; none for a spectator's view
    or a game that announces nothing."""
    if not view.HasField("seat"):
        return []
    try:
        announce = plugin_of(view).info.announce
    except UnknownGame:
        return []
    if announce is None:
        return []
    listed = [move_of(a) for a in view.legal_actions]
    return [action_of(move) for move in announce(neutral_view(view), listed)]
