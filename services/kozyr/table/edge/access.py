"""Who may see and act for which seat (DESIGN.md §6, RULES.md "what every seat may know").

Players see and act only for their own seat; a player who is not seated is a
spectator. Services (matchmaking, clock) may read any seat's view and act only for seats a
computer plays. The bots service (a service token whose subject is `BOTS_SUBJECT`) may
not even read a seat a person plays: it sees a seat's view only while a computer plays
it, so no bot can peek at a person's hand. Admins
(moderators) may read and act for any seat and read unredacted history.
"""

from __future__ import annotations

from kozyr.runtime.auth import Principal, Role
from kozyr.table import texts
from kozyr.table.domain.model import COMPUTER, SeatControl, Table


def _check_range(table: Table, seat: int) -> int:
    if not 0 <= seat < len(table.seats):
        raise texts.invalid_seat(seat)
    return seat


def viewer_seat(principal: Principal, table: Table, requested: int | None) -> int | None:
    """The seat whose view the caller gets (None: spectator / unredacted for admins)."""
    if principal.role is Role.PLAYER:
        own = table.seat_of(principal.subject)
        if requested is not None and requested != own:
            raise texts.not_your_seat()
        return own
    if requested is None:
        return None
    seat = _check_range(table, requested)
    if principal.is_bots and table.control[seat] is not SeatControl.COMPUTER:
        raise texts.seat_not_computer(seat)
    return seat


def claimed_seat(principal: Principal, table: Table, requested: int | None) -> int:
    """The seat a SubmitAction names: the player's own, or the one a service/admin gave.

    Depends only on who sits where, which never changes: any version of the table
    answers it. Whether the caller may act for it *now* is `acting_seat`.
    """
    if principal.role is Role.PLAYER:
        own = table.seat_of(principal.subject)
        if own is None:
            raise texts.not_seated()
        if requested is not None and requested != own:
            raise texts.not_your_seat()
        return own
    if requested is None:
        raise texts.seat_required()
    return _check_range(table, requested)


def acting_seat(principal: Principal, table: Table, requested: int | None) -> int:
    """The seat a SubmitAction plays for at this version of the table, or PERMISSION_DENIED."""
    seat = claimed_seat(principal, table, requested)
    if principal.role is Role.SERVICE and table.control[seat] is not SeatControl.COMPUTER:
        raise texts.seat_not_computer(seat)
    return seat


def seeding_seat(principal: Principal, table: Table, requested: int | None) -> int:
    """The seat a SetClientSeed is for: a player's own; a service's or admin's only if a
    computer holds it from the start. No one but the player writes a person's client
    seed, or the operator's side could choose it (docs/fair-deal.md §9)."""
    seat = claimed_seat(principal, table, requested)
    if principal.role is not Role.PLAYER and table.seats[seat] != COMPUTER:
        raise texts.seat_not_computer(seat)
    return seat


def open_hand_viewer(principal: Principal, table: Table, requested: int | None) -> None:
    """Allow an open-hand spectator's view (docs/open-hand.md), or refuse: at a table
    without the option, with a seat named, to a player seated at the table (he would see
    his opponents' hands) and to the bots (they play seats)."""
    if table.open_hand_delay <= 0:
        raise texts.open_hand_off()
    if requested is not None:
        raise texts.open_hand_with_seat()
    if principal.is_bots or table.seat_of(principal.subject) is not None:
        raise texts.open_hand_seated()
