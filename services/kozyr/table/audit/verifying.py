"""`verify`: is a table's log what the chain, the commitments and the rules say it must be?"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

from kozyr.eventstore import RecordedEvent, VerifyReport
from kozyr.games.codec import encode_event
from kozyr.games.errors import RuleError
from kozyr.table.adapters.repository import STREAM_PREFIX, deadline_of
from kozyr.table.audit.games import (
    Data,
    GameProfile,
    commitment_of,
    is_audited,
    profile_of,
)
from kozyr.table.audit.text import as_json, describe_error, render_report
from kozyr.table.domain import model, seeding
from kozyr.table.domain.model import (
    SEAT_EVENTS,
    SeatControlChanged,
    SeatPresenceChanged,
    Table,
    TableCreated,
)


class Check(StrEnum):
    """What a failed verification found wrong (the `check` of a `Problem`)."""

    HASH_CHAIN = "HASH_CHAIN"
    """The store's hash chain breaks here: the row was changed, removed or reordered."""
    NOT_A_TABLE = "NOT_A_TABLE"
    """The stream does not start with this table's TableCreated (or has a second one)."""
    UNDECODABLE = "UNDECODABLE"
    """The event's type or data is not an event of this game."""
    SEED_COMMITMENT = "SEED_COMMITMENT"
    """SHA-256 of the seed is not the commitment published with it."""
    DEAL_MISMATCH = "DEAL_MISMATCH"
    """The recorded hands or talon/reserve are not the deal of the recorded seed."""
    REVEAL_MISMATCH = "REVEAL_MISMATCH"
    """The revealed seed (or commitment) is not the one the deal was dealt with."""
    ILLEGAL_MOVE = "ILLEGAL_MOVE"
    """The rules refuse the move this event records."""
    NOT_FROM_RULES = "NOT_FROM_RULES"
    """The rules, given the same move or seed, record something else here."""
    DOES_NOT_FOLD = "DOES_NOT_FOLD"
    """The game's evolve cannot apply the event."""
    INCOMPLETE_MOVE = "INCOMPLETE_MOVE"
    """The stream ends before every event of its last move."""
    UNREVEALED_SEED = "UNREVEALED_SEED"
    """The game is over but a deal's seed was never revealed."""
    RESULT_MISMATCH = "RESULT_MISMATCH"
    """The recorded final result is not the result of replaying the game."""
    SERVER_SEED_COMMITMENT = "SERVER_SEED_COMMITMENT"
    """Seed scheme 2: a server seed committed too late, twice, or not the one revealed."""
    CLIENT_SEED_WINDOW = "CLIENT_SEED_WINDOW"
    """Seed scheme 2: a client seed set outside its deal's window (before the server
    seed's commitment or after the deal was dealt), or not a client seed."""
    DEAL_DERIVATION = "DEAL_DERIVATION"
    """Seed scheme 2: a deal's seed is not the HMAC of its committed server seed over the
    client seeds set for it (docs/fair-deal.md §9), or its derivation is not recorded."""


@dataclass(frozen=True, slots=True)
class Problem:
    """The first bad event: where, what kind, and why (with the values involved)."""

    position: int
    type: str
    check: Check
    reason: str

    def to_dict(self) -> Data:
        return {
            "position": self.position,
            "type": self.type,
            "check": self.check.value,
            "reason": self.reason,
        }

    def __str__(self) -> str:
        return f"event #{self.position} ({self.type or 'none'}): {self.check.value}: {self.reason}"


@dataclass(frozen=True, slots=True)
class AuditReport:
    """The outcome of `verify`: ok, or the first bad event, with what was checked."""

    stream: str
    events: int
    chain: VerifyReport
    game_id: str | None = None
    deals_rederived: int = 0
    deals_derived: int = 0
    seeds_checked: int = 0
    seeds_revealed: int = 0
    moves_redecided: int = 0
    chance_redecided: int = 0
    over: bool = False
    result: Data | None = None
    result_position: int | None = None
    problem: Problem | None = None

    @property
    def ok(self) -> bool:
        return self.problem is None

    def to_dict(self) -> Data:
        return {
            "ok": self.ok,
            "stream": self.stream,
            "game_id": self.game_id,
            "events": self.events,
            "chain": {
                "ok": self.chain.ok,
                "checked": self.chain.checked,
                "version": self.chain.version,
                "failure": None if self.chain.failure is None else self.chain.failure.value,
                "first_bad_position": self.chain.first_bad_position,
                "detail": self.chain.detail,
            },
            "deals_rederived": self.deals_rederived,
            "deals_derived": self.deals_derived,
            "seeds_checked": self.seeds_checked,
            "seeds_revealed": self.seeds_revealed,
            "moves_redecided": self.moves_redecided,
            "chance_redecided": self.chance_redecided,
            "over": self.over,
            "result": self.result,
            "result_position": self.result_position,
            "problem": None if self.problem is None else self.problem.to_dict(),
        }

    def to_text(self) -> str:
        return render_report(self)


