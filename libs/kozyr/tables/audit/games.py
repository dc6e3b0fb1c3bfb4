"""What the auditor must know of each game beyond the `Decider` protocol.

The deal and result events, the field numbering deals, and which player command opens
each move (so that `verify` can re-decide a recorded move and compare the outcome).
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from kozyr.games import khozor_teams, three_five_eight

Data = dict[str, Any]


@dataclass(frozen=True, slots=True)
class GameProfile:
    """What the auditor must know of a game beyond the `Decider` protocol.

    `deal_event` is the type of the game's deal event, `number_field` the field that
    numbers deals in it and in `DealSeedRevealed`, `undealt_field` the cards left over
    (talon/reserve), `deal_word` what texts call a deal. `move_of` names the player
    command that must have produced an event which opens a move (the first event
    `decide` returns for it); None for events that only follow another one (a trick
    taken, a refill, a score). `result_claim` projects `game.result(state)` onto the
    fields of the recorded final result event.
    """

    deal_event: str
    number_field: str
    undealt_field: str
    result_event: str
    deal_from_seed: Callable[[bytes], tuple[tuple[tuple[Any, ...], ...], tuple[Any, ...]]]
    move_of: Callable[[Any], Any | None]
    result_claim: Callable[[Mapping[str, Any]], Data]
    deal_word: str


def _three_five_eight_move(event: Any) -> Any | None:
    g = three_five_eight
    match event:
        case g.ContractChosen(seat=seat, contract=contract):
            return g.ChooseContract(seat, contract)
        case g.CardExchanged(giver=giver, given=given):
            return g.GiveCard(giver, given)
        case g.CardsDiscarded(seat=seat, cards=cards):
            return g.Discard(seat, cards)
        case g.CardPlayed(seat=seat, card=card):
            return g.PlayCard(seat, card)
    return None


def _khozor_move(event: Any) -> Any | None:
    g = khozor_teams
    match event:
        case g.OpenerConfirmed(seat=seat, opener=opener):
            return g.ConfirmOpener(seat, opener)
        case g.CardsLed(seat=seat, cards=cards):
            return g.Lead(seat, cards)
        case g.CardsBeaten(seat=seat, cards=cards):
            return g.Beat(seat, cards)
        case g.PilePickedUp(seat=seat):
            return g.PickUp(seat)
        case g.SignalSet(seat=seat, kind=kind):
            return g.ToggleSignal(seat, kind)
        case g.SignalCleared(seat=seat, kind=kind, reason=g.ClearReason.TAPPED):
            return g.ToggleSignal(seat, kind)
    return None


PROFILES: Mapping[str, GameProfile] = {
    three_five_eight.GAME_ID: GameProfile(
        deal_event="CardsDealt",
        number_field="deal",
        undealt_field="talon",
        result_event="GameEnded",
        deal_from_seed=three_five_eight.deal_from_seed,
        move_of=_three_five_eight_move,
        result_claim=lambda r: {"totals": r["totals"], "places": r["places"]},
        deal_word="Deal",
    ),
    khozor_teams.GAME_ID: GameProfile(
        deal_event="RoundDealt",
        number_field="round_no",
        undealt_field="reserve",
        result_event="MatchWon",
        deal_from_seed=khozor_teams.deal_from_seed,
        move_of=_khozor_move,
        result_claim=lambda r: {
            "team": r["winner"],
            "wins_a": r["wins"]["A"],
            "wins_b": r["wins"]["B"],
        },
        deal_word="Round",
    ),
}

REVEAL_EVENT = "DealSeedRevealed"


class AuditError(ValueError):
    """The events cannot be replayed at all (not a table, undecodable, does not fold)."""


class NoSuchSeat(AuditError):
    """A replay asked for a seat the table does not have."""


def profile_of(game_id: str) -> GameProfile:
    try:
        return PROFILES[game_id]
    except KeyError:
        raise AuditError(f"no audit support for game {game_id!r}") from None


def commitment_of(seed: bytes) -> str:
    """docs/fair-deal.md §5: the commitment is the plain SHA-256 of the seed, in hex."""
    return hashlib.sha256(seed).hexdigest()
