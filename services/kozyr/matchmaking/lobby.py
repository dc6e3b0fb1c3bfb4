"""The lobby: every ticket, party and pending match, folded from one event stream.

Why one stream (`lobby-main`) rather than a stream per ticket: every rule of the lobby
spans several players — one active ticket per player, a player in one match at most, a
party's members all free — and the event store checks optimistic concurrency per
stream. With all of it in one stream each decision is one append at the version it was
decided on: two replicas that decide on the same tickets cannot both succeed, and no
saga across streams is needed (docs/matchmaking.md, "Safety"). The cost is one writer
at a time; `tests/bench/bench_matchmaking.py` measures it.

The state is mutable for speed (a queue of thousands must not be copied per event),
but it changes only in `apply`, and only with events read from or appended to the log;
the decisions (`kozyr.matchmaking.decisions`, `kozyr.matchmaking.matching`) read it and
return new events. Nothing here does I/O.

Event data holds no floats (the event store refuses them): skills are decimal strings.
"""

from __future__ import annotations

from collections import OrderedDict, deque
from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from datetime import datetime
from typing import Any, assert_never

from kozyr.matchmaking import events as lobby_events
from kozyr.matchmaking.events import (
    AbandonJudged,
    LobbyEvent,
    MatchDecided,
    MatchReleased,
    MatchSeated,
    PartyCreated,
    PartyDisbanded,
    PartyJoined,
    PartyLeft,
    PenaltyLifted,
    TableEnded,
    TableNoticed,
    TicketCancelled,
    TicketExpired,
    TicketOpened,
)
from kozyr.matchmaking.leavers import Record

STREAM = "lobby-main"
SNAPSHOT_KEY = "lobby-v1"

MAX_PARTY = 4
OUTCOMES_KEPT = 5_000
"""Finished tickets (and opened tables per match) remembered for WatchTicket and for
retried requests; older ones are only in the log. Bounded so that a snapshot stays
small."""
RECENT_WAITS = 50


@dataclass(frozen=True, slots=True)
class Skill:
    """An OpenSkill rating: mean skill and its uncertainty."""

    mu: float
    sigma: float

    def encode(self) -> list[str]:
        return [repr(self.mu), repr(self.sigma)]

    @staticmethod
    def decode(raw: list[str]) -> Skill:
        return Skill(float(raw[0]), float(raw[1]))


OptionValue = int | bool
TABLE_OPTIONS = ("cover_after_seconds", "computer_level")
"""The table's own options a player may choose; every other key of an encoded
QueueOptions is one of the game's (`GameInfo.options`)."""


@dataclass(frozen=True, slots=True)
class QueueOptions:
    """The table options a ticket asks for; only tickets of equal options meet.

    `game`: the game's options the ticket chose (`GameInfo.options`), by name, those
    left at their default (0, false) left out — so a ticket that chose none has none,
    whatever the game. `cover_after_seconds` (0: the clock's default) and
    `computer_level` ("": the level suited to the players' ratings, else "easy",
    "normal" or "hard") are the table's own options a player may choose.

    Encoded flat, each only when chosen. `stored`: the game's options exactly as an
    event of before stored them (every option spelled out, `"must_trump": false,
    "turn_seconds": 0` even for a ticket that chose none), kept so that such an event
    encodes back as it was stored; it takes no part in comparing options.
    """

    game: tuple[tuple[str, OptionValue], ...] = ()
    cover_after_seconds: int = 0
    computer_level: str = ""
    stored: tuple[tuple[str, Any], ...] = field(default=(), compare=False)

    @staticmethod
    def of(
        game: dict[str, OptionValue], cover_after_seconds: int = 0, computer_level: str = ""
    ) -> QueueOptions:
        """The options with the game's given as a mapping (defaults dropped, sorted)."""
        chosen = tuple(sorted((k, v) for k, v in game.items() if v is not False and v != 0))
        return QueueOptions(chosen, cover_after_seconds, computer_level)

    def encode(self) -> dict[str, Any]:
        encoded: dict[str, Any] = dict(self.stored or self.game)
        if self.cover_after_seconds:
            encoded["cover_after_seconds"] = self.cover_after_seconds
        if self.computer_level:
            encoded["computer_level"] = self.computer_level
        return encoded

    @staticmethod
    def decode(raw: dict[str, Any]) -> QueueOptions:
        game = {k: v for k, v in raw.items() if k not in TABLE_OPTIONS}
        options = QueueOptions.of(
            game, int(raw.get("cover_after_seconds", 0)), str(raw.get("computer_level", ""))
        )
        return replace(options, stored=tuple(game.items()))


