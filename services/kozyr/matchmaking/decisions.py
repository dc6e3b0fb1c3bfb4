"""The lobby's commands decided: checks against the lobby, then the events to append.

Each function reads a `Lobby` and returns typed events (`kozyr.matchmaking.events`), or raises the
player-facing error (`kozyr.matchmaking.texts`) before anything is written. Ids that a
retry must find again (a ticket, a party, a private match) are derived from the caller
and his request id, so a repeated call decides the same events — and the event store's
request-id idempotency answers it with the first result. No I/O.
"""

from __future__ import annotations

import hashlib
import uuid
from datetime import datetime

from kozyr.games.catalogue import info_of
from kozyr.matchmaking import leavers, texts
from kozyr.matchmaking.events import (
    AbandonJudged,
    LobbyEvent,
    MatchDecided,
    PartyCreated,
    PartyDisbanded,
    PartyJoined,
    PartyLeft,
    PenaltyLifted,
    TableEnded,
    TableNoticed,
    TicketCancelled,
    TicketOpened,
)
from kozyr.matchmaking.lobby import (
    MAX_PARTY,
    Lobby,
    MatchSeat,
    Party,
    QueueOptions,
    Skill,
    Ticket,
)

Event = LobbyEvent
NAMESPACE = uuid.UUID("5b0c2a8e-7f49-4c1e-9a53-0f6d3c1b7e21")
CODE_ALPHABET = "ABCDEFGHJKLMNPQRSTUVWXYZ23456789"
"""Party codes: no 0/O or 1/I to misread when a friend dictates one."""
CODE_LENGTH = 6


def derived_id(kind: str, player_id: str, request_id: str) -> str:
    """The id a player's request makes (a ticket, a party): the same on every retry."""
    return str(uuid.uuid5(NAMESPACE, f"{kind}\x00{player_id}\x00{request_id}"))


def party_code(lobby: Lobby, party_id: str) -> str:
    """A short join code derived from the party id, unique among the open parties."""
    for attempt in range(100):
        digest = hashlib.sha256(f"{party_id}:{attempt}".encode()).digest()
        code = "".join(CODE_ALPHABET[b % len(CODE_ALPHABET)] for b in digest[:CODE_LENGTH])
        if code not in lobby.codes:
            return code
    raise RuntimeError("no free party code")  # 32^6 codes: unreachable in practice


def check_free(lobby: Lobby, players: tuple[str, ...]) -> None:
    """Each player has no active ticket, no table of ours being opened and no
    unfinished table (ours, or one we noticed opened by someone else)."""
    for player in players:
        ticket = lobby.ticket_of(player)
        if ticket is not None:
            raise texts.already_queued(player, ticket.ticket_id)
        table_id = lobby.table_of(player)
        if table_id is not None:
            raise texts.already_seated(player, table_id)
        if player in lobby.placing:
            raise texts.already_placing(player)


def queue_players(lobby: Lobby, player_id: str, party_id: str, game: str) -> tuple[str, ...]:
    """Who a ticket holds: the caller alone, or his whole party when he leads it."""
    if not party_id:
        return (player_id,)
    party = lobby.parties.get(party_id)
    if party is None or player_id not in party.members:
        raise texts.party_not_found(party_id)
    if party.leader != player_id:
        raise texts.not_party_leader(party_id)
    limit = info_of(game).party_max
    if len(party.members) > limit:
        raise texts.party_too_big(len(party.members), limit, game)
    return tuple(party.members)


def enter(
    lobby: Lobby,
    *,
    ticket_id: str,
    players: tuple[str, ...],
    party_id: str,
    game: str,
    options: QueueOptions,
    fill_now: bool,
    skills: dict[str, Skill],
    now: datetime,
) -> list[Event]:
    """Open a ticket for `players` (already resolved by `queue_players`), none of them
    serving a leaver's cooldown."""
    check_free(lobby, players)
    check_cooldown(lobby, players, now)
    return [
        TicketOpened(
            ticket=ticket_id,
            game=game,
            players=players,
            party=party_id or None,
            options=options.encode(),
            fill_now=fill_now,
            skills={p: skills[p].encode() for p in players},
            at=now.isoformat(),
        )
    ]


def owned_ticket(lobby: Lobby, player_id: str, ticket_id: str) -> Ticket | None:
    """The active ticket if the caller is on it; None if it is over; errors otherwise."""
    ticket = lobby.tickets.get(ticket_id)
    if ticket is None:
        outcome = lobby.outcomes.get(ticket_id)
        if outcome is None:
            raise texts.ticket_not_found(ticket_id)
        if player_id not in outcome.players:
            raise texts.not_your_ticket(ticket_id)
        return None
    if player_id not in ticket.players:
        raise texts.not_your_ticket(ticket_id)
    return ticket


def cancel(lobby: Lobby, player_id: str, ticket_id: str) -> list[Event]:
    """Cancel a searching ticket ([] when it is cancelled already)."""
    ticket = owned_ticket(lobby, player_id, ticket_id)
    if ticket is None:
        outcome = lobby.outcomes[ticket_id]
        if outcome.state == "cancelled":
            return []
        raise texts.ticket_over(ticket_id, outcome.state)
    if ticket.match_id is not None:
        raise texts.ticket_placing(ticket_id)
    return [TicketCancelled(ticket_id, by=player_id)]


def create_party(lobby: Lobby, player_id: str, party_id: str) -> list[Event]:
    current = lobby.party_with(player_id)
    if current is not None:
        if current.party_id == party_id:
            return []  # a retry of this very creation
        raise texts.already_in_party(current.party_id)
    code = party_code(lobby, party_id)
    return [PartyCreated(party_id, code, player_id)]


