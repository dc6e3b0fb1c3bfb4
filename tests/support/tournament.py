"""A duplicate tournament of the bots' levels, in-process on the pure table decision.

Every game is played as the table service plays it — `kozyr.table.domain.decision.decide`
on commands built from the actions a seat's view lists (`table_view`,
`command_from_action`) — and a `hard` seat gets what the bots service gives it: its
view and its own history of the deal, each event redacted for it by the table's
`history_data`. No network, no database.

Duplicate: each seed fixes every deal (the table's chance seeds come from their own
generator, so the k-th deal is the same whatever was played before), and the seed is
replayed with the seats rotated — in 3-5-8 the measured level ("hero") sits at seats
0, 1 and 2 against two "villains", in Khözör it plays team A, then team B — so the
luck of the cards cancels out and only the levels differ. The unit of a sample is the
seed: the hero's mean over its rotations.
"""

from __future__ import annotations

import math
import random
import statistics
import time
import uuid
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from kozyr.api.table.v1 import actions_pb2
from kozyr.bots.knowledge import HistoryEntry, Knowledge
from kozyr.bots.levels import Level, announced, choose, turn_moves
from kozyr.bots.search import Budget
from kozyr.eventstore import RecordedEvent
from kozyr.games.catalogue import game_by_id
from kozyr.table.domain import model
from kozyr.table.domain.decision import decide, draw_chance
from kozyr.table.domain.history import history_data
from kozyr.table.domain.model import COMPUTER, Table, TableCreated
from kozyr.table.edge.actions import command_from_action
from kozyr.table.edge.shown import table_view

THREE_FIVE_EIGHT = "three_five_eight"
KHOZOR = "khozor_teams"
SEATS = {THREE_FIVE_EIGHT: 3, KHOZOR: 8}
RANDOM = "random"
PLAYERS = (RANDOM, Level.EASY.value, Level.NORMAL.value, Level.HARD.value)
"""Who may sit: a uniformly random legal move, or a level."""
MOVES = 20_000
"""A bound on one game's moves (a 3-5-8 game takes about 1,000, a Khözör match a few
hundred; random Khözör play ends with probability 1, docs/rules-khozor.md)."""
DEFAULT_BUDGET = Budget()


@dataclass
class Timings:
    """Decision times in seconds, per (player, game)."""

    seconds: dict[tuple[str, str], list[float]] = field(default_factory=lambda: defaultdict(list))

    def percentile(self, player: str, game_id: str, q: float) -> float:
        times = sorted(self.seconds[(player, game_id)])
        if not times:
            return math.nan
        return times[min(len(times) - 1, int(q * len(times)))]


def rotations(game_id: str, hero: str, villain: str) -> list[tuple[str, ...]]:
    """The seatings of one duplicate seed: the hero in each seat (3-5-8), on each team
    (Khözör), the villain everywhere else."""
    seats = SEATS[game_id]
    if game_id == THREE_FIVE_EIGHT:
        return [tuple(hero if s == h else villain for s in range(seats)) for h in range(seats)]
    return [tuple(hero if s % 2 == team else villain for s in range(seats)) for team in (0, 1)]


def _recorded(table: Table, event: Any) -> RecordedEvent:
    kind, data = model.encode(event)
    return RecordedEvent(
        event_id=uuid.uuid4(), stream=f"table-{table.table_id}", position=table.version,
        global_position=table.version, type=kind, schema_version=1, data=data, metadata={},
        recorded_at=datetime.now(UTC), hash="",
    )  # fmt: skip


@dataclass
class Game:
    """One game in progress, with every seat's redacted history of the current deal."""

    game_id: str
    players: tuple[str, ...]
    table: Table
    histories: list[list[HistoryEntry]]
    chance: random.Random

    def record(self, events: Sequence[Any], after: Table) -> None:
        needed = [s for s, p in enumerate(self.players) if p == Level.HARD]
        if not needed:
            return
        starts = game_by_id(self.game_id).info.history_starts
        for event in events:
            recorded = _recorded(after, event)
            for seat in needed:
                if recorded.type in starts:
                    self.histories[seat] = []
                data = history_data(after, recorded, seat, False)
                if data is not None:
                    self.histories[seat].append((recorded.type, data))


def start(
    game_id: str, players: Sequence[str], seed: int, options: dict[str, Any] | None = None
) -> Game:
    chance = random.Random(seed)
    seats = (COMPUTER,) * game_by_id(game_id).info.seats
    created = TableCreated(f"duplicate-{seed}", game_id, options or {}, seats)
    table = model.start(created)
    game = Game(game_id, tuple(players), table, [[] for _ in players], chance)
    drawn = draw_chance(table, [], lambda: chance.randbytes(32))
    game.record(drawn.events, drawn.after)
    game.table = drawn.after
    return game


