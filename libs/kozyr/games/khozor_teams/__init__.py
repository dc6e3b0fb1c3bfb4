"""Khözör for eight, in teams (game id `khozor_teams`): the pure rules, a decider.

The module itself satisfies `kozyr.games.decider.Decider`. Rules and every decision
beyond RULES.md are documented in docs/rules-khozor.md.
"""

from __future__ import annotations

from kozyr.games.khozor_teams.beating import assign_beats, beating_sets, beats, power
from kozyr.games.khozor_teams.evolve import evolve, fold
from kozyr.games.khozor_teams.leads import holds_set
from kozyr.games.khozor_teams.messages import (
    COMMANDS,
    EVENTS,
    Beat,
    CardsBeaten,
    CardsLed,
    Command,
    ConfirmOpener,
    CycleSlept,
    DealRound,
    DealSeedRevealed,
    DrawOpeningTeam,
    Event,
    Lead,
    MatchWon,
    OpenerConfirmed,
    OpeningTeamDrawn,
    PickUp,
    PilePickedUp,
    ReserveDrawn,
    RoundDealt,
    RoundWon,
    SignalCleared,
    SignalSet,
    ToggleSignal,
)
from kozyr.games.khozor_teams.model import (
    DECK,
    GAME_ID,
    SEATS,
    ClearReason,
    Phase,
    PlayKind,
    SignalKind,
    State,
    Team,
    team_of,
    trump_of_round,
)
from kozyr.games.khozor_teams.moves import chance_command, default_command, legal_commands, turn
from kozyr.games.khozor_teams.options import initial_state
from kozyr.games.khozor_teams.results import is_over, result
from kozyr.games.khozor_teams.rules import deal_from_seed, decide
from kozyr.games.khozor_teams.signals import audience, tapped_by, true_signals
from kozyr.games.khozor_teams.standing import standing
from kozyr.games.khozor_teams.texts import PHASE_NAMES, REASONS, SIGNAL_NAMES, TURN_KIND_NAMES
from kozyr.games.khozor_teams.views import VIEW_KEYS, redact, seat_view, view

__all__ = [
    "COMMANDS",
    "DECK",
    "EVENTS",
    "GAME_ID",
    "PHASE_NAMES",
    "REASONS",
    "SEATS",
    "SIGNAL_NAMES",
    "TURN_KIND_NAMES",
    "VIEW_KEYS",
    "Beat",
    "CardsBeaten",
    "CardsLed",
    "ClearReason",
    "Command",
    "ConfirmOpener",
    "CycleSlept",
    "DealRound",
    "DealSeedRevealed",
    "DrawOpeningTeam",
    "Event",
    "Lead",
    "MatchWon",
    "OpenerConfirmed",
    "OpeningTeamDrawn",
    "Phase",
    "PickUp",
    "PilePickedUp",
    "PlayKind",
    "ReserveDrawn",
    "RoundDealt",
    "RoundWon",
    "SignalCleared",
    "SignalKind",
    "SignalSet",
    "State",
    "Team",
    "ToggleSignal",
    "assign_beats",
    "audience",
    "beating_sets",
    "beats",
    "chance_command",
    "deal_from_seed",
    "decide",
    "default_command",
    "evolve",
    "fold",
    "holds_set",
    "initial_state",
    "is_over",
    "legal_commands",
    "power",
    "redact",
    "result",
    "seat_view",
    "standing",
    "tapped_by",
    "team_of",
    "true_signals",
    "trump_of_round",
    "turn",
    "view",
]

# The game's plugin registers it with the table platform (kozyr.games.plugin); it needs
# the names above, so it comes last.
from kozyr.games.khozor_teams.plugin import PLUGIN

__all__ += ["PLUGIN"]
