"""The table aggregate: a game's state plus who sits where, folded from the log.

Pure like the rules: no I/O, no clock, no randomness. The service loads a table by
folding its stream with `apply`, asks the game's decider for new events, and appends
them. Table-level events (creation, seat control) live in the same stream as the
game's events, so one stream is the whole story of a table.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import datetime
from enum import StrEnum
from typing import Any

from kozyr.games.codec import decode_event, encode_event, registry_of
from kozyr.games.decider import CLIENT_SEED, Decider, Turn
from kozyr.games.errors import OptionsError
from kozyr.games.plugin import AnyPlugin, Dealt, FairDeal, Revealed
from kozyr.table.domain import seeding
from kozyr.table.domain.games import UnknownGame, game_by_id
from kozyr.table.domain.seeding import (
    ClientSeedSet,
    DealSeeded,
    Seeding,
    ServerSeedCommitted,
)

COMPUTER = ""
"""The player id of a seat that a computer plays from the start."""
COMPUTER_LEVELS = ("easy", "normal", "hard")
"""How well a computer may play a seat (docs/bots.md); the bots service reads a seat's
level from its view."""
DEFAULT_COMPUTER_LEVEL = "normal"
COVER_AFTER_MAX_SECONDS = 3600
OPEN_HAND_MAX_DELAY = 1000
"""The longest open-hand delay a table may have, in players' moves (docs/open-hand.md)."""
SEED_WINDOW_MAX_SECONDS = 600
"""The longest the first deal may wait for the players' client seeds."""


class SeatControl(StrEnum):
    """Who plays a seat right now (RULES.md: person, computer, absent)."""

    PERSON = "person"
    COMPUTER = "computer"
    ABSENT = "absent"


@dataclass(frozen=True, slots=True)
class TableCreated:
    """The first event of every table stream."""

    table_id: str
    game_id: str
    options: dict[str, Any]
    seats: tuple[str, ...]
    levels: tuple[str, ...] = ()
    """Per seat, a computer seat's own level ("" for the table's computer_level); empty
    when no seat has one (and for tables created before levels)."""
    cover_after_seconds: int = 0
    """How long a seated player may be offline before he is covered; 0 = the clock's
    default."""
    computer_level: str = DEFAULT_COMPUTER_LEVEL
    """The level of covering computers and of computer seats without their own."""
    hints_off: bool = False
    """No hints at this table (matchmaking's rated queue tables): the bots service
    refuses SuggestAction here, reading it from the view (`TableView.hints_allowed`)."""
    seed_scheme: int = seeding.SERVER_ONLY
    """How the table seeds its deals (kozyr.table.domain.seeding): 1, the service's seed alone
    (every table created before scheme 2, whose event has no such field); 2, the server
    seed with every seat's client seed."""
    open_hand_delay: int = 0
    """Open-hand spectating (docs/open-hand.md): spectators who ask see the table as it
    was this many players' moves ago with every hand shown; 0 = off (every table created
    before the option, whose event has no such field)."""
    seed_window: int = 0
    """Seed scheme 2: seconds the players' seats have to set their client seeds for the
    first deal before it is dealt without the missing ones (docs/fair-deal.md §9); 0 =
    the first deal is dealt as the table opens (every table created before the window,
    whose event has no such field)."""


@dataclass(frozen=True, slots=True)
class SeatControlChanged:
    """A seat is now played by its person, covered by a computer, or absent."""

    seat: int
    control: SeatControl


@dataclass(frozen=True, slots=True)
class SeatPresenceChanged:
    """The seat's player went offline or came back (the clock service says so).

    Presence is no rule of the game: it changes no turn and no deadline. It is in the
    log so that every view shows it, every replica agrees on it, and a moderator sees
    who was away when.
    """

    seat: int
    online: bool


TABLE_EVENTS = registry_of(
    [TableCreated, SeatControlChanged, SeatPresenceChanged, *seeding.SEEDING_EVENTS]
)
SEAT_EVENTS = (SeatControlChanged, SeatPresenceChanged)
"""Table events about a seat, not the game: they leave the game's state and turn alone."""


