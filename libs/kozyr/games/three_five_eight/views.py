"""What each seat may see: `view(state, seat)` and `redact(event, seat)`.

RULES.md "what every seat may know": a seat sees its own cards (only the first six
before the contract), the public plays, counts of other hands, scores and the turn.
The talon and the discards are the declarer's alone; exchanged cards are the giver's
and the receiver's alone; the deal's seed is nobody's until the deal has ended.
`seat=None` is a spectator: public facts only. Moderators read unredacted events.

Every value is JSON-able (cards as "AS"/"10H", seeds as hex, enums by value).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from kozyr.games.cards import Card
from kozyr.games.codec import to_json
from kozyr.games.three_five_eight import scoring
from kozyr.games.three_five_eight.model import (
    DEALS,
    FIRST_LOOK,
    GAME_ID,
    SEATS,
    CardExchanged,
    CardsDealt,
    CardsDiscarded,
    Contract,
    DealState,
    Event,
    ExchangeSkipped,
    HandsCompleted,
    Phase,
    State,
    TalonTaken,
)
from kozyr.games.three_five_eight.options import options_json
from kozyr.games.three_five_eight.ranking import display_key
from kozyr.games.three_five_eight.rules import turn

_CONTRACT_ORDER = {c: i for i, c in enumerate(Contract)}

VIEW_KEYS: tuple[str, ...] = (
    "game_id",
    "seat",
    "options",
    "phase",
    "turn",
    "deal_number",
    "deals_total",
    "first_dealer",
    "contracts_used",
    "deal_scores",
    "totals",
    "result",
    "dealer",
    "declarer",
    "third",
    "roles",
    "contract",
    "trump",
    "targets",
    "tricks",
    "hand",
    "hand_counts",
    "talon_count",
    "talon",
    "discards",
    "discard_count",
    "trick",
    "trick_leader",
    "tricks_played",
    "last_trick",
    "exchange",
    "deal_commitment",
    "deal_seed",
)
"""Every key of `view()`, in every phase (docs/rules-three-five-eight.md describes them)."""


def _cards(cards: tuple[Card, ...] | list[Card]) -> list[str]:
    return [str(c) for c in cards]


def _sorted(cards: tuple[Card, ...]) -> list[str]:
    return [str(c) for c in sorted(cards, key=display_key)]


def _check_viewer(seat: int | None) -> None:
    """A programming error, not a rule error: the service passes only real seats."""
    if seat is not None and (type(seat) is not int or not 0 <= seat < SEATS):
        raise ValueError(f"no seat {seat!r} at a {GAME_ID} table")


def visible_hand(d: DealState, seat: int) -> tuple[Card, ...]:
    """The cards of its own hand that `seat` sees: the first six until the contract."""
    hand = d.hands[seat]
    return hand if d.contract is not None else hand[:FIRST_LOOK]


# ---------------------------------------------------------------------------- view


def view(state: State, seat: int | None) -> dict[str, Any]:
    """The client state of `seat` (None = spectator); keys: docs/rules-three-five-eight.md."""
    _check_viewer(seat)
    t = turn(state)
    d = state.deal
    out: dict[str, Any] = {
        "game_id": GAME_ID,
        "options": options_json(state.options),
        "phase": state.phase.value,
        "turn": {"number": t.number, "kind": t.kind, "seats": list(t.seats)},
        "deal_number": 0 if d is None else d.number,
        "deals_total": DEALS,
        "first_dealer": state.first_dealer,
        "contracts_used": [
            [c.value for c in sorted(used, key=_CONTRACT_ORDER.__getitem__)] for used in state.used
        ],
        "deal_scores": [
            {
                "deal": r.deal,
                "dealer": r.dealer,
                "declarer": (r.dealer + 1) % SEATS,
                "contract": r.contract.value,
                "targets": list(r.targets),
                "tricks": list(r.tricks),
                "points": list(r.points),
            }
            for r in state.records
        ],
        "totals": list(state.totals),
        "result": _result_json(state) if state.phase is Phase.OVER else None,
    }
    out.update(_deal_view(state, d))
    out.update(seat_view(state, seat))
    return out


def seat_view(state: State, seat: int | None) -> dict[str, Any]:
    """The keys of `view` that differ from viewer to viewer (None: the spectator's), as
    `view` shows them: a seat's own hand, the declarer's talon and discards, the
    exchange's cards for their giver and receiver. The rest is the same for the three
    seats and the spectators, so a table builds it once per version
    (`GamePlugin.seat_view`)."""
    _check_viewer(seat)
    d = state.deal
    if d is None:
        return {"seat": seat, "hand": [], "talon": None, "discards": None, "exchange": None}
    is_declarer = seat == d.declarer
    return {
        "seat": seat,
        "hand": [] if seat is None else _sorted(visible_hand(d, seat)),
        "talon": _cards(d.talon) if is_declarer and d.talon_taken else None,
        "discards": _cards(d.discards) if is_declarer and d.discards else None,
        "exchange": _exchange_view(d, seat) if d.transfers else None,
    }


def _deal_view(state: State, d: DealState | None) -> dict[str, Any]:
    """The deal's part of `view` that every viewer shares (`seat_view` has the rest)."""
    if d is None:
        return {
            "dealer": None,
            "declarer": None,
            "third": None,
            "roles": None,
            "contract": None,
            "trump": None,
            "targets": None,
            "tricks": [0] * SEATS,
            "hand_counts": [0] * SEATS,
            "talon_count": 0,
            "discard_count": 0,
            "trick": [],
            "trick_leader": None,
            "tricks_played": 0,
            "last_trick": None,
            "deal_commitment": None,
            "deal_seed": None,
        }
    declarer = d.declarer
    return {
        "dealer": d.dealer,
        "declarer": declarer,
        "third": d.third,
        "roles": [scoring.role_of(s, d.dealer).value for s in range(SEATS)],
        "contract": None if d.contract is None else d.contract.value,
        "trump": None if d.trump is None else d.trump.value,
        "targets": None if d.contract is None else list(scoring.targets(d.contract, d.dealer)),
        "tricks": list(d.tricks),
        "hand_counts": [len(h) for h in d.hands],
        "talon_count": 0 if d.talon_taken else len(d.talon),
        "discard_count": len(d.discards),
        "trick": [{"seat": (d.leader + i) % SEATS, "card": str(c)} for i, c in enumerate(d.trick)],
        "trick_leader": d.leader if state.phase is Phase.PLAY else None,
        "tricks_played": len(d.completed),
        "last_trick": _last_trick(d),
        "deal_commitment": d.commitment,
        "deal_seed": d.seed.hex() if d.seed_revealed else None,
    }


def _last_trick(d: DealState) -> dict[str, Any] | None:
    if not d.completed:
        return None
    last = d.completed[-1]
    return {
        "number": last.number,
        "leader": last.leader,
        "winner": last.winner,
        "cards": [
            {"seat": (last.leader + i) % SEATS, "card": str(c)} for i, c in enumerate(last.cards)
        ],
    }


def _exchange_view(d: DealState, seat: int | None) -> dict[str, Any]:
    """Legs with progress; each step's cards only for its giver and receiver."""
    given = [0] * len(d.transfers)
    skipped = [False] * len(d.transfers)
    steps: list[dict[str, Any]] = []
    leg = 0
    for entry in d.exchange_log:
        if isinstance(entry, ExchangeSkipped):
            skipped[leg] = True
            leg += 1
            continue
        given[leg] += 1
        steps.append(_exchange_step(entry, seat))
        if given[leg] == d.transfers[leg].count:
            leg += 1
    return {
        "transfers": [
            {
                "giver": t.giver,
                "receiver": t.receiver,
                "count": t.count,
                "given": given[i],
                "skipped": skipped[i],
            }
            for i, t in enumerate(d.transfers)
        ],
        "current": d.transfer_index if d.transfer_index < len(d.transfers) else None,
        "steps": steps,
    }


def _exchange_step(e: CardExchanged, seat: int | None) -> dict[str, Any]:
    party = seat is not None and seat in (e.giver, e.receiver)
    return {
        "giver": e.giver,
        "receiver": e.receiver,
        "number": e.number,
        "given": str(e.given) if party else None,
        "returned": str(e.returned) if party else None,
    }


def _result_json(state: State) -> dict[str, Any]:
    places = state.places or scoring.places(state.totals)
    return {
        "totals": list(state.totals),
        "places": list(places),
        "winners": [s for s in range(SEATS) if places[s] == 1],
    }


# -------------------------------------------------------------------------- redact


def redact(event: Event, seat: int | None) -> dict[str, Any] | None:
    """The JSON data of `event` as `seat` sees it in its history (None = spectator).

    Public events come back whole. Never None in 3-5-8: every event is at least
    known to have happened; its hidden cards are removed.
    """
    _check_viewer(seat)
    hide = _REDACTORS.get(type(event))
    if hide is None:
        data = to_json(event)
        assert isinstance(data, dict)
        return data
    return hide(event, seat)


def _dealt(e: CardsDealt, seat: int | None) -> dict[str, Any]:
    return {
        "deal": e.deal,
        "dealer": e.dealer,
        "commitment": e.commitment,
        "hand": [] if seat is None else _cards(e.hands[seat][:FIRST_LOOK]),
        "hand_counts": [len(h) for h in e.hands],
        "talon_count": len(e.talon),
    }


def _completed(e: HandsCompleted, seat: int | None) -> dict[str, Any]:
    return {"deal": e.deal, "cards": [] if seat is None else _cards(e.rests[seat])}


def _exchanged(e: CardExchanged, seat: int | None) -> dict[str, Any]:
    return _exchange_step(e, seat)


def _talon(e: TalonTaken, seat: int | None) -> dict[str, Any]:
    return {
        "seat": e.seat,
        "cards": _cards(e.cards) if seat == e.seat else None,
        "count": len(e.cards),
    }


def _discarded(e: CardsDiscarded, seat: int | None) -> dict[str, Any]:
    return {
        "seat": e.seat,
        "cards": _cards(e.cards) if seat == e.seat else None,
        "count": len(e.cards),
    }


_REDACTORS: dict[type, Callable[[Any, int | None], dict[str, Any]]] = {
    CardsDealt: _dealt,
    HandsCompleted: _completed,
    CardExchanged: _exchanged,
    TalonTaken: _talon,
    CardsDiscarded: _discarded,
}
