"""Roles, targets, points and places: the arithmetic of 3-5-8.

Targets add up to 16 like the tricks, so the points of every deal add up to 0
(RULES.md "Targets and scoring"). MT counts the target as a maximum.
"""

from __future__ import annotations

from collections.abc import Sequence

from kozyr.games.three_five_eight.model import SEATS, Contract, Role

_NORMAL = {Role.DECLARER: 8, Role.THIRD: 5, Role.DEALER: 3}
_REVERSED = {Role.DECLARER: 3, Role.THIRD: 5, Role.DEALER: 8}


def role_of(seat: int, dealer: int) -> Role:
    """Dealer's left (dealer+1) declares; dealer's right (dealer+2) is the third player."""
    offset = (seat - dealer) % SEATS
    if offset == 1:
        return Role.DECLARER
    if offset == 2:
        return Role.THIRD
    return Role.DEALER


def targets(contract: Contract, dealer: int) -> tuple[int, ...]:
    """Per seat: minimum tricks (trump, NT) or maximum tricks (MT) of this deal."""
    table = _REVERSED if contract.reverses_targets else _NORMAL
    return tuple(table[role_of(seat, dealer)] for seat in range(SEATS))


def points(contract: Contract, target: Sequence[int], tricks: Sequence[int]) -> tuple[int, ...]:
    """Tricks − target (trump, NT) or target − tricks (MT), per seat."""
    sign = -1 if contract.reverses_targets else 1
    return tuple(sign * (t - g) for t, g in zip(tricks, target, strict=True))


def places(totals: Sequence[int]) -> tuple[int, ...]:
    """Competition ranking ("1-1-3"): 1 + the number of seats with a strictly higher total.

    Equal totals share a place; the place after a shared one is skipped, as in sport.
    """
    return tuple(1 + sum(other > mine for other in totals) for mine in totals)