class TableSetupError(ValueError):
    """A CreateTable request that cannot make a table (bad seats or options)."""


@dataclass(frozen=True, slots=True)
class DealProof:
    """A deal's fairness record, public: its commitment at once, its seed once it ended.

    Which events deal and reveal is the game plugin's `fair_deal` to say: the deal
    carries the `commitment` (SHA-256 of the seed, hex), the reveal the `seed` when the
    deal or round is over (docs/fair-deal.md). Under seed scheme 2 the deal also names
    the server seed's commitment and the client seeds it was derived from, and the server
    seed once the deal has ended (kozyr.table.domain.seeding).
    """

    number: int
    commitment: str
    seed: str | None = None
    scheme: int = seeding.SERVER_ONLY
    server_commitment: str = ""
    client_seeds: tuple[str, ...] = ()
    server_seed: str | None = None


def track_deals(deals: tuple[DealProof, ...], mark: FairDeal) -> tuple[DealProof, ...]:
    """The deal records after an event the plugin's `fair_deal` read as `mark`: a new
    deal's commitment, or the last deal's seed revealed."""
    if isinstance(mark, Revealed):
        return tuple(
            replace(d, seed=mark.seed.hex()) if d.seed is None and d is deals[-1] else d
            for d in deals
        )
    if isinstance(mark, Dealt):
        return (*deals, DealProof(len(deals) + 1, mark.commitment))
    return deals


TAPS_KEPT = 64
"""How many of each seat's latest taps a table remembers (the tap limit's ceiling)."""

Taps = tuple[datetime | None, ...]
"""A seat's latest taps, oldest first: when each was recorded (None: not yet stored)."""


@dataclass(frozen=True, slots=True)
class TurnTally:
    """A player's seat's turns (the leaver accounting's facts, docs/leavers.md): every
    decision taken at the seat (by its person, by the clock's default move on a timeout,
    by the computer covering it), those taken while its person did not play it, and the
    turns from its first such one on."""

    turns: int = 0
    covered: int = 0
    since_cover: int = 0

    def counted(self, covered: bool) -> TurnTally:
        """The tally after one more turn of the seat."""
        since = self.since_cover + 1 if covered or self.since_cover else 0
        return TurnTally(self.turns + 1, self.covered + int(covered), since)


