"""What one seat (or a spectator, seat None) may see: the view and the redacted history.

The view holds the seat's own hand, the public plays of the current cycle, counts,
scores, the turn, the deal's commitment, and the signals of the seat's own team.

History (`redact`) never names a card. A card named in an event may later sleep, and
sleeping cards must never be shown again, "not even as history" — but `redact` sees
one event, not the future. So plays, pickups, deals and refills appear in history as
who and how many; the cards themselves live only in the current view (own hand, the
current cycle's pile). The other team's signals are absent from history altogether,
and the deal's seed appears only in `DealSeedRevealed`, once the round is over.
"""

from __future__ import annotations

from typing import Any

from kozyr.games.cards import Card
from kozyr.games.codec import to_json
from kozyr.games.khozor_teams.beating import weakest_first
from kozyr.games.khozor_teams.messages import (
    CardsBeaten,
    CardsLed,
    Event,
    PilePickedUp,
    ReserveDrawn,
    RoundDealt,
    SignalCleared,
    SignalSet,
)
from kozyr.games.khozor_teams.model import GAME_ID, SEATS, SignalKind, State, Team, team_of
from kozyr.games.khozor_teams.moves import turn

VIEW_KEYS = (
    "game_id",
    "viewer_seat",
    "viewer_team",
    "phase",
    "round",
    "trump",
    "wins",
    "round_winners",
    "opening_team",
    "opener",
    "turn",
    "turn_seconds",
    "hand",
    "hand_counts",
    "reserve_count",
    "sleeping_count",
    "pile",
    "signals",
    "deal_commitment",
    "deal_seed",
    "match_winner",
)


def _cards(cards: tuple[Card, ...]) -> list[str]:
    return [str(c) for c in cards]


def _own_hand(state: State, seat: int | None) -> list[str]:
    if seat is None:
        return []
    hand = state.hands[seat]
    return _cards(tuple(weakest_first(hand, state.trump))) if state.trump else _cards(hand)


def _team_signals(state: State, seat: int | None) -> list[dict[str, Any]]:
    if seat is None:
        return []
    return [
        {
            "seat": mate,
            "three_set": SignalKind.THREE_SET in state.signals[mate],
            "five_set": SignalKind.FIVE_SET in state.signals[mate],
        }
        for mate in team_of(seat).seats
    ]


def view(state: State, seat: int | None) -> dict[str, Any]:
    """The whole client state of `seat` (None: a spectator, who sees no hand, no signal)."""
    own = seat_view(state, seat)
    t = turn(state)
    return {
        "game_id": GAME_ID,
        "viewer_seat": own["viewer_seat"],
        "viewer_team": own["viewer_team"],
        "phase": state.phase.value,
        "round": state.round_no,
        "trump": state.trump.value if state.trump else None,
        "wins": {team.value: state.wins(team) for team in Team},
        "round_winners": [
            {"round": r.round_no, "team": r.team.value, "seat": r.seat} for r in state.results
        ],
        "opening_team": state.opening_team.value if state.opening_team else None,
        "opener": state.opener,
        "turn": {"number": t.number, "kind": t.kind, "seats": list(t.seats)},
        "turn_seconds": state.turn_seconds,
        "hand": own["hand"],
        "hand_counts": [len(h) for h in state.hands],
        "reserve_count": len(state.reserve),
        "sleeping_count": len(state.sleeping),
        "pile": [
            {"seat": p.seat, "kind": p.kind.value, "cards": _cards(p.cards)} for p in state.pile
        ],
        "signals": own["signals"],
        "deal_commitment": state.commitment,
        "deal_seed": state.seed.hex() if state.seed is not None and state.seed_revealed else None,
        "match_winner": state.winner.value if state.winner else None,
    }


def seat_view(state: State, seat: int | None) -> dict[str, Any]:
    """The keys of `view` that differ from viewer to viewer (None: the spectator's), as
    `view` shows them: the rest is the same for all eight seats and the spectators, so a
    table builds it once per version (`GamePlugin.seat_view`)."""
    if seat is not None and not 0 <= seat < SEATS:
        raise ValueError(f"no seat {seat} at a khozor_teams table")
    return {
        "viewer_seat": seat,
        "viewer_team": team_of(seat).value if seat is not None else None,
        "hand": _own_hand(state, seat),
        "signals": _team_signals(state, seat),
    }


def redact(event: Event, seat: int | None) -> dict[str, Any] | None:
    """The JSON data of `event` as `seat` may see it in its history; None: not at all."""
    if seat is not None and not 0 <= seat < SEATS:
        raise ValueError(f"no seat {seat} at a khozor_teams table")
    if isinstance(event, SignalSet | SignalCleared):
        if seat is None or team_of(seat) is not team_of(event.seat):
            return None
        return _data(event)
    if isinstance(event, RoundDealt):
        return {
            "round_no": event.round_no,
            "trump": event.trump.value,
            "opening_team": event.opening_team.value,
            "commitment": event.commitment,
            "hand_counts": [len(h) for h in event.hands],
            "reserve_count": len(event.reserve),
        }
    if isinstance(event, CardsLed | CardsBeaten | PilePickedUp | ReserveDrawn):
        return {"seat": event.seat, "card_count": len(event.cards)}
    return _data(event)


def _data(event: Event) -> dict[str, Any]:
    data = to_json(event)
    assert isinstance(data, dict)
    return data
