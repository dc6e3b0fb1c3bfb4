"""Perfect-information Monte Carlo (PIMC): the `hard` level's search, game-neutral, for
the games' own searching players (`GameInfo.levels`, `kozyr.games.info.Searcher`).

A seat cannot see the other hands, so it samples them: each *determinization* deals the
unseen cards consistently with everything the seat has seen (each game's `hard` module,
`kozyr.games.<game>.hard`, builds it). On each
one, every candidate move is played and the game is played out to the end of the deal
(or round) by the `normal` rules of thumb for all seats — a perfect-information rollout
on the pure engine. A move's value is its mean outcome over the sampled worlds; the same
worlds judge every candidate (common random numbers), which removes the luck of the
deal from the comparison.

This is the method of Ginsberg's GIB for bridge (M. L. Ginsberg, "GIB: Imperfect
Information in a Computationally Challenging Game", JAIR 14, 2001), with Monte Carlo
rollouts where GIB runs a double-dummy solver, analysed by J. Long, N. Sturtevant,
M. Buro and T. Furtak, "Understanding the Success of Perfect Information Monte Carlo
Sampling in Game Tree Search" (AAAI 2010). Its known weaknesses — strategy fusion and
non-locality — are those of every PIMC player; Information-Set MCTS (Cowling, Powley,
Whitehouse 2012; OpenSpiel's `ismcts.py`) avoids the first at a higher cost per move.

The budget is a number of worlds and time, whichever ends first: the time is the
caller's (`Decision.out_of_time`: the bots service's `KOZYR_BOTS_HARD_BUDGET_MS`), since
a game reads no clock (import-linter's games-pure). The random generator is seeded per
decision (`Decision.seed`), so a decision that reaches its world cap is reproducible
anywhere, and one cut by time differs only in how many worlds it saw.
"""

from __future__ import annotations

import math
import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TypeVar

from kozyr.games.info import Decision

Move = TypeVar("Move")
World = TypeVar("World")

MARGIN = 1.0
"""How many standard errors a move must gain over the fallback to replace it."""


@dataclass(frozen=True, slots=True)
class Outcome:
    """What a search found: each candidate's mean value and how many worlds it saw."""

    best: int
    means: tuple[float, ...]
    worlds: int


def pimc(
    candidates: Sequence[Move],
    sample: Callable[[random.Random], World | None],
    value: Callable[[World, Move], float],
    decision: Decision,
    rng: random.Random,
) -> Outcome:
    """The candidate of the best mean `value` over sampled worlds — if it is clearly
    better than the first candidate, the fallback, which wins otherwise (ties, no world
    at all, a gain within the noise). `sample` may return None for a world it could
    not build; such a draw is skipped. The search stops at the decision's `worlds` or
    when it is `out_of_time`, whichever comes first (at least one draw is made)."""
    values: list[list[float]] = [[] for _ in candidates]
    worlds = 0
    draws = 0
    while worlds < decision.worlds and draws < 4 * decision.worlds:
        draws += 1
        world = sample(rng)
        if world is not None:
            for i, move in enumerate(candidates):
                values[i].append(value(world, move))
            worlds += 1
        if decision.out_of_time():
            break
    if not worlds:
        return Outcome(0, (0.0,) * len(candidates), 0)
    means = tuple(sum(v) / worlds for v in values)
    best = max(range(len(candidates)), key=lambda i: (means[i], -i))
    if best and not _clearly_better(values[best], values[0]):
        best = 0
    return Outcome(best, means, worlds)


def _clearly_better(challenger: Sequence[float], fallback: Sequence[float]) -> bool:
    """Whether the challenger beats the fallback by more than `MARGIN` standard errors
    of their paired difference: with few worlds, the best of many candidates is often
    best by luck, and the fallback (the `normal` move) is the better bet then."""
    diffs = [a - b for a, b in zip(challenger, fallback, strict=True)]
    n = len(diffs)
    mean = sum(diffs) / n
    if n < 2:
        return False
    variance = sum((d - mean) ** 2 for d in diffs) / (n - 1)
    return mean > MARGIN * math.sqrt(variance / n)
