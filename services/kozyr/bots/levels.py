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
- `normal` — rules of thumb per game, each game's own (`GameInfo.levels`: the real
  games' `kozyr.games.<game>.computer`).
- `hard` — perfect-information Monte Carlo over the hidden cards, each game's own
  `Searcher` (`kozyr.games.search`, the game's `kozyr.games.<game>.hard`).

Which levels a game has, and who plays them, is the game's to say (`GameInfo.levels`):
every level is played by the game's own player, on the view and the listed moves as
neutral data (`kozyr.client.games`), its move made an `Action` again — a searching one
(`Searcher`) also on the seat's redacted history, the decision's seed and this service's
budget (`Decision`); a level the game does not offer is played by the nearest weaker one
it does (else the weakest). A game this process does not know: the first listed move.
"""

from __future__ import annotations

from collections.abc import Sequence
from enum import StrEnum

from kozyr.api.table.v1 import actions_pb2, views_pb2
from kozyr.bots.knowledge import Knowledge, decision_seed, knowledge
from kozyr.bots.search import Budget
from kozyr.client.games import UnknownGame, action_of, move_of, neutral_view, plugin_of
from kozyr.games.info import LEVELS, Decision, LevelPlayer, Move, Searcher


class Level(StrEnum):
    """How well a computer seat plays (docs/bots.md)."""

    EASY = "easy"
    NORMAL = "normal"
    HARD = "hard"


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

    `known` (a searching level only): the seat's view and its redacted history of the
    current deal; without it the search knows the view alone. `budget` (a searching
    level only): its time and world cap (`Budget()`: `KOZYR_BOTS_HARD_BUDGET_MS`'s
    default).
    """
    moves = turn_moves(view)
    if not moves:
        raise NoMove(view.table_id)
    _, player = game_level(view, level)
    if player is None:
        return moves[0]
    listed = [move_of(m) for m in moves]
    if isinstance(player, Searcher):
        seen = known if known is not None else knowledge(view, [])
        return action_of(player.choose(decision(seen, listed, budget or Budget())))
    return action_of(player(neutral_view(view), listed))


def decision(known: Knowledge, listed: Sequence[Move], budget: Budget) -> Decision:
    """What a searching player is given: the seat's view and history as neutral data, the
    decision's seed (by table, turn and seat) and the budget, its clock started now."""
    view = known.view
    return Decision(
        view=neutral_view(view),
        moves=listed,
        seat=known.seat,
        history=known.events,
        seed=decision_seed(view.table_id, view.turn.number, known.seat),
        worlds=budget.worlds,
        out_of_time=budget.clock(),
    )


def game_level(view: views_pb2.TableView, level: Level) -> tuple[Level, LevelPlayer | None]:
    """The level the view's game plays for `level` (`GameInfo.levels`: the nearest weaker
    one it offers, else its weakest) and that level's player. A game this process does
    not know: `level`, and no player (the first listed move is played)."""
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