@dataclass(slots=True)
class Ticket:
    """A ticket in the queue: searching, or placing (its match decided, table not yet open)."""

    ticket_id: str
    game: str
    players: tuple[str, ...]
    party_id: str | None
    options: QueueOptions
    fill_now: bool
    skills: dict[str, Skill]
    opened_at: datetime
    match_id: str | None = None
    mu: float = field(init=False)
    """The ticket's rating for matching: its players' mean skill."""
    size: int = field(init=False)

    def __post_init__(self) -> None:
        self.size = len(self.players)
        self.mu = sum(self.skills[p].mu for p in self.players) / self.size


@dataclass(frozen=True, slots=True)
class Outcome:
    """How a ticket ended: matched (table and seats), cancelled or expired."""

    ticket_id: str
    state: str
    game: str
    players: tuple[str, ...]
    opened_at: datetime
    table_id: str = ""
    seats: tuple[tuple[str, int], ...] = ()


@dataclass(frozen=True, slots=True)
class MatchSeat:
    """One seat of a decided match: a ticket's player, or a computer of a level."""

    player_id: str | None = None
    ticket_id: str | None = None
    level: str | None = None

    def encode(self) -> dict[str, Any]:
        if self.player_id is None:
            return {"computer": self.level}
        return {"player": self.player_id, "ticket": self.ticket_id}

    @staticmethod
    def decode(raw: dict[str, Any]) -> MatchSeat:
        if "computer" in raw:
            return MatchSeat(level=raw["computer"])
        return MatchSeat(player_id=raw["player"], ticket_id=raw.get("ticket"))


@dataclass(frozen=True, slots=True)
class Match:
    """A decided match waiting for its table (CreateTable with request id `match:<id>`)."""

    match_id: str
    game: str
    options: QueueOptions
    seats: tuple[MatchSeat, ...]
    decided_at: datetime
    tickets: tuple[str, ...]

    @property
    def request_id(self) -> str:
        """CreateTable's request id: any replica, any retry, opens the same one table."""
        return f"match:{self.match_id}"

    def seat_of(self) -> dict[str, int]:
        return {s.player_id: i for i, s in enumerate(self.seats) if s.player_id is not None}


@dataclass(slots=True)
class Party:
    party_id: str
    code: str
    members: list[str]
    """The leader first."""

    @property
    def leader(self) -> str:
        return self.members[0]


@dataclass(frozen=True, slots=True)
class SeatedTable:
    """An unfinished table with players at it: one matchmaking opened (`MatchSeated`),
    or one it noticed on the public events (`TableNoticed`: an operator's `CreateTable`,
    another service's)."""

    table_id: str
    game: str
    seats: tuple[tuple[str, int], ...]
    opened_at: datetime


