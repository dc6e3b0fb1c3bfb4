"""Khözör for eight: random full matches per second and decide+evolve per second.

Run: .venv/bin/python tests/bench/bench_khozor_teams.py [matches]
Figures are printed, never asserted. One process, one core; a fixed seed makes the
matches (not the timings) repeatable.
"""

from __future__ import annotations

import random
import statistics
import sys
import time

from kozyr.games import khozor_teams as game
from kozyr.games.khozor_teams import State


def random_match(rng: random.Random) -> tuple[list[tuple[State, object]], State]:
    """One match to 5 round wins with uniformly random legal moves; the (state, command)
    pairs are kept to time decide+evolve alone afterwards."""
    state = game.initial_state({})
    steps: list[tuple[State, object]] = []
    while not game.is_over(state):
        t = game.turn(state)
        if t.is_chance:
            command: object = game.chance_command(state, rng.randbytes(32))
        else:
            command = rng.choice(game.legal_commands(state, rng.choice(t.seats)))
        steps.append((state, command))
        for event in game.decide(state, command):
            state = game.evolve(state, event)
    return steps, state


def main(matches: int) -> None:
    rng = random.Random(20240601)
    started = time.perf_counter()
    recorded: list[tuple[State, object]] = []
    lengths: list[int] = []
    rounds: list[int] = []
    for _ in range(matches):
        steps, final = random_match(rng)
        recorded.extend(steps)
        lengths.append(len(steps))
        rounds.append(len(final.results))
    elapsed = time.perf_counter() - started

    started = time.perf_counter()
    events = 0
    for state, command in recorded:
        for event in game.decide(state, command):
            state = game.evolve(state, event)
            events += 1
    replay = time.perf_counter() - started

    started = time.perf_counter()
    for state, _ in recorded:
        game.legal_commands(state, game.turn(state).seats[0] if game.turn(state).seats else 0)
    listing = time.perf_counter() - started

    started = time.perf_counter()
    for state, _ in recorded[::8]:
        for seat in range(8):
            game.view(state, seat)
    views = time.perf_counter() - started

    print(f"random matches (to 5 round wins): {matches / elapsed:8.1f} /s")
    print(
        f"  decisions per match: mean {statistics.mean(lengths):.0f},"
        f" median {statistics.median(lengths):.0f}, max {max(lengths)};"
        f" rounds per match: mean {statistics.mean(rounds):.1f}"
    )
    print(f"decide+evolve:                    {len(recorded) / replay:8.0f} commands/s")
    print(f"  events applied:                 {events / replay:8.0f} events/s")
    print(f"legal_commands:                   {len(recorded) / listing:8.0f} calls/s")
    print(f"view:                             {len(recorded[::8]) * 8 / views:8.0f} calls/s")


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 50)