@dataclass(frozen=True, slots=True)
class Table:
    """A table as of `version` (the number of events folded so far).

    `version` is the log's. A viewer's version (`version_for`) counts only the events
    that viewer may see: `private` lists the log positions of the others, with the
    seats that see them, and `unseen` how many each seat (index = seat) and spectators
    (last index) cannot see. `taps` are each seat's latest at-will moves (Khözör's
    signal taps) with the time the log recorded them, for the per-seat tap limit.
    `seat_run` counts, per viewer (same indices as `unseen`), the seat events
    (presence, control) it has seen since the last game event it may see: a move
    pinned to any version in that run is still fresh (`is_fresh`).
    """

    table_id: str
    game_id: str
    game: Decider[Any, Any, Any]
    options: Mapping[str, Any]
    seats: tuple[str, ...]
    control: tuple[SeatControl, ...]
    state: Any
    version: int
    levels: tuple[str, ...] = ()
    """Per seat, the level a computer plays it at while computer-controlled."""
    online: tuple[bool | None, ...] = ()
    """Per seat, whether its player is online: None (unknown) from the table's start
    until the clock records his presence (his first heartbeat, or his cover deadline
    without one); a computer seat is always online."""
    cover_after_seconds: int = 0
    hints_off: bool = False
    turn_deadline: datetime | None = None
    deals: tuple[DealProof, ...] = ()
    private: tuple[tuple[int, tuple[int, ...]], ...] = ()
    unseen: tuple[int, ...] = ()
    taps: tuple[Taps, ...] = ()
    seat_run: tuple[int, ...] = ()
    tally: tuple[TurnTally, ...] = ()
    """Per seat, its turns so far (`TurnTally`); empty until a turn closes."""
    seed_scheme: int = seeding.SERVER_ONLY
    seedings: tuple[Seeding, ...] = ()
    """Committed server seeds not revealed yet (scheme 2): the current deal's and the
    next one's, with the client seeds set for it so far."""
    open_hand_delay: int = 0
    """Moves an open-hand spectator's view is behind the table; 0: no such view."""
    recent_moves: tuple[int, ...] = ()
    """With an open-hand delay of N: the log positions of the last N players' moves (the
    plugin's `decided_by` events: contracts, cards, pickups — not signals, deals or seat
    events), which place the open-hand view N moves back (`open_hand_version`)."""
    seed_window: int = 0
    """Seconds the first deal waits for the players' client seeds (`awaiting_seeds`)."""

    def open_hand_version(self) -> int:
        """The log version an open-hand spectator sees now: right before the move
        `open_hand_delay` moves back, so every card it shows has stayed where it is for
        at least that many players' moves; version 1 (the table created, nothing dealt)
        until that many were made; the table itself once it is over (no one can be fed
        anything then). Only moves count: no signal tap, deal or seat event brings a
        card closer."""
        if self.is_over:
            return self.version
        if len(self.recent_moves) < self.open_hand_delay:
            return 1
        return self.recent_moves[-self.open_hand_delay] - 1

    @property
    def next_seeding(self) -> Seeding | None:
        """The next deal's committed server seed, while seats may still set client seeds."""
        if self.is_over:
            return None
        return seeding.pending(self.seedings, len(self.deals) + 1)

    @property
    def awaiting_seeds(self) -> tuple[int, ...]:
        """The players' seats the first deal still waits for (docs/fair-deal.md §9).

        Under a seed window the first deal is not dealt as the table opens: it waits
        until every player's seat has set its client seed, or until the window's
        deadline (the clock's ExpireTurn). Computer seats are the service's own, so
        their seeds would protect no one from it: they are never waited for.
        """
        if self.seed_window <= 0 or self.deals:  # every move but the first deal's: cheap
            return ()
        upcoming = self.next_seeding  # deal 1's, while no deal is dealt
        if upcoming is None:
            return ()
        return tuple(
            seat
            for seat, player in enumerate(self.seats)
            if player != COMPUTER and upcoming.client_seeds[seat] == seeding.DEFAULT_CLIENT_SEED
        )

    @property
    def turn(self) -> Turn:
        """The decision the table waits for: the game's turn, except while the first
        deal waits for client seeds — then the table's own `CLIENT_SEED` turn, of the
        seats still to set one, on the window's clock (its number is the game's chance
        step's, which the deal moves on, so ExpireTurn keys it like any turn)."""
        turn = self.game.turn(self.state)
        waiting = self.awaiting_seeds  # only ever at the chance step of deal 1
        if not waiting:
            return turn
        return Turn(turn.number, CLIENT_SEED, waiting, self.seed_window)

    def version_for(self, seat: int | None) -> int:
        """The version as `seat` sees it (None: a spectator): events it may see."""
        if not self.unseen:
            return self.version
        return self.version - self.unseen[len(self.seats) if seat is None else seat]

    def decision_version_for(self, seat: int | None) -> int:
        """The oldest version of `seat`'s view that a pinned move may still name: its
        version right after the last game event it may see. What came after are seat
        events only (someone went on- or offline, a seat was covered or given back):
        they change no turn, no card and no legal move, so no decision."""
        if not self.seat_run:
            return self.version_for(seat)
        return self.version_for(seat) - self.seat_run[len(self.seats) if seat is None else seat]

    def is_fresh(self, seat: int | None, pinned: int) -> bool:
        """Whether a move of `seat` pinned to its version `pinned` (`expected_version`,
        a hint's `view_version`) still stands: no game event `seat` may see came since
        (docs/api.md, "Versions")."""
        return self.decision_version_for(seat) <= pinned <= self.version_for(seat)

    def hidden_from(self, seat: int | None) -> list[int]:
        """The log positions of the events `seat` may not see, in order."""
        return [position for position, seats in self.private if seat not in seats]

    def resume_after(self, seat: int | None, seen: int) -> int:
        """The log version to read after, for `seat` that has seen its first `seen`
        events: right before the next event it may see (the table's version if none)."""
        position = seen
        for hidden in self.hidden_from(seat):
            if hidden > position + 1:
                break
            position += 1
        return min(position, self.version)

    def taps_of(self, seat: int) -> Taps:
        return self.taps[seat] if self.taps else ()

    def level_of(self, seat: int) -> str | None:
        """The level of the computer playing `seat`; None while a person plays it."""
        if self.control[seat] is not SeatControl.COMPUTER:
            return None
        return self.levels[seat] if self.levels else DEFAULT_COMPUTER_LEVEL

    def presence(self, seat: int) -> bool | None:
        """True online, False offline, None unknown (nothing recorded yet)."""
        return self.online[seat] if self.online else True

    def is_online(self, seat: int) -> bool:
        """Known to be online (an unknown presence is not)."""
        return self.presence(seat) is True

    def seat_of(self, player_id: str) -> int | None:
        """The seat of a player at this table, or None for a spectator."""
        return self.seats.index(player_id) if player_id in self.seats else None

    @property
    def is_over(self) -> bool:
        return self.game.is_over(self.state)

    @property
    def plugin(self) -> AnyPlugin:
        """The game's plugin (`game` is its rules)."""
        return game_by_id(self.game_id)