def join_party(lobby: Lobby, player_id: str, code: str) -> tuple[Party, list[Event]]:
    party_id = lobby.codes.get(code.strip().upper())
    if party_id is None:
        raise texts.party_not_found(code)
    party = lobby.parties[party_id]
    current = lobby.party_with(player_id)
    if current is not None:
        if current.party_id == party_id:
            raise texts.already_in_this_party(party_id)
        raise texts.already_in_party(current.party_id)
    if len(party.members) >= MAX_PARTY:
        raise texts.party_full(MAX_PARTY)
    queued = lobby.party_ticket(party)
    if queued is not None:
        raise texts.party_queued(queued.ticket_id)
    return party, [PartyJoined(party_id, player_id)]


def leave_party(lobby: Lobby, player_id: str) -> tuple[bool, list[Event]]:
    """Leave (a member) or disband (the leader); the party's searching ticket is cancelled
    first, since it no longer holds the party. True when disbanded."""
    party = lobby.party_with(player_id)
    if party is None:
        raise texts.not_in_party()
    events: list[Event] = []
    ticket = lobby.party_ticket(party)
    if ticket is not None and ticket.party_id == party.party_id:
        if ticket.match_id is not None:
            raise texts.ticket_placing(ticket.ticket_id)
        events.append(TicketCancelled(ticket.ticket_id, by=player_id))
    if party.leader == player_id:
        events.append(PartyDisbanded(party.party_id))
        return True, events
    events.append(PartyLeft(party.party_id, player_id))
    return False, events


def private_match(
    lobby: Lobby,
    *,
    player_id: str,
    match_id: str,
    game: str,
    options: QueueOptions,
    fill: bool,
    level: str,
    now: datetime,
) -> list[Event]:
    """A table for the caller's party (he leads it; alone he is a party of one), its free
    seats taken by computers of `level` when `fill`; nothing when that match was
    decided already (a retry of the call), placed or not."""
    if match_id in lobby.matches or match_id in lobby.made:
        return []
    party = lobby.party_with(player_id)
    if party is not None and party.leader != player_id:
        raise texts.not_party_leader(party.party_id)
    players = tuple(party.members) if party is not None else (player_id,)
    seats = info_of(game).seats
    if len(players) > seats:
        raise texts.party_too_big(len(players), seats, game)
    if len(players) < seats and not fill:
        raise texts.table_not_full(len(players), seats)
    check_free(lobby, players)
    match_seats = [MatchSeat(player_id=p) for p in players]
    match_seats += [MatchSeat(level=level)] * (seats - len(players))
    return [decided(match_id, game, options, match_seats, (), now)]


def decided(
    match_id: str,
    game: str,
    options: QueueOptions,
    seats: list[MatchSeat],
    tickets: tuple[str, ...],
    now: datetime,
) -> MatchDecided:
    return MatchDecided(
        match=match_id,
        game=game,
        options=options.encode(),
        seats=tuple(s.encode() for s in seats),
        tickets=tickets,
        at=now.isoformat(),
    )


def table_noticed(
    lobby: Lobby, table_id: str, game: str, seats: list[tuple[str, int]], now: datetime
) -> list[Event]:
    """A table opened by anyone (its public `TableOpened`): its players count as seated
    until it finishes. Nothing for a table known or finished, or one without players."""
    if table_id in lobby.tables or table_id in lobby.ended or not seats:
        return []
    return [TableNoticed(table_id, game, tuple(seats), now.isoformat())]


def check_cooldown(lobby: Lobby, players: tuple[str, ...], now: datetime) -> None:
    """No player of a ticket is serving a leaver's cooldown (docs/leavers.md)."""
    for player in players:
        record = lobby.leavers.get(player)
        if record is not None and record.until is not None and record.blocks(now):
            raise texts.abandon_cooldown(player, record.until)


def table_ended(
    lobby: Lobby,
    table_id: str,
    seats: tuple[leavers.SeatFacts, ...] = (),
    now: datetime | None = None,
) -> list[Event]:
    """A table finished (its public `TableFinished`): its players are free again, a late
    `TableOpened` of it seats nobody, and — at a table of two persons or more — each
    leaver gets a strike (`AbandonJudged`, before it) and the others a clean table.
    Nothing the second time: a redelivered `TableFinished` judges nobody twice."""
    if table_id in lobby.ended:
        return []
    if not leavers.counts_for_record(seats):
        return [TableEnded(table_id)]
    assert now is not None
    events: list[Event] = []
    gone = leavers.leavers_of(seats)
    for player in sorted(gone):
        strikes = lobby.leavers.get(player, leavers.Record()).strikes + 1
        until = leavers.cooldown_end(strikes, now)
        events.append(
            AbandonJudged(
                player,
                strikes,
                until=until.isoformat() if until else None,
                table=table_id,
                at=now.isoformat(),
            )
        )
    clean = sorted({s.player_id for s in seats if s.player_id} - gone)
    forgiven = [p for p in clean if lobby.leavers.get(p, leavers.Record()).forgiven_by_one_more()]
    events.append(TableEnded(table_id, clean=tuple(clean), forgiven=tuple(forgiven)))
    return events


def lift_penalty(lobby: Lobby, player_id: str, by: str, reason: str, now: datetime) -> list[Event]:
    """An admin upholds a player's appeal: his cooldown ends now and his latest strike is
    taken back. Nothing when he has no strike."""
    record = lobby.leavers.get(player_id)
    if record is None:
        return []
    return [PenaltyLifted(player_id, record.strikes - 1, by, reason, now.isoformat())]
