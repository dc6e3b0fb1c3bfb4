"""The card exchange: who gives how many cards to whom, and the forced return.

RULES.md "The exchange": decided by the points of the previous deal only, and only
when the current contract has a trump suit. Ties in order are broken by the current
deal's targets, which are always 8, 5 and 3, so the order is total.
"""

from __future__ import annotations

from collections.abc import Sequence

from kozyr.games.cards import Card, Suit
from kozyr.games.three_five_eight.model import SEATS, Contract, Transfer
from kozyr.games.three_five_eight.ranking import highest_of_suit


def plan(
    previous_points: Sequence[int] | None, contract: Contract, target: Sequence[int]
) -> tuple[Transfer, ...]:
    """The legs of this deal's exchange, in the order they are played.

    * No previous deal (deal 1), or an NT/MT contract: no exchange.
    * One giver (+p), one receiver: the giver gives p cards.
    * Two givers, one receiver: the giver with the higher current target first, each
      gives his own points' worth.
    * One giver, two receivers: each receiver gets as many cards as his minus points,
      the receiver with the higher current target first.
    """
    if previous_points is None or contract.trump is None:
        return ()
    givers = [s for s in range(SEATS) if previous_points[s] > 0]
    receivers = [s for s in range(SEATS) if previous_points[s] < 0]
    if not givers or not receivers:
        return ()

    def by_target(seat: int) -> int:
        return -target[seat]

    if len(givers) == 1:
        (giver,) = givers
        return tuple(
            Transfer(giver, r, -previous_points[r]) for r in sorted(receivers, key=by_target)
        )
    (receiver,) = receivers
    return tuple(Transfer(g, receiver, previous_points[g]) for g in sorted(givers, key=by_target))


def giveable(hand: Sequence[Card], trump: Suit | None) -> list[Card]:
    """Cards a giver may hand over: any card but a trump."""
    return [c for c in hand if c.suit is not trump]


def forced_return(receiver_hand: Sequence[Card], given: Card) -> Card:
    """The receiver's highest card of the given card's suit, counting the given card.

    If he holds nothing higher (or nothing of that suit), the same card goes back.
    """
    assert given.suit is not None
    best = highest_of_suit((*receiver_hand, given), given.suit)
    assert best is not None
    return best