def validate_setup(
    game_id: str,
    options: Mapping[str, Any],
    seats: Sequence[str],
    levels: Sequence[str] = (),
    cover_after_seconds: int = 0,
    computer_level: str = DEFAULT_COMPUTER_LEVEL,
    open_hand_delay: int = 0,
    seed_window: int = 0,
) -> None:
    """Refuse a table that could not be played; the reason names the first problem."""
    _validate_computers(seats, levels, computer_level)
    if not 0 <= seed_window <= SEED_WINDOW_MAX_SECONDS:
        raise TableSetupError(
            f"seed_window_seconds must be between 1 and {SEED_WINDOW_MAX_SECONDS} "
            f"(0: the first deal is dealt at once), got {seed_window}"
        )
    if not 0 <= open_hand_delay <= OPEN_HAND_MAX_DELAY:
        raise TableSetupError(
            f"open_hand_delay must be between 1 and {OPEN_HAND_MAX_DELAY} "
            f"(0: no open-hand spectating), got {open_hand_delay}"
        )
    if not 0 <= cover_after_seconds <= COVER_AFTER_MAX_SECONDS:
        raise TableSetupError(
            f"cover_after_seconds must be between 1 and {COVER_AFTER_MAX_SECONDS} "
            f"(0: the default), got {cover_after_seconds}"
        )
    try:
        game = game_by_id(game_id).rules
    except UnknownGame:
        raise TableSetupError(f"no game is called {game_id!r}") from None
    if len(seats) != game.SEATS:
        raise TableSetupError(f"{game_id} needs exactly {game.SEATS} seats, got {len(seats)}")
    people = [p for p in seats if p != COMPUTER]
    if len(set(people)) != len(people):
        raise TableSetupError("a player can take only one seat at a table")
    if open_hand_delay and game_by_id(game_id).card_places is None:
        raise TableSetupError(f"{game_id} cannot show its hands: no open-hand spectating")
    try:
        game.initial_state(options)
    except OptionsError as err:
        raise TableSetupError(str(err)) from err


