"""Throughput of the 3-5-8 decider on one core: figures printed, never asserted.

    .venv/bin/python tests/bench/bench_three_five_eight.py [games]

* full games/s — random legal games (18 deals) from the first draw to the end,
  including the policy (legal_commands + a random pick) and the table's seeds;
* decide+evolve/s — the recorded commands of those games decided and applied again,
  nothing else (one decide and its events' evolves count as one step);
* fold events/s — rebuilding the final states from the recorded events (a replay);
* view/s — one seat's view of a mid-game state.
"""

from __future__ import annotations

import random
import sys
import time

import kozyr.games.three_five_eight as game
from kozyr.games.three_five_eight.simulate import Playout, play, random_command


def _games(count: int) -> tuple[list[Playout], float]:
    started = time.perf_counter()
    playouts = [play({}, random.Random(i), random_command) for i in range(count)]
    return playouts, time.perf_counter() - started


def _redecide(playouts: list[Playout]) -> tuple[int, float]:
    steps = 0
    started = time.perf_counter()
    for p in playouts:
        state = game.initial_state({})
        for command in p.commands:
            for event in game.decide(state, command):
                state = game.evolve(state, event)
        steps += len(p.commands)
    return steps, time.perf_counter() - started


def _fold(playouts: list[Playout]) -> tuple[int, float]:
    started = time.perf_counter()
    for p in playouts:
        assert game.fold({}, p.events) == p.state
    return sum(len(p.events) for p in playouts), time.perf_counter() - started


def _views(playout: Playout, count: int) -> float:
    state = game.fold({}, playout.events[: len(playout.events) // 2])
    started = time.perf_counter()
    for i in range(count):
        game.view(state, i % 3)
    return count / (time.perf_counter() - started)


def main() -> None:
    count = int(sys.argv[1]) if len(sys.argv) > 1 else 100
    _games(3)  # warm-up
    playouts, seconds = _games(count)
    commands = sum(len(p.commands) for p in playouts)
    events = sum(len(p.events) for p in playouts)
    print(f"3-5-8: {count} random full games (18 deals) in {seconds:.2f} s")
    print(f"  full games/s          {count / seconds:10.1f}")
    print(
        f"  commands per game     {commands / count:10.1f}   events per game {events / count:.1f}"
    )
    steps, seconds = _redecide(playouts)
    print(f"  decide+evolve/s       {steps / seconds:10.0f}")
    n_events, seconds = _fold(playouts)
    print(f"  fold events/s         {n_events / seconds:10.0f}")
    print(f"  view/s                {_views(playouts[0], 5000):10.0f}")


if __name__ == "__main__":
    main()