def move(
    game: Game, seat: int, rng: random.Random, budget: Budget, timings: Timings | None
) -> actions_pb2.Action:
    """The seat's move at its player's level, timed."""
    view = table_view(game.table, seat)
    player = game.players[seat]
    began = time.perf_counter()
    if player == RANDOM:
        action = rng.choice(turn_moves(view))
    elif player == Level.HARD:
        known = Knowledge(view, tuple(game.histories[seat]))
        action = choose(view, Level.HARD, known, budget)
    else:
        action = choose(view, Level(player))
    if timings is not None and len(turn_moves(view)) > 1:
        timings.seconds[(player, game.game_id)].append(time.perf_counter() - began)
    return action


def apply(game: Game, seat: int, action: actions_pb2.Action) -> None:
    command = command_from_action(game.game_id, seat, action)
    decision = decide(game.table, command, seeds=lambda: game.chance.randbytes(32))
    game.record(decision.events, decision.after)
    game.table = decision.after


def signals(game: Game, seat: int) -> list[actions_pb2.Action]:
    """The toggles a computer seat sends to make its signals true (Khözör)."""
    return announced(table_view(game.table, seat))


def play(
    game_id: str,
    players: Sequence[str],
    seed: int,
    budget: Budget = DEFAULT_BUDGET,
    timings: Timings | None = None,
) -> tuple[float, ...]:
    """One whole game; per seat its score: the 3-5-8 total, or 1.0 when the seat's
    Khözör team won the match (0.0 otherwise)."""
    game = start(game_id, players, seed)
    rng = random.Random(seed ^ 0x5EED)
    for _ in range(MOVES):
        if game.table.is_over:
            break
        seat = game.table.game.turn(game.table.state).seats[0]
        apply(game, seat, move(game, seat, rng, budget, timings))
    assert game.table.is_over, f"{game_id} not over after {MOVES} moves"
    result = game.table.game.result(game.table.state)
    if game_id == THREE_FIVE_EIGHT:
        return tuple(float(t) for t in result["totals"])
    return tuple(1.0 if model_team(s) == result["winner"] else 0.0 for s in range(len(players)))


def model_team(seat: int) -> str:
    return "A" if seat % 2 == 0 else "B"


def duplicate(
    game_id: str,
    hero: str,
    villain: str,
    seeds: Sequence[int],
    budget: Budget = DEFAULT_BUDGET,
    timings: Timings | None = None,
) -> list[float]:
    """Per seed, the hero's mean score over the rotated seatings (3-5-8: points per
    game; Khözör: the share of matches won)."""
    samples = []
    for seed in seeds:
        scores: list[float] = []
        for players in rotations(game_id, hero, villain):
            result = play(game_id, players, seed, budget, timings)
            scores.extend(r for r, p in zip(result, players, strict=True) if p == hero)
        samples.append(statistics.fmean(scores))
    return samples


@dataclass(frozen=True)
class Estimate:
    """A mean with its 95% confidence interval (normal approximation)."""

    mean: float
    half_width: float
    n: int

    @property
    def low(self) -> float:
        return self.mean - self.half_width

    @property
    def high(self) -> float:
        return self.mean + self.half_width

    def __str__(self) -> str:
        return f"{self.mean:+.2f} ± {self.half_width:.2f} (n={self.n})"


def estimate(samples: Sequence[float]) -> Estimate:
    n = len(samples)
    mean = statistics.fmean(samples)
    sd = statistics.stdev(samples) if n > 1 else math.inf
    return Estimate(mean, 1.96 * sd / math.sqrt(n), n)


def difference(a: Sequence[float], b: Sequence[float]) -> Estimate:
    """Paired difference a − b over the same seeds, with its 95% interval."""
    return estimate([x - y for x, y in zip(a, b, strict=True)])


__all__ = [
    "KHOZOR",
    "PLAYERS",
    "RANDOM",
    "THREE_FIVE_EIGHT",
    "Estimate",
    "Timings",
    "difference",
    "duplicate",
    "estimate",
    "play",
    "rotations",
]


def contract_baselines(games: int, seed: int = 0) -> dict[str, Estimate]:
    """A declarer's points per contract over whole games of `normal` for every seat,
    played on the engine alone (the source of the hard level's `CONTRACT_LATER`)."""
    from kozyr.games.three_five_eight import rules
    from kozyr.games.three_five_eight.hard import policy
    from kozyr.games.three_five_eight.simulate import play as playout

    def normal(state: Any, rng: random.Random) -> Any:
        seat = rules.acting_seat(state)
        if seat is None:
            return rules.chance_command(state, rng.randbytes(32))
        return policy(state, seat)

    points: dict[str, list[float]] = defaultdict(list)
    rng = random.Random(seed)
    for _ in range(games):
        for record in playout({}, rng, normal).state.records:
            points[record.contract.value].append(record.points[(record.dealer + 1) % 3])
    return {contract: estimate(values) for contract, values in sorted(points.items())}
