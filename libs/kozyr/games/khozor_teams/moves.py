"""Whose decision it is, what they may do, and what the clock does for them.

`legal_commands` is complete for the opener confirmation, for leads of one card and
for signals. Set leads (3 and 5 cards) and multi-card defences can be numerous with
a big hand (after pickups), so they are capped at `SET_LEAD_LIMIT` and
`DEFENCE_LIMIT`, found weakest first; the list always holds the pickup and the
timeout's default beat (the first one found is the weakest, see `beating_sets`).
`decide` accepts every legal command whether listed or not.
"""

from __future__ import annotations

from kozyr.games.decider import CHANCE, Turn
from kozyr.games.khozor_teams.beating import beating_sets, weakest_first
from kozyr.games.khozor_teams.leads import set_plays
from kozyr.games.khozor_teams.messages import (
    Beat,
    Command,
    ConfirmOpener,
    DealRound,
    DrawOpeningTeam,
    Lead,
    PickUp,
    ToggleSignal,
)
from kozyr.games.khozor_teams.model import (
    FIVE_CARD_LEAD_MIN_HAND,
    SEATS,
    THREE_CARD_LEAD_MIN_HAND,
    Phase,
    State,
    team_of,
)
from kozyr.games.khozor_teams.signals import SIGNAL_KINDS, true_signals
from kozyr.games.khozor_teams.texts import error

SET_LEAD_LIMIT = 24
DEFENCE_LIMIT = 24

KIND_CONFIRM_OPENER = "confirm_opener"
KIND_LEAD = "lead"
KIND_DEFEND = "defend"
KIND_OVER = "over"


def turn(state: State) -> Turn:
    """The current decision. Its number changes only when a decision is taken."""
    n = state.decisions
    if state.phase in (Phase.AWAITING_DRAW, Phase.AWAITING_DEAL):
        return Turn(n, CHANCE)
    if state.phase is Phase.CONFIRM_OPENER:
        assert state.opening_team is not None
        return Turn(n, KIND_CONFIRM_OPENER, state.opening_team.seats, state.turn_seconds)
    if state.phase is Phase.PLAY:
        assert state.to_act is not None
        kind = KIND_DEFEND if state.pile else KIND_LEAD
        return Turn(n, kind, (state.to_act,), state.turn_seconds)
    return Turn(n, KIND_OVER)


def chance_command(state: State, seed: bytes) -> DrawOpeningTeam | DealRound:
    """The table's move when `turn(state).is_chance`, with a fresh 32-byte seed."""
    if state.phase is Phase.AWAITING_DRAW:
        return DrawOpeningTeam(seed)
    if state.phase is Phase.AWAITING_DEAL:
        return DealRound(seed)
    raise error("GAME_OVER" if state.phase is Phase.OVER else "WRONG_PHASE")


def _lead_commands(state: State, seat: int) -> list[Command]:
    hand = state.hands[seat]
    assert state.trump is not None
    commands: list[Command] = [Lead(seat, (c,)) for c in weakest_first(hand, state.trump)]
    smallest = min(len(h) for h in state.hands)
    if smallest >= THREE_CARD_LEAD_MIN_HAND:
        commands.extend(Lead(seat, p) for p in set_plays(hand, 3, SET_LEAD_LIMIT))
    if not state.reserve and smallest >= FIVE_CARD_LEAD_MIN_HAND:
        commands.extend(Lead(seat, p) for p in set_plays(hand, 5, SET_LEAD_LIMIT))
    return commands


def _defence_commands(state: State, seat: int, limit: int) -> list[Command]:
    assert state.trump is not None
    beats = beating_sets(state.hands[seat], state.pile[-1].cards, state.trump, limit)
    return [*(Beat(seat, b) for b in beats), PickUp(seat)]


def _signal_commands(state: State, seat: int) -> list[Command]:
    possible = state.signals[seat] | true_signals(state.hands[seat])
    return [ToggleSignal(seat, kind) for kind in SIGNAL_KINDS if kind in possible]


def legal_commands(state: State, seat: int) -> list[Command]:
    """What `seat` may do now: its turn's moves first (if any), then signal toggles."""
    if not 0 <= seat < SEATS or not state.round_in_progress:
        return []
    commands: list[Command] = []
    if state.phase is Phase.CONFIRM_OPENER:
        team = state.opening_team
        if team is not None and team_of(seat) is team:
            commands.extend(ConfirmOpener(seat, opener) for opener in team.seats)
    elif seat == state.to_act:
        if state.pile:
            commands.extend(_defence_commands(state, seat, DEFENCE_LIMIT))
        else:
            commands.extend(_lead_commands(state, seat))
    commands.extend(_signal_commands(state, seat))
    return commands


def default_command(state: State, seat: int) -> Command:
    """The clock's "lowest safe move" for `seat` (RULES.md, Timeouts and absence).

    Opener: the lowest seat of the opening team, confirmed by `seat`. Lead: one card,
    the weakest ordinary card, non-trumps first, a joker only when nothing else is left.
    Defence: the legal beat of least total strength, else pick up.
    """
    if state.phase is Phase.OVER:
        raise error("GAME_OVER")
    if not 0 <= seat < SEATS:
        raise error("INVALID_SEAT", seat=seat)
    if state.phase is Phase.CONFIRM_OPENER:
        team = state.opening_team
        assert team is not None
        if team_of(seat) is not team:
            raise error("NOT_ON_OPENING_TEAM")
        return ConfirmOpener(seat, min(team.seats))
    if state.phase is not Phase.PLAY:
        raise error("NOT_A_PLAYER_MOVE")
    if seat != state.to_act:
        raise error("NOT_YOUR_TURN")
    assert state.trump is not None
    if state.pile:
        return _defence_commands(state, seat, limit=1)[0]
    return Lead(seat, (weakest_first(state.hands[seat], state.trump)[0],))
