"""3-5-8 for three players: the pure decider (DESIGN.md §3, RULES.md "Game 1").

The module itself satisfies `kozyr.games.decider.Decider`:

    state = initial_state({"must_trump": False, "turn_seconds": 180})
    t = turn(state)                       # Turn(number, kind, seats)
    cmd = chance_command(state, seed) if t.is_chance else <a player's command>
    for event in decide(state, cmd):      # RuleError for an illegal command
        state = evolve(state, event)

Chance is a 32-byte seed carried by a command (`DrawFirstDealer`, `DealCards`); the
rules never draw. `view`/`redact` give each seat what it may know. Rule decisions
beyond RULES.md are listed in docs/rules-three-five-eight.md.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from kozyr.games.three_five_eight.model import (
    COMMANDS,
    DEALS,
    DECK,
    EVENTS,
    GAME_ID,
    SEATS,
    CardExchanged,
    CardPlayed,
    CardsDealt,
    CardsDiscarded,
    ChooseContract,
    Command,
    Contract,
    ContractChosen,
    DealCards,
    DealScored,
    DealSeedRevealed,
    DealState,
    Discard,
    DrawFirstDealer,
    Event,
    ExchangePlanned,
    ExchangeSkipped,
    FirstDealerDrawn,
    GameEnded,
    GiveCard,
    HandsCompleted,
    Options,
    Phase,
    PlayCard,
    Role,
    State,
    TalonTaken,
    Transfer,
    TrickTaken,
)
from kozyr.games.three_five_eight.options import parse_options
from kozyr.games.three_five_eight.rules import (
    chance_command,
    deal_from_seed,
    decide,
    default_command,
    is_over,
    legal_commands,
    turn,
)
from kozyr.games.three_five_eight.scoring import places
from kozyr.games.three_five_eight.standing import standing
from kozyr.games.three_five_eight.texts import (
    CONTRACT_NAMES,
    PHASE_NAMES,
    REASONS,
    ROLE_NAMES,
    TURN_KIND_NAMES,
)
from kozyr.games.three_five_eight.transitions import evolve, evolve_all
from kozyr.games.three_five_eight.views import VIEW_KEYS, redact, seat_view, view


def initial_state(options: Mapping[str, Any]) -> State:
    """A new game waiting for the first dealer's draw. OptionsError for bad options."""
    return State(options=parse_options(options))


def fold(options: Mapping[str, Any], events: Iterable[Event]) -> State:
    """The state after `events`, replayed from a new game: the only way states are built."""
    return evolve_all(initial_state(options), events)


def result(state: State) -> dict[str, Any]:
    """Totals and places per seat (equal totals share a place; "1-1-3" ranking).

    Before the end the same figures are provisional: `final` says which.
    """
    ranks = state.places or places(state.totals)
    return {
        "final": is_over(state),
        "deals_played": len(state.records),
        "totals": list(state.totals),
        "places": list(ranks),
        "winners": [s for s in range(SEATS) if ranks[s] == 1],
    }


__all__ = [
    "COMMANDS",
    "CONTRACT_NAMES",
    "DEALS",
    "DECK",
    "EVENTS",
    "GAME_ID",
    "PHASE_NAMES",
    "REASONS",
    "ROLE_NAMES",
    "SEATS",
    "TURN_KIND_NAMES",
    "VIEW_KEYS",
    "CardExchanged",
    "CardPlayed",
    "CardsDealt",
    "CardsDiscarded",
    "ChooseContract",
    "Command",
    "Contract",
    "ContractChosen",
    "DealCards",
    "DealScored",
    "DealSeedRevealed",
    "DealState",
    "Discard",
    "DrawFirstDealer",
    "Event",
    "ExchangePlanned",
    "ExchangeSkipped",
    "FirstDealerDrawn",
    "GameEnded",
    "GiveCard",
    "HandsCompleted",
    "Options",
    "Phase",
    "PlayCard",
    "Role",
    "State",
    "TalonTaken",
    "Transfer",
    "TrickTaken",
    "chance_command",
    "deal_from_seed",
    "decide",
    "default_command",
    "evolve",
    "fold",
    "initial_state",
    "is_over",
    "legal_commands",
    "redact",
    "result",
    "seat_view",
    "standing",
    "turn",
    "view",
]

# The game's plugin registers it with the table platform (kozyr.games.plugin); it needs
# the names above, so it comes last.
from kozyr.games.three_five_eight.plugin import PLUGIN  # noqa: E402

__all__ += ["PLUGIN"]