def verify(events: Sequence[RecordedEvent], chain: VerifyReport) -> AuditReport:
    """Check the stream against its hash chain, its commitments and the rules.

    `chain` is the store's `verify(stream)` of the same stream. Every check runs in
    stream order and the report names the FIRST bad event (the chain's failure wins a
    tie: a row changed without re-hashing is told as such).
    """
    auditor = _Auditor(chain.stream)
    content = auditor.run(events)
    problem = _earliest(_chain_problem(chain, events), content)
    return AuditReport(
        stream=chain.stream,
        events=len(events),
        chain=chain,
        game_id=auditor.table.game_id if auditor.table else None,
        deals_rederived=auditor.deals,
        deals_derived=auditor.derived,
        seeds_checked=auditor.seeds_checked,
        seeds_revealed=len(auditor.revealed),
        moves_redecided=auditor.moves,
        chance_redecided=auditor.chances,
        over=auditor.table.is_over if auditor.table else False,
        result=auditor.table.game.result(auditor.table.state) if auditor.table else None,
        result_position=auditor.result_position,
        problem=problem,
    )


def _chain_problem(chain: VerifyReport, events: Sequence[RecordedEvent]) -> Problem | None:
    if chain.ok or chain.failure is None:
        return None
    position = chain.first_bad_position or 1
    at = [e.type for e in events if e.position == position]
    return Problem(
        position, at[0] if at else "", Check.HASH_CHAIN, f"{chain.failure.value}: {chain.detail}"
    )


def _earliest(chain: Problem | None, content: Problem | None) -> Problem | None:
    if chain is None or content is None:
        return chain or content
    return content if content.position < chain.position else chain