@dataclass
class Lobby:
    """Everything the lobby stream says, at `version`."""

    version: int = 0
    tickets: dict[str, Ticket] = field(default_factory=dict)
    by_player: dict[str, str] = field(default_factory=dict)
    outcomes: OrderedDict[str, Outcome] = field(default_factory=OrderedDict)
    parties: dict[str, Party] = field(default_factory=dict)
    party_of: dict[str, str] = field(default_factory=dict)
    codes: dict[str, str] = field(default_factory=dict)
    matches: dict[str, Match] = field(default_factory=dict)
    tables: dict[str, SeatedTable] = field(default_factory=dict)
    seated: dict[str, list[str]] = field(default_factory=dict)
    """player → his unfinished tables, oldest first (usually one; an operator may seat
    a player at several)."""
    ended: OrderedDict[str, None] = field(default_factory=OrderedDict)
    """The latest `OUTCOMES_KEPT` finished tables: a table's `TableOpened` handled after
    its `TableFinished` (two consumers, redeliveries) must not seat its players again."""
    placing: dict[str, str] = field(default_factory=dict)
    """player → the decided match whose table is being opened."""
    waits: dict[str, deque[float]] = field(default_factory=dict)
    """game → the waits (seconds) of its latest matched tickets (estimates)."""
    made: OrderedDict[str, str] = field(default_factory=OrderedDict)
    """match → the table it opened (the latest `OUTCOMES_KEPT`), for retried requests."""
    leavers: dict[str, Record] = field(default_factory=dict)
    """player → his leaver record (docs/leavers.md), while it holds a strike."""

    # ------------------------------------------------------------------ reading

    def ticket_of(self, player_id: str) -> Ticket | None:
        ticket_id = self.by_player.get(player_id)
        return self.tickets.get(ticket_id) if ticket_id else None

    def table_of(self, player_id: str) -> str | None:
        """The player's latest unfinished table, if any."""
        tables = self.seated.get(player_id)
        return tables[-1] if tables else None

    def party_with(self, player_id: str) -> Party | None:
        party_id = self.party_of.get(player_id)
        return self.parties.get(party_id) if party_id else None

    def party_ticket(self, party: Party) -> Ticket | None:
        return self.ticket_of(party.leader)

    def searching(self) -> list[Ticket]:
        """Tickets without a match, oldest first."""
        return sorted(
            (t for t in self.tickets.values() if t.match_id is None),
            key=lambda t: (t.opened_at, t.ticket_id),
        )

    # ------------------------------------------------------------------ folding

    def apply(self, event: LobbyEvent) -> None:
        """Fold one event (read from the log, or just appended) into the state.

        Every handler tolerates an event that the decisions would never have made (a
        match seated twice, a party gone): a fold that raised would stop every replica
        at that event for good, so the log's oddities are folded as no-ops instead. An
        event type this code does not know never gets here: decoding it is an error
        (`kozyr.matchmaking.events.decode`)."""
        match event:
            case TicketOpened():
                self._ticket_opened(event)
            case TicketCancelled(ticket=ticket):
                self._close(ticket, "cancelled")
            case TicketExpired(ticket=ticket):
                self._close(ticket, "expired")
            case MatchDecided():
                self._match_decided(event)
            case MatchSeated():
                self._match_seated(event)
            case MatchReleased(match=match_id):
                self._match_released(match_id)
            case TableNoticed():
                self._table_noticed(event)
            case TableEnded():
                self._table_ended(event)
            case AbandonJudged():
                until = datetime.fromisoformat(event.until) if event.until else None
                self.leavers[event.player] = Record(event.strikes, 0, until)
            case PenaltyLifted():
                self._penalty_lifted(event)
            case PartyCreated() | PartyJoined() | PartyLeft() | PartyDisbanded():
                self._party_event(event)
            case _:
                assert_never(event)
        self.version += 1

    def _ticket_opened(self, e: TicketOpened) -> None:
        ticket = Ticket(
            ticket_id=e.ticket,
            game=e.game,
            players=e.players,
            party_id=e.party,
            options=QueueOptions.decode(e.options),
            fill_now=e.fill_now,
            skills={p: Skill.decode(s) for p, s in e.skills.items()},
            opened_at=datetime.fromisoformat(e.at),
        )
        self.tickets[ticket.ticket_id] = ticket
        for player in e.players:
            self.by_player[player] = ticket.ticket_id

    def _close(self, ticket_id: str, state: str, table_id: str = "", seats: Any = ()) -> None:
        ticket = self.tickets.pop(ticket_id, None)
        if ticket is None:
            return
        for player in ticket.players:
            if self.by_player.get(player) == ticket_id:
                del self.by_player[player]
        self.outcomes[ticket_id] = Outcome(
            ticket_id, state, ticket.game, ticket.players, ticket.opened_at, table_id, seats
        )
        while len(self.outcomes) > OUTCOMES_KEPT:
            self.outcomes.popitem(last=False)

    def _match_decided(self, e: MatchDecided) -> None:
        match = Match(
            match_id=e.match,
            game=e.game,
            options=QueueOptions.decode(e.options),
            seats=tuple(MatchSeat.decode(s) for s in e.seats),
            decided_at=datetime.fromisoformat(e.at),
            tickets=e.tickets,
        )
        self.matches[match.match_id] = match
        for player in match.seat_of():
            self.placing[player] = match.match_id
        waits = self.waits.setdefault(match.game, deque(maxlen=RECENT_WAITS))
        for ticket_id in match.tickets:
            ticket = self.tickets.get(ticket_id)
            if ticket is not None:
                ticket.match_id = match.match_id
                waits.append((match.decided_at - ticket.opened_at).total_seconds())

    def _unplace(self, match: Match) -> None:
        for player in match.seat_of():
            if self.placing.get(player) == match.match_id:
                del self.placing[player]

    def _match_seated(self, e: MatchSeated) -> None:
        match = self.matches.pop(e.match, None)
        if match is None:  # never decided so: nothing to fold (the decisions prevent it)
            return
        self._unplace(match)
        seat_of = match.seat_of()
        table = SeatedTable(
            e.table, match.game, tuple(seat_of.items()), datetime.fromisoformat(e.at)
        )
        self._seat(table)
        self.made[match.match_id] = table.table_id
        while len(self.made) > OUTCOMES_KEPT:
            self.made.popitem(last=False)
        for ticket_id in match.tickets:
            ticket = self.tickets.get(ticket_id)
            if ticket is not None:
                seats = tuple((p, seat_of[p]) for p in ticket.players)
                self._close(ticket_id, "matched", table.table_id, seats)

    def _match_released(self, match_id: str) -> None:
        match = self.matches.pop(match_id, None)
        if match is None:
            return
        self._unplace(match)
        for ticket_id in match.tickets:
            if ticket_id in self.tickets:
                self.tickets[ticket_id].match_id = None

    def _seat(self, table: SeatedTable) -> None:
        """Count `table` as unfinished for its players, unless it has finished."""
        if table.table_id in self.ended:
            return
        self.tables[table.table_id] = table
        for player, _ in table.seats:
            tables = self.seated.setdefault(player, [])
            if table.table_id not in tables:
                tables.append(table.table_id)

    def _table_noticed(self, e: TableNoticed) -> None:
        if e.table in self.tables:
            return
        self._seat(SeatedTable(e.table, e.game, e.seats, datetime.fromisoformat(e.at)))

    def _penalty_lifted(self, e: PenaltyLifted) -> None:
        if e.strikes:
            self.leavers[e.player] = Record(e.strikes, 0, None)
        else:
            self.leavers.pop(e.player, None)

    def _count_clean(self, e: TableEnded) -> None:
        """A table's clean players: a step closer to a strike back, or one back."""
        forgiven = set(e.forgiven or ())
        for player in e.clean or ():
            record = self.leavers.get(player)
            if record is None:
                continue
            if player not in forgiven:
                self.leavers[player] = replace(record, clean=record.clean + 1)
            elif record.strikes > 1:
                self.leavers[player] = Record(record.strikes - 1, 0, record.until)
            else:
                del self.leavers[player]

    def _table_ended(self, e: TableEnded) -> None:
        self._count_clean(e)
        table_id = e.table
        self.ended[table_id] = None
        while len(self.ended) > OUTCOMES_KEPT:
            self.ended.popitem(last=False)
        table = self.tables.pop(table_id, None)
        if table is None:
            return
        for player, _ in table.seats:
            tables = self.seated.get(player, [])
            if table_id in tables:
                tables.remove(table_id)
            if not tables:
                self.seated.pop(player, None)

    def _party_event(self, e: PartyCreated | PartyJoined | PartyLeft | PartyDisbanded) -> None:
        match e:
            case PartyCreated():
                party = Party(e.party, e.code, [e.leader])
                self.parties[party.party_id] = party
                self.party_of[party.leader] = party.party_id
                self.codes[party.code] = party.party_id
            case PartyJoined():
                joined = self.parties.get(e.party)
                if joined is not None and e.player not in joined.members:
                    joined.members.append(e.player)
                    self.party_of[e.player] = e.party
            case PartyLeft():
                left = self.parties.get(e.party)
                if left is not None and e.player in left.members:
                    left.members.remove(e.player)
                    self.party_of.pop(e.player, None)
            case PartyDisbanded():
                gone = self.parties.pop(e.party, None)
                if gone is None:
                    return
                for member in gone.members:
                    self.party_of.pop(member, None)
                self.codes.pop(gone.code, None)