def _validate_computers(seats: Sequence[str], levels: Sequence[str], default: str) -> None:
    if default not in COMPUTER_LEVELS:
        raise TableSetupError(f"no computer level is called {default!r}")
    if levels and len(levels) != len(seats):
        raise TableSetupError(f"{len(levels)} seat levels for {len(seats)} seats")
    for seat, (player, level) in enumerate(zip(seats, levels, strict=False)):
        if level and player != COMPUTER:
            raise TableSetupError(f"seat {seat} is a player's: only computer seats have a level")
        if level and level not in COMPUTER_LEVELS:
            raise TableSetupError(f"no computer level is called {level!r}")


def start(created: TableCreated) -> Table:
    """The table right after its creation event (version 1)."""
    game = game_by_id(created.game_id).rules
    control = tuple(
        SeatControl.COMPUTER if p == COMPUTER else SeatControl.PERSON for p in created.seats
    )
    return Table(
        table_id=created.table_id,
        game_id=created.game_id,
        game=game,
        options=created.options,
        seats=created.seats,
        control=control,
        state=game.initial_state(created.options),
        version=1,
        levels=tuple(
            (created.levels[i] if created.levels else "") or created.computer_level
            for i in range(len(created.seats))
        ),
        online=tuple(True if p == COMPUTER else None for p in created.seats),
        cover_after_seconds=created.cover_after_seconds,
        hints_off=created.hints_off,
        seed_scheme=created.seed_scheme,
        open_hand_delay=created.open_hand_delay,
        seed_window=created.seed_window,
    )


def open_hands(table: Table) -> tuple[tuple[str, ...], ...]:
    """Every seat's hand as card codes, seat 0 first: what an open-hand spectator sees
    (the game's `card_places`; none for a game without it)."""
    places = table.plugin.card_places
    if places is None:
        return ()
    return tuple(tuple(str(card) for card in hand) for hand in places(table.state).hands)


def decode(table: Table | None, type_name: str, data: Mapping[str, Any]) -> Any:
    """Rebuild a stored event, table-level or of the table's game."""
    if type_name in TABLE_EVENTS:
        return decode_event(TABLE_EVENTS, type_name, data)
    if table is None:
        raise ValueError(f"a table stream must start with TableCreated, not {type_name}")
    return decode_event(game_registry(table.game), type_name, data)


def game_registry(game: Decider[Any, Any, Any]) -> dict[str, type]:
    return registry_of(game.EVENTS)


def apply(
    table: Table | None, event: Any, deadline: datetime | None = None, at: datetime | None = None
) -> Table:
    """Fold one decoded event into the table (the next version); `at`: when the log
    recorded it (None while it is not stored yet)."""
    if isinstance(event, TableCreated):
        if table is not None:
            raise ValueError("TableCreated can only start a stream")
        return start(event)
    if table is None:
        raise ValueError("a table stream must start with TableCreated")
    if isinstance(event, SeatControlChanged):
        control = list(table.control)
        control[event.seat] = event.control
        return _seat_event(replace(table, control=tuple(control)))
    if isinstance(event, SeatPresenceChanged):
        online: list[bool | None] = list(table.online or (True,) * len(table.seats))
        online[event.seat] = event.online
        return _seat_event(replace(table, online=tuple(online)))
    if isinstance(event, ClientSeedSet):
        return _seat_event(_seeding_event(table, event))
    if isinstance(event, seeding.SEEDING_EVENTS):
        # appended with the game events of a deal or its end: seen by every viewer, they
        # end its run of seat events as a public game event does
        return replace(_seeding_event(table, event), version=table.version + 1, seat_run=())
    after = replace(
        _count_turn(table, event),
        state=table.game.evolve(table.state, event),
        version=table.version + 1,
        turn_deadline=deadline,
        deals=track_deals(table.deals, table.plugin.fair_deal(event)),
    )
    return _track_tap(_track_audience(after, event), event, at)