@dataclass
class _Auditor:
    """Walks a stream once, re-deciding it; stops at the first content problem."""

    stream: str
    table: Table | None = None
    owed: list[tuple[str, Data]] = field(default_factory=list)
    """Events the rules produced for the current move that the stream still owes."""
    dealt: dict[int, tuple[bytes, str]] = field(default_factory=dict)
    revealed: set[int] = field(default_factory=set)
    seedings: dict[int, seeding.Seeding] = field(default_factory=dict)
    """Seed scheme 2: the committed server seeds, with the client seeds set for each."""
    unseeded: int | None = None
    """Seed scheme 2: the deal just dealt, whose DealSeeded must come next."""
    derived: int = 0
    server_revealed: set[int] = field(default_factory=set)
    deals: int = 0
    seeds_checked: int = 0
    moves: int = 0
    chances: int = 0
    result_position: int | None = None
    result_recorded: Data | None = None

    def run(self, events: Sequence[RecordedEvent]) -> Problem | None:
        if not events:
            return Problem(1, "", Check.NOT_A_TABLE, "the stream holds no events")
        for event in events:
            problem = self.check(event)
            if problem is not None:
                return problem
        return self.finish(events[-1])

    def check(self, event: RecordedEvent) -> Problem | None:
        """Check one event, then fold it in (None: nothing wrong with it)."""
        try:
            decoded = model.decode(self.table, event.type, event.data)
        except Exception as err:  # an auditor reports whatever breaks, and goes no further
            return _problem(event, Check.UNDECODABLE, describe_error(err))
        if self.unseeded is not None and not isinstance(decoded, seeding.DealSeeded):
            return _problem(
                event,
                Check.DEAL_DERIVATION,
                f"deal {self.unseeded} of a scheme 2 table has no DealSeeded after it",
            )
        if isinstance(decoded, seeding.SEEDING_EVENTS):
            problem = self._seeding_problem(event, decoded)
        elif isinstance(decoded, (TableCreated, *SEAT_EVENTS)):
            problem = self._table_event_problem(event, decoded)
        else:
            problem = self._game_event_problem(event, decoded)
        if problem is not None:
            return problem
        try:
            self.table = model.apply(self.table, decoded, deadline_of(event), event.recorded_at)
        except Exception as err:
            return _problem(event, Check.DOES_NOT_FOLD, describe_error(err))
        return None

    def _table_event_problem(
        self, event: RecordedEvent, decoded: TableCreated | SeatControlChanged | SeatPresenceChanged
    ) -> Problem | None:
        if isinstance(decoded, TableCreated):
            reason = None
            if self.table is not None:
                reason = "a second TableCreated in the stream"
            elif f"{STREAM_PREFIX}{decoded.table_id}" != self.stream:
                reason = f"TableCreated names table {decoded.table_id}, not this stream's"
            elif not is_audited(decoded.game_id):
                reason = f"unknown game {decoded.game_id!r}"
            return None if reason is None else _problem(event, Check.NOT_A_TABLE, reason)
        if self.owed:
            return _problem(
                event, Check.INCOMPLETE_MOVE, f"a seat change before {self.owed[0][0]}, still due"
            )
        return None

    def _game_event_problem(self, event: RecordedEvent, decoded: Any) -> Problem | None:
        assert self.table is not None  # model.decode refuses game events before creation
        profile = profile_of(self.table.game_id)
        if event.type == profile.reveal_event:
            problem = self._reveal_problem(event, decoded, profile)
        else:
            problem = self._seed_problem(event, decoded) or self._deal_problem(
                event, decoded, profile
            )
        return problem or self._redecided_problem(event, decoded, profile)

    def _seed_problem(self, event: RecordedEvent, decoded: Any) -> Problem | None:
        """Any event carrying a seed and a commitment: SHA-256(seed) == commitment."""
        seed, commitment = getattr(decoded, "seed", None), getattr(decoded, "commitment", None)
        if not isinstance(seed, bytes) or not isinstance(commitment, str):
            return None
        self.seeds_checked += 1
        actual = commitment_of(seed)
        if actual != commitment:
            return _problem(
                event,
                Check.SEED_COMMITMENT,
                f"SHA-256 of the seed {seed.hex()} is {actual}, the commitment is {commitment}",
            )
        return None

    def _deal_problem(
        self, event: RecordedEvent, decoded: Any, profile: GameProfile
    ) -> Problem | None:
        """A deal event: its hands and talon/reserve are the deal of its seed."""
        if event.type != profile.deal_event:
            return None
        seed: bytes = decoded.seed
        hands, undealt = profile.deal_from_seed(seed)
        recorded: tuple[tuple[Any, ...], ...] = decoded.hands
        wrong = [f"seat {s}" for s, hand in enumerate(hands) if recorded[s : s + 1] != (hand,)]
        if len(recorded) != len(hands):
            wrong.append(f"{len(recorded)} hands instead of {len(hands)}")
        if getattr(decoded, profile.undealt_field) != undealt:
            wrong.append(f"the {profile.undealt_field}")
        if wrong:
            return _problem(
                event,
                Check.DEAL_MISMATCH,
                f"the deal of seed {seed.hex()} differs from the recorded one for "
                + ", ".join(wrong),
            )
        number = int(getattr(decoded, profile.number_field))
        self.dealt[number] = (seed, decoded.commitment)
        self.deals += 1
        if self.table is not None and self.table.seed_scheme == seeding.CLIENT_SEEDS:
            if number not in self.seedings:
                return _problem(
                    event,
                    Check.SERVER_SEED_COMMITMENT,
                    f"deal {number} was dealt without a committed server seed",
                )
            self.unseeded = number
        return None

    def _seeding_problem(
        self, event: RecordedEvent, decoded: seeding.SeedingEvent
    ) -> Problem | None:
        """Seed scheme 2 (docs/fair-deal.md §9): commitments before client seeds, client
        seeds before the deal, the deal's seed derived from them, the reveal committed."""
        assert self.table is not None  # model.decode refuses table events before creation
        if self.owed:
            due = self.owed[0][0]
            reveal = profile_of(self.table.game_id).reveal_event
            if not isinstance(decoded, seeding.ServerSeedRevealed):
                return _problem(
                    event, Check.INCOMPLETE_MOVE, f"a seeding event before {due}, still due"
                )
            if due == reveal:  # the server seed follows the deal's own reveal
                return _problem(event, Check.NOT_FROM_RULES, f"the rules record {due} here")
        if self.table.seed_scheme != seeding.CLIENT_SEEDS:
            return _problem(event, Check.DEAL_DERIVATION, "a seeding event at a scheme 1 table")
        if isinstance(decoded, seeding.ServerSeedCommitted):
            return self._commitment_problem(event, decoded)
        if isinstance(decoded, seeding.ClientSeedSet):
            return self._client_seed_problem(event, decoded)
        if isinstance(decoded, seeding.DealSeeded):
            return self._derivation_problem(event, decoded)
        return self._server_reveal_problem(event, decoded)

    def _commitment_problem(
        self, event: RecordedEvent, decoded: seeding.ServerSeedCommitted
    ) -> Problem | None:
        reason = None
        if decoded.deal in self.seedings:
            reason = f"a second server seed committed for deal {decoded.deal}"
        elif decoded.deal in self.dealt:
            reason = f"the server seed of deal {decoded.deal} is committed after the deal"
        elif seeding.commitment_of(decoded.server_seed) != decoded.commitment:
            reason = (
                f"SHA-256 of the server seed {decoded.server_seed.hex()} is not "
                f"the commitment {decoded.commitment}"
            )
        if reason is not None:
            return _problem(event, Check.SERVER_SEED_COMMITMENT, reason)
        self.seeds_checked += 1
        assert self.table is not None
        seats = ("",) * len(self.table.seats)
        self.seedings[decoded.deal] = seeding.Seeding(decoded.deal, decoded.server_seed, seats)
        return None

    def _client_seed_problem(
        self, event: RecordedEvent, decoded: seeding.ClientSeedSet
    ) -> Problem | None:
        reason = None
        if decoded.deal not in self.seedings:
            reason = f"a client seed for deal {decoded.deal}, whose server seed is not committed"
        elif decoded.deal in self.dealt:
            reason = f"a client seed for deal {decoded.deal}, already dealt"
        elif not seeding.is_client_seed(decoded.client_seed):
            reason = f"{_short(decoded.client_seed)} is not a client seed"
        elif not 0 <= decoded.seat < len(self.seedings[decoded.deal].client_seeds):
            reason = f"there is no seat {decoded.seat}"
        if reason is not None:
            return _problem(event, Check.CLIENT_SEED_WINDOW, reason)
        self.seedings.update(
            (s.deal, s) for s in seeding.with_client_seed(tuple(self.seedings.values()), decoded)
        )
        return None

    def _derivation_problem(
        self, event: RecordedEvent, decoded: seeding.DealSeeded
    ) -> Problem | None:
        assert self.table is not None
        number, self.unseeded = self.unseeded, None
        committed = self.seedings.get(decoded.deal)
        reason = None
        if number != decoded.deal or committed is None:
            reason = f"DealSeeded names deal {decoded.deal}, not the deal just dealt"
        elif decoded.scheme != seeding.CLIENT_SEEDS:
            reason = f"scheme {decoded.scheme}, the table's is {seeding.CLIENT_SEEDS}"
        elif decoded.server_commitment != committed.commitment:
            reason = (
                f"server commitment {decoded.server_commitment}, "
                f"the one committed is {committed.commitment}"
            )
        elif decoded.client_seeds != committed.client_seeds:
            reason = (
                f"client seeds {_short(list(decoded.client_seeds))}, the seats set "
                f"{_short(list(committed.client_seeds))}"
            )
        else:
            derived, _ = seeding.seeded(committed, self.table.table_id)
            if derived != self.dealt[decoded.deal][0]:
                reason = (
                    f"the deal was dealt with seed {self.dealt[decoded.deal][0].hex()}, "
                    f"its server and client seeds derive {derived.hex()}"
                )
        if reason is not None:
            return _problem(event, Check.DEAL_DERIVATION, reason)
        self.derived += 1
        return None

    def _server_reveal_problem(
        self, event: RecordedEvent, decoded: seeding.ServerSeedRevealed
    ) -> Problem | None:
        committed = self.seedings.get(decoded.deal)
        reason = None
        if committed is None:
            reason = f"reveals the server seed of deal {decoded.deal}, never committed"
        elif decoded.server_seed != committed.server_seed:
            reason = (
                f"revealed server seed {decoded.server_seed.hex()} does not hash to the "
                f"commitment {committed.commitment}"
            )
        elif decoded.deal in self.dealt and decoded.deal not in self.revealed:
            reason = f"the server seed of deal {decoded.deal} is revealed before the deal ended"
        elif decoded.deal not in self.dealt:
            reason = f"the server seed of deal {decoded.deal} is revealed before it was dealt"
        if reason is not None:
            return _problem(event, Check.SERVER_SEED_COMMITMENT, reason)
        self.seeds_checked += 1
        self.server_revealed.add(decoded.deal)
        return None

    def _reveal_problem(
        self, event: RecordedEvent, decoded: Any, profile: GameProfile
    ) -> Problem | None:
        """A reveal names the seed (and commitment) its deal was dealt with."""
        self.seeds_checked += 1
        number = int(getattr(decoded, profile.number_field))
        dealt = self.dealt.get(number)
        reason = None
        if dealt is None:
            reason = f"reveals the seed of {profile.deal_word.lower()} {number}, never dealt"
        elif decoded.seed != dealt[0]:
            reason = (
                f"revealed seed {decoded.seed.hex()}, but the deal was dealt with {dealt[0].hex()}"
            )
        elif commitment_of(decoded.seed) != dealt[1]:
            reason = f"the revealed seed does not hash to the deal's commitment {dealt[1]}"
        elif getattr(decoded, "commitment", dealt[1]) != dealt[1]:
            reason = f"revealed with commitment {decoded.commitment}, dealt with {dealt[1]}"
        if reason is not None:
            return _problem(event, Check.REVEAL_MISMATCH, reason)
        self.revealed.add(number)
        return None

    def _redecided_problem(
        self, event: RecordedEvent, decoded: Any, profile: GameProfile
    ) -> Problem | None:
        """The event is exactly what the rules produce for its move or chance draw."""
        if not self.owed:
            try:
                owed = self._decide(decoded, profile)
            except RuleError as err:
                return _problem(event, Check.ILLEGAL_MOVE, f"{err.reason}: {err.message()}")
            except Exception as err:
                return _problem(
                    event,
                    Check.NOT_FROM_RULES,
                    f"the rules cannot decide it: {describe_error(err)}",
                )
            if owed is None:
                return _problem(
                    event, Check.NOT_FROM_RULES, "no move and no chance draw produces it here"
                )
            self.owed = owed
        expected_type, expected = self.owed.pop(0)
        if event.type == profile.result_event:
            self.result_position, self.result_recorded = event.position, dict(event.data)
        if (expected_type, expected) == (event.type, event.data):
            return None
        if expected_type != event.type:
            return _problem(event, Check.NOT_FROM_RULES, f"the rules record {expected_type} here")
        check = (
            Check.RESULT_MISMATCH if event.type == profile.result_event else Check.NOT_FROM_RULES
        )
        return _problem(event, check, _difference(event.data, expected))

    def _decide(self, decoded: Any, profile: GameProfile) -> list[tuple[str, Data]] | None:
        assert self.table is not None
        game, state = self.table.game, self.table.state
        if game.turn(state).is_chance:
            seed = getattr(decoded, "seed", None)
            if not isinstance(seed, bytes):
                return None
            command = game.chance_command(state, seed)
            self.chances += 1
        else:
            command = profile.move_of(decoded)
            if command is None:
                return None
            self.moves += 1
        return [encode_event(e) for e in game.decide(state, command)]

    def finish(self, last: RecordedEvent) -> Problem | None:
        """After the last event: no move left half-recorded; if over, seeds and result."""
        if self.unseeded is not None:
            return Problem(
                last.position + 1,
                "DealSeeded",
                Check.DEAL_DERIVATION,
                f"the stream ends before deal {self.unseeded}'s DealSeeded",
            )
        if self.owed:
            missing = self.owed[0][0]
            return Problem(
                last.position + 1,
                missing,
                Check.INCOMPLETE_MOVE,
                f"the stream ends before {missing}, which its last move produces",
            )
        if self.table is None or not self.table.is_over:
            return None
        profile = profile_of(self.table.game_id)
        at = self.result_position or last.position
        unrevealed = sorted(set(self.dealt) - self.revealed)
        hidden = sorted(set(self.dealt) & set(self.seedings) - self.server_revealed)
        if hidden and not unrevealed:
            return Problem(
                last.position,
                "ServerSeedRevealed",
                Check.UNREVEALED_SEED,
                f"the game is over but the server seeds of deals {hidden} were never revealed",
            )
        if unrevealed:
            return Problem(
                at,
                profile.result_event,
                Check.UNREVEALED_SEED,
                f"the game is over but the seeds of {profile.deal_word.lower()}s "
                f"{unrevealed} were never revealed",
            )
        claimed = profile.result_claim(self.table.game.result(self.table.state))
        if self.result_recorded != claimed:
            return Problem(
                at,
                profile.result_event,
                Check.RESULT_MISMATCH,
                _difference(self.result_recorded or {}, claimed),
            )
        return None


def _problem(event: RecordedEvent, check: Check, reason: str) -> Problem:
    return Problem(event.position, event.type, check, reason)


def _short(value: Any, limit: int = 120) -> str:
    """A value in a reason, spelt as JSON like the data it comes from (not a repr)."""
    text = as_json(value)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _difference(recorded: Mapping[str, Any], expected: Mapping[str, Any]) -> str:
    """Name the first field where the record and the replay disagree, with both values."""
    for key in sorted(set(recorded) | set(expected)):
        if recorded.get(key) != expected.get(key):
            return (
                f"{key}: recorded {_short(recorded.get(key))}, "
                f"the replay gives {_short(expected.get(key))}"
            )
    return "the record and the replay differ"