# ---------------------------------------------------------------------- snapshots


def _when(value: datetime) -> str:
    return value.isoformat()


def encode(lobby: Lobby) -> dict[str, Any]:
    """The whole state as JSON the event store keeps (no floats: decimal strings), for
    a snapshot at `lobby.version`; `decode` gives back an equal lobby."""
    return {
        "version": lobby.version,
        "tickets": [
            {
                "ticket": t.ticket_id, "game": t.game, "players": list(t.players),
                "party": t.party_id, "options": t.options.encode(), "fill_now": t.fill_now,
                "skills": {p: k.encode() for p, k in t.skills.items()},
                "at": _when(t.opened_at), "match": t.match_id,
            }
            for t in lobby.tickets.values()
        ],
        "outcomes": [
            [o.ticket_id, o.state, o.game, list(o.players), _when(o.opened_at), o.table_id,
             [list(seat) for seat in o.seats]]
            for o in lobby.outcomes.values()
        ],
        "parties": [[p.party_id, p.code, list(p.members)] for p in lobby.parties.values()],
        "matches": [
            {
                "match": m.match_id, "game": m.game, "options": m.options.encode(),
                "seats": [s.encode() for s in m.seats], "at": _when(m.decided_at),
                "tickets": list(m.tickets),
            }
            for m in lobby.matches.values()
        ],
        "tables": [
            [t.table_id, t.game, [list(seat) for seat in t.seats], _when(t.opened_at)]
            for t in lobby.tables.values()
        ],
        "waits": {game: [repr(w) for w in waits] for game, waits in lobby.waits.items()},
        "made": list(lobby.made.items()),
        "ended": list(lobby.ended),
        "leavers": [
            [p, r.strikes, r.clean, _when(r.until) if r.until else None]
            for p, r in lobby.leavers.items()
        ],
    }  # fmt: skip


