"""The bots' playing strength: a duplicate tournament on the pure engines, in-process.

    .venv/bin/python tests/bench/bench_bots.py [--games N] [--worlds W] [--timing D]

Figures printed, never asserted (docs/bots.md, docs/benchmarks.md). The harness is
`tests/support/tournament.py`: every seed fixes the deals and is replayed with the
seats rotated (3-5-8: the measured level in each of the three seats against two of the
other; Khözör: the measured level as team A, then as team B), so the cards cancel out.

* 3-5-8: the measured level's mean points per game (18 deals) against two seats of the
  other level, with its 95% confidence interval over seeds; `N` seeds for the pairings
  with `hard`, `10 N` for the others.
* Khözör: the share of matches (first to 5 rounds) the measured level's team wins,
  with its 95% interval; `5 N` seeds for the pairings with `hard`, `25 N` for the others.
* a ladder step is significant when its interval excludes 0 (3-5-8) or 50% (Khözör).
* decision times: p50/p95 per level and game over the tournament's decisions (those
  with more than one legal move); the `hard` level searches `W` worlds per decision
  here (reproducible on any machine, default 8) — and separately `D` decisions of a
  hard seat at the production budget (`KOZYR_BOTS_HARD_BUDGET_MS`, 200 ms).

Default (`N` = 2): under 10 minutes on a free core; docs/bots.md reports `--games 4`.
"""

from __future__ import annotations

import argparse
import random
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from kozyr.bots.levels import turn_moves
from kozyr.bots.search import Budget
from kozyr.table.edge.shown import table_view
from tests.support import tournament
from tests.support.tournament import (
    KHOZOR,
    RANDOM,
    THREE_FIVE_EIGHT,
    Estimate,
    Timings,
    duplicate,
    estimate,
)

LADDER = [("hard", "normal"), ("hard", "easy"), ("normal", "easy"), ("easy", RANDOM)]


def _seeds(game_id: str, hero: str, villain: str, games: int) -> range:
    hard = "hard" in (hero, villain)
    scale = (1 if hard else 10) if game_id == THREE_FIVE_EIGHT else (5 if hard else 25)
    return range(10_000, 10_000 + scale * games)


def _line(game_id: str, hero: str, villain: str, e: Estimate, seconds: float) -> str:
    if game_id == THREE_FIVE_EIGHT:
        figure = f"{e.mean:+6.2f} ± {e.half_width:5.2f} points/game"
        significant = e.low > 0 or e.high < 0
    else:
        figure = f"{100 * e.mean:5.1f}% ± {100 * e.half_width:4.1f}% matches won"
        significant = e.low > 0.5 or e.high < 0.5
    return (
        f"  {hero:>6} vs {villain:<6} {figure}   seeds {e.n:4d}"
        f"   significant {'yes' if significant else 'no '}   {seconds:6.0f} s"
    )


def _timing(game_id: str, decisions: int, timings: Timings) -> None:
    """`decisions` hard decisions at the production budget (hard against normal)."""
    players = ("hard", *(["normal"] * (tournament.SEATS[game_id] - 1)))
    game = tournament.start(game_id, players, 1)
    made = 0
    rng = random.Random(1)
    while not game.table.is_over and made < decisions:
        seat = game.table.game.turn(game.table.state).seats[0]
        if players[seat] == "hard":
            view = table_view(game.table, seat)
            made += len(turn_moves(view)) > 1
        tournament.apply(game, seat, tournament.move(game, seat, rng, Budget(), timings))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--games", type=int, default=2, help="seeds scale (default 2)")
    parser.add_argument("--worlds", type=int, default=8, help="hard: worlds per decision")
    parser.add_argument("--timing", type=int, default=40, help="hard decisions at 200 ms")
    parser.add_argument("--only", choices=[THREE_FIVE_EIGHT, KHOZOR], help="one game only")
    args = parser.parse_args()
    budget = Budget(milliseconds=60_000, worlds=args.worlds)
    timings = Timings()
    began = time.perf_counter()
    games = [g for g in (THREE_FIVE_EIGHT, KHOZOR) if args.only in (None, g)]
    for game_id in games:
        print(f"{game_id}: hard searches {args.worlds} worlds per decision", flush=True)
        for hero, villain in LADDER:
            started = time.perf_counter()
            seeds = _seeds(game_id, hero, villain, args.games)
            samples = duplicate(game_id, hero, villain, seeds, budget, timings)
            line = _line(game_id, hero, villain, estimate(samples), time.perf_counter() - started)
            print(line, flush=True)
    print("decision time per level (one core; decisions with more than one legal move)")
    for game_id in games:
        for player in ("easy", "normal", "hard"):
            n = len(timings.seconds[(player, game_id)])
            p50 = 1000 * timings.percentile(player, game_id, 0.5)
            p95 = 1000 * timings.percentile(player, game_id, 0.95)
            print(f"  {game_id:<16} {player:<6} p50 {p50:8.2f} ms  p95 {p95:8.2f} ms  n={n}")
    production = Timings()
    for game_id in games:
        _timing(game_id, args.timing, production)
        p50 = 1000 * production.percentile("hard", game_id, 0.5)
        p95 = 1000 * production.percentile("hard", game_id, 0.95)
        n = len(production.seconds[("hard", game_id)])
        print(f"  {game_id:<16} hard at the 200 ms budget: p50 {p50:.0f} ms  p95 {p95:.0f} ms"
              f"  n={n}")  # fmt: skip
    print(f"total {time.perf_counter() - began:.0f} s")


if __name__ == "__main__":
    main()
