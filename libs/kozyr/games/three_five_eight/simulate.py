"""Random and timeout-only playouts: whole games for benchmarks, tests and smoke runs.

A `random.Random` picks among the legal commands (a discard is 4 cards sampled
from the hand, as uniform as picking one of its 4 845 combinations but without
listing them) and supplies the seeds. The rules themselves never see the RNG.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from kozyr.games.three_five_eight.model import Command, Discard, Event, Phase, State
from kozyr.games.three_five_eight.options import parse_options
from kozyr.games.three_five_eight.rules import (
    acting_seat,
    chance_command,
    decide,
    default_command,
    legal_commands,
)
from kozyr.games.three_five_eight.transitions import evolve


def random_command(state: State, rng: random.Random) -> Command:
    """A uniformly random legal command (or the table's seed) for the current turn."""
    seat = acting_seat(state)
    if seat is None:
        return chance_command(state, rng.randbytes(32))
    if state.phase is Phase.DISCARD:
        assert state.deal is not None
        hand = state.deal.hands[seat]
        return Discard(seat, tuple(rng.sample(hand, 4)))
    return rng.choice(legal_commands(state, seat))


def timeout_command(state: State, rng: random.Random) -> Command:
    """The clock's default move every time (the table's seed from `rng`)."""
    seat = acting_seat(state)
    if seat is None:
        return chance_command(state, rng.randbytes(32))
    return default_command(state, seat)


Policy = Callable[[State, random.Random], Command]


@dataclass
class Playout:
    """A finished game: its final state, the commands sent and the events they caused."""

    state: State
    commands: list[Command] = field(default_factory=list)
    events: list[Event] = field(default_factory=list)


def play(
    options: Mapping[str, Any],
    rng: random.Random,
    policy: Policy = random_command,
    start: State | None = None,
) -> Playout:
    """Play to the end from `start` (or a new game), choosing by `policy`."""
    state = start if start is not None else State(options=parse_options(options))
    out = Playout(state)
    while state.phase is not Phase.OVER:
        command = policy(state, rng)
        events = decide(state, command)
        for e in events:
            state = evolve(state, e)
        out.commands.append(command)
        out.events.extend(events)
    out.state = state
    return out