def decode(data: dict[str, Any]) -> Lobby:
    lobby = Lobby(version=int(data["version"]))
    for t in data["tickets"]:
        opened = lobby_events.decode("TicketOpened", t)
        assert isinstance(opened, TicketOpened)
        lobby._ticket_opened(opened)
        lobby.tickets[t["ticket"]].match_id = t["match"]
    for ticket_id, state, game, players, at, table_id, seats in data["outcomes"]:
        lobby.outcomes[ticket_id] = Outcome(
            ticket_id, state, game, tuple(players), datetime.fromisoformat(at), table_id,
            tuple((p, int(s)) for p, s in seats),
        )  # fmt: skip
    for party_id, code, members in data["parties"]:
        lobby.parties[party_id] = Party(party_id, code, list(members))
        lobby.codes[code] = party_id
        for member in members:
            lobby.party_of[member] = party_id
    for m in data["matches"]:
        match = lobby.matches[m["match"]] = Match(
            m["match"], m["game"], QueueOptions.decode(m["options"]),
            tuple(MatchSeat.decode(s) for s in m["seats"]), datetime.fromisoformat(m["at"]),
            tuple(m["tickets"]),
        )  # fmt: skip
        for player in match.seat_of():
            lobby.placing[player] = match.match_id
    for table_id, game, seats, at in data["tables"]:
        lobby._seat(
            SeatedTable(
                table_id, game, tuple((p, int(s)) for p, s in seats), datetime.fromisoformat(at)
            )
        )
    for game, waits in data["waits"].items():
        lobby.waits[game] = deque((float(w) for w in waits), maxlen=RECENT_WAITS)
    lobby.made = OrderedDict((m, t) for m, t in data["made"])
    lobby.ended = OrderedDict.fromkeys(data.get("ended", ()))  # older snapshots: none
    lobby.leavers = {
        p: Record(int(n), int(c), datetime.fromisoformat(u) if u else None)
        for p, n, c, u in data.get("leavers", ())
    }
    return lobby


def fold(events: Iterable[LobbyEvent], lobby: Lobby | None = None) -> Lobby:
    """The lobby after `events`, from `lobby` or from nothing."""
    lobby = lobby or Lobby()
    for event in events:
        lobby.apply(event)
    return lobby