def _count_turn(table: Table, event: Any) -> Table:
    """Count a decision of a player's seat (the plugin's optional `decided_by` hook: the
    seat whose turn an event takes): covered when its person was not playing it then. A
    person retaking his seat to move appends the retake first, so his move is his.
    Every seat's move is also the open-hand delay's clock (`recent_moves`)."""
    decided_by = table.plugin.decided_by
    seat: int | None = decided_by(event) if decided_by is not None else None
    if seat is None:
        return table
    if table.open_hand_delay:
        moved = (*table.recent_moves, table.version + 1)[-table.open_hand_delay :]
        table = replace(table, recent_moves=moved)
    if table.seats[seat] == COMPUTER:
        return table
    tally = list(table.tally or (TurnTally(),) * len(table.seats))
    tally[seat] = tally[seat].counted(table.control[seat] is not SeatControl.PERSON)
    return replace(table, tally=tuple(tally))


def _seeding_event(table: Table, event: seeding.SeedingEvent) -> Table:
    """Fold a seed scheme 2 event: server seeds committed and revealed, client seeds set,
    a deal's derivation recorded on its public proof."""
    if isinstance(event, ServerSeedCommitted):
        fresh = Seeding(event.deal, event.server_seed, ("",) * len(table.seats))
        return replace(table, seedings=(*table.seedings, fresh))
    if isinstance(event, ClientSeedSet):
        return replace(table, seedings=seeding.with_client_seed(table.seedings, event))
    if isinstance(event, DealSeeded):
        derived = {
            "scheme": event.scheme,
            "server_commitment": event.server_commitment,
            "client_seeds": event.client_seeds,
        }
        return replace(table, deals=_proof_of(table.deals, event.deal, **derived))
    return replace(
        table,
        seedings=tuple(s for s in table.seedings if s.deal != event.deal),
        deals=_proof_of(table.deals, event.deal, server_seed=event.server_seed.hex()),
    )


def _proof_of(deals: tuple[DealProof, ...], number: int, **changes: Any) -> tuple[DealProof, ...]:
    return tuple(replace(d, **changes) if d.number == number else d for d in deals)


def _seat_event(table: Table) -> Table:
    """The next version after a seat event (every viewer sees it): it lengthens every
    viewer's run of seat events, so it makes no pinned move stale."""
    run = table.seat_run or (0,) * (len(table.seats) + 1)
    return replace(table, version=table.version + 1, seat_run=tuple(n + 1 for n in run))


def _track_audience(table: Table, event: Any) -> Table:
    """Note an event some viewers may not see (the plugin's optional `audience` hook),
    and end the run of seat events of every viewer who sees it."""
    audience = table.plugin.audience
    seats: tuple[int, ...] | None = audience(event) if audience is not None else None
    viewers = len(table.seats) + 1  # every seat, then spectators
    if table.seat_run:
        run = tuple(0 if seats is None or i in seats else n for i, n in enumerate(table.seat_run))
        table = replace(table, seat_run=run if any(run) else ())
    if seats is None:
        return table
    unseen = table.unseen or (0,) * viewers
    return replace(
        table,
        private=(*table.private, (table.version, seats)),
        unseen=tuple(n if i in seats else n + 1 for i, n in enumerate(unseen)),
    )


def _track_tap(table: Table, event: Any, at: datetime | None) -> Table:
    """Remember a seat's tap (the plugin's optional `tapped_by` hook) and when it was."""
    tapped_by = table.plugin.tapped_by
    seat: int | None = tapped_by(event) if tapped_by is not None else None
    if seat is None:
        return table
    taps = list(table.taps or ((),) * len(table.seats))
    taps[seat] = (*taps[seat], at)[-TAPS_KEPT:]
    return replace(table, taps=tuple(taps))


def stamped(table: Table, at: datetime) -> Table:
    """The table with `at` as the time of taps folded before the log recorded them.

    The table service folds a command's events before appending them; once the store
    says when it recorded them, the cached table takes that time, as a reload would.
    """
    if not any(t is None for taps in table.taps for t in taps):
        return table
    return replace(
        table, taps=tuple(tuple(at if t is None else t for t in taps) for taps in table.taps)
    )


def encode(event: Any) -> tuple[str, dict[str, Any]]:
    """(type, JSON data) of any table or game event, for the event store."""
    return encode_event(event)
