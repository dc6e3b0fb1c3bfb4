"""Moderator tooling: replay a table's event stream, and verify that it is sound.

Both work on the events exactly as stored (a list of `RecordedEvent`), with no service
running: a disputed game is settled from the log alone (docs/moderation.md).

- `replay(events, seat)` tells the game deal by deal: as the moderator sees it (every
  hand at each deal start), or as one seat saw it — through the game's own `redact`,
  the very redaction of that seat's history, so a seat's replay cannot show more than
  the seat was shown at the table (RULES.md, "what every seat may know").
- `verify(events, chain)` asks whether the log is what the rules and the dealer's
  commitments say it must be. Besides the store's hash chain (which only proves that
  nobody changed the rows *without re-hashing*), it re-runs the game: every seed
  against its commitment, every deal re-derived from its seed, every reveal against
  the dealt seed, every move and every chance draw re-decided by the game's decider
  and compared with what was recorded, and the final result against the replayed
  one. A forger who rewrites a score and re-hashes the whole chain is still caught.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

from kozyr.eventstore import RecordedEvent, VerifyReport
from kozyr.games import khozor_teams, three_five_eight
from kozyr.games.base import RuleError, encode_event
from kozyr.table import model
from kozyr.table.model import COMPUTER, SeatControlChanged, Table, TableCreated
from kozyr.table.repository import STREAM_PREFIX, deadline_of

Data = dict[str, Any]

# =============================================================================== games


@dataclass(frozen=True, slots=True)
class GameProfile:
    """What the auditor must know of a game beyond the `Decider` protocol.

    `move_of` names the player command that must have produced an event which opens a
    move (the first event `decide` returns for it); None for events that only follow
    another one (a trick taken, a refill, a score). `result_claim` projects
    `game.result(state)` onto the fields of the recorded final result event.
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


def _profile(game_id: str) -> GameProfile:
    try:
        return PROFILES[game_id]
    except KeyError:
        raise AuditError(f"no audit support for game {game_id!r}") from None


def commitment_of(seed: bytes) -> str:
    """docs/fair-deal.md §5: the commitment is the plain SHA-256 of the seed, in hex."""
    return hashlib.sha256(seed).hexdigest()


# =============================================================================== replay


@dataclass(frozen=True, slots=True)
class Step:
    """One event as the viewer saw it (`data` is redacted for a seat)."""

    position: int
    type: str
    data: Data

    def to_dict(self) -> Data:
        return {
            "position": self.position,
            "type": self.type,
            "data": self.data,
            "text": step_text(self.type, self.data),
        }


@dataclass(frozen=True, slots=True)
class DealReplay:
    """One deal (3-5-8) or round (Khözör): its deal event, then every later step."""

    number: int
    start: Step
    steps: tuple[Step, ...]

    @property
    def tricks(self) -> list[Data]:
        """3-5-8's completed tricks in order (public facts; none in Khözör)."""
        return [s.data for s in self.steps if s.type == "TrickTaken"]

    def to_dict(self) -> Data:
        return {
            "number": self.number,
            "start": self.start.to_dict(),
            "steps": [s.to_dict() for s in self.steps],
            "tricks": self.tricks,
        }


@dataclass(frozen=True, slots=True)
class Replay:
    """A whole table as one viewer (None: the moderator) may see it."""

    table_id: str
    game_id: str
    seat: int | None
    seats: tuple[str, ...]
    options: Data
    version: int
    over: bool
    result: Data
    opening: tuple[Step, ...]
    deals: tuple[DealReplay, ...]
    ending: tuple[Step, ...]

    def to_dict(self) -> Data:
        return {
            "table_id": self.table_id,
            "game_id": self.game_id,
            "seat": self.seat,
            "seats": list(self.seats),
            "options": self.options,
            "version": self.version,
            "over": self.over,
            "result": self.result,
            "opening": [s.to_dict() for s in self.opening],
            "deals": [d.to_dict() for d in self.deals],
            "ending": [s.to_dict() for s in self.ending],
        }

    def to_text(self) -> str:
        return render_replay(self)


def _decoded(events: Sequence[RecordedEvent]) -> Iterator[tuple[RecordedEvent, Any, Table]]:
    """Each event with its decoded form and the table right after it; AuditError if the
    stream is no table or does not fold (run `verify` to learn why)."""
    table: Table | None = None
    for event in events:
        try:
            decoded = model.decode(table, event.type, event.data)
            table = model.apply(table, decoded, deadline_of(event))
        except Exception as err:
            raise AuditError(
                f"event #{event.position} ({event.type}) cannot be replayed: {_describe(err)}"
            ) from None
        yield event, decoded, table


def replay(events: Sequence[RecordedEvent], seat: int | None = None) -> Replay:
    """The game deal by deal; every card for the moderator (seat None), or only what
    `seat` saw: each game event passes through the game's `redact` for that seat."""
    if not events:
        raise AuditError("the stream holds no events")
    opening: list[Step] = []
    deals: list[tuple[int, Step, list[Step]]] = []
    ending: list[Step] = []
    table: Table | None = None
    for event, decoded, table in _decoded(events):
        profile = _profile(table.game_id)
        _check_seat(table, seat)
        data = _as_seen(table, event, decoded, seat)
        if data is None:
            continue
        step = Step(event.position, event.type, data)
        if event.type == profile.deal_event:
            deals.append((int(data[profile.number_field]), step, []))
        elif event.type == profile.result_event or ending:
            ending.append(step)
        elif deals:
            deals[-1][2].append(step)
        else:
            opening.append(step)
    assert table is not None
    return Replay(
        table_id=table.table_id,
        game_id=table.game_id,
        seat=seat,
        seats=table.seats,
        options=dict(table.options),
        version=table.version,
        over=table.is_over,
        result=table.game.result(table.state),
        opening=tuple(opening),
        deals=tuple(DealReplay(n, start, tuple(steps)) for n, start, steps in deals),
        ending=tuple(ending),
    )


def _check_seat(table: Table, seat: int | None) -> None:
    if seat is not None and not 0 <= seat < len(table.seats):
        raise NoSuchSeat(f"there is no seat {seat}: this table has seats 0-{len(table.seats) - 1}")


def _as_seen(table: Table, event: RecordedEvent, decoded: Any, seat: int | None) -> Data | None:
    """The event's data for the viewer: whole for the moderator, else the game's
    redaction (None: the seat never learnt of it). Table events are public."""
    if seat is None or isinstance(decoded, TableCreated | SeatControlChanged):
        return dict(event.data)
    return table.game.redact(decoded, seat)


# =============================================================================== text


def _cards(cards: Sequence[str]) -> str:
    return " ".join(cards) if cards else "-"


def _hidden_or(data: Mapping[str, Any], key: str, count_key: str) -> str:
    cards = data.get(key)
    if isinstance(cards, list):
        return _cards(cards)
    count = data.get(count_key, "?")
    return f"{count} card" if count == 1 else f"{count} cards"


def _seat_list(values: Sequence[Any]) -> str:
    return " / ".join(str(v) for v in values)


def _trick(d: Mapping[str, Any]) -> str:
    leader, cards = int(d["leader"]), d["cards"]
    plays = ", ".join(f"seat {(leader + i) % 3} {c}" for i, c in enumerate(cards))
    return f"trick {d['number']}: {plays} -> seat {d['winner']}"


def _exchanged(d: Mapping[str, Any]) -> str:
    who = f"seat {d['giver']} gives seat {d['receiver']}"
    if d.get("given") is None:
        return f"{who} a card (exchange step {d['number']}, cards hidden)"
    return f"{who} {d['given']}, gets back {d['returned']}"


def _hands_completed(d: Mapping[str, Any]) -> str:
    if "rests" in d:
        rests = "; ".join(f"seat {s}: {_cards(r)}" for s, r in enumerate(d["rests"]))
        return f"hands completed (last ten cards) {rests}"
    return f"your last ten cards: {_cards(d.get('cards', []))}"


def _scored(d: Mapping[str, Any]) -> str:
    return (
        f"deal {d['deal']} scored: contract {d['contract']}, targets {_seat_list(d['targets'])},"
        f" tricks {_seat_list(d['tricks'])}, points {_seat_list(d['points'])},"
        f" totals {_seat_list(d['totals'])}"
    )


def _revealed(d: Mapping[str, Any]) -> str:
    which = f"deal {d['deal']}" if "deal" in d else f"round {d.get('round_no')}"
    return f"seed of {which} revealed: {d['seed']}"


def _created(d: Mapping[str, Any]) -> str:
    options = ", ".join(f"{k}={v}" for k, v in d.get("options", {}).items()) or "defaults"
    return f"table created: game {d['game_id']}, options {options}"


_TEXTS: dict[str, Callable[[Mapping[str, Any]], str | None]] = {
    "TableCreated": _created,
    "SeatControlChanged": lambda d: f"seat {d['seat']} is now played by: {d['control']}",
    # 3-5-8
    "FirstDealerDrawn": lambda d: f"first dealer: seat {d['dealer']} (seed {d['seed']})",
    "ContractChosen": lambda d: f"seat {d['seat']} declares {d['contract']}",
    "HandsCompleted": _hands_completed,
    "ExchangePlanned": lambda d: (
        "exchange: "
        + (
            "; ".join(
                f"seat {t['giver']} gives {t['count']} to seat {t['receiver']}"
                for t in d["transfers"]
            )
            or "none"
        )
    ),
    "CardExchanged": _exchanged,
    "ExchangeSkipped": lambda d: (
        f"seat {d['giver']} holds only trumps: skips {d['count']} to seat {d['receiver']}"
    ),
    "TalonTaken": lambda d: f"seat {d['seat']} takes the talon: {_hidden_or(d, 'cards', 'count')}",
    "CardsDiscarded": lambda d: f"seat {d['seat']} discards {_hidden_or(d, 'cards', 'count')}",
    "CardPlayed": lambda d: None,  # told by its trick
    "TrickTaken": _trick,
    "DealScored": _scored,
    "GameEnded": lambda d: (
        f"game over: totals {_seat_list(d['totals'])}, places {_seat_list(d['places'])}"
    ),
    # Khözör
    "OpeningTeamDrawn": lambda d: f"opening team: {d['team']} (seed {d['seed']})",
    "OpenerConfirmed": lambda d: f"seat {d['seat']} names seat {d['opener']} to open",
    "CardsLed": lambda d: f"seat {d['seat']} leads {_hidden_or(d, 'cards', 'card_count')}",
    "CardsBeaten": lambda d: f"seat {d['seat']} beats with {_hidden_or(d, 'cards', 'card_count')}",
    "PilePickedUp": lambda d: f"seat {d['seat']} picks up {_hidden_or(d, 'cards', 'card_count')}",
    "ReserveDrawn": lambda d: (
        f"seat {d['seat']} draws {_hidden_or(d, 'cards', 'card_count')} from the reserve"
    ),
    "CycleSlept": lambda d: f"the cycle sleeps ({d['card_count']} cards); seat {d['seat']} leads",
    "SignalSet": lambda d: f"seat {d['seat']} signals {d['kind']}",
    "SignalCleared": lambda d: f"seat {d['seat']} clears {d['kind']} ({d['reason']})",
    "RoundWon": lambda d: f"round {d['round_no']} won by team {d['team']} (seat {d['seat']} out)",
    "MatchWon": lambda d: f"match won by team {d['team']}, {d['wins_a']}-{d['wins_b']}",
    # both
    REVEAL_EVENT: _revealed,
}


def step_text(type_name: str, data: Mapping[str, Any]) -> str | None:
    """One line for a step (None: told elsewhere, e.g. a card played is told by its trick)."""
    text = _TEXTS.get(type_name)
    if text is None:
        fields = ", ".join(f"{k}={v}" for k, v in data.items())
        return f"{type_name} {fields}"
    return text(data)


def _deal_header(profile: GameProfile, start: Step) -> list[str]:
    d = start.data
    number = d[profile.number_field]
    if "dealer" in d:
        facts = f"dealer seat {d['dealer']}"
    else:
        facts = f"trump {d['trump']}, opening team {d['opening_team']}"
    lines = [f"{profile.deal_word} {number} (#{start.position}): {facts}"]
    lines.append(f"  commitment {d['commitment']}")
    if "hands" in d:
        lines += [f"  seat {s}: {_cards(hand)}" for s, hand in enumerate(d["hands"])]
        lines.append(f"  {profile.undealt_field}: {_cards(d[profile.undealt_field])}")
    elif "hand" in d:
        lines.append(f"  your first six cards: {_cards(d['hand'])}")
    else:
        lines.append(f"  hands of {_seat_list(d['hand_counts'])} cards (cards hidden)")
    return lines


def _step_lines(steps: Sequence[Step], indent: str) -> list[str]:
    lines = []
    for step in steps:
        text = step_text(step.type, step.data)
        if text is not None:
            lines.append(f"{indent}#{step.position} {text}")
    return lines


def render_replay(r: Replay) -> str:
    """The human-readable replay: one line per step, deals as blocks, the result last."""
    profile = _profile(r.game_id)
    viewer = "moderator (every card)" if r.seat is None else f"seat {r.seat} (what it saw)"
    players = ", ".join(
        f"{s}: {p if p != COMPUTER else '(computer)'}" for s, p in enumerate(r.seats)
    )
    lines = [
        f"Table {r.table_id}  game {r.game_id}  version {r.version}  "
        + ("over" if r.over else "in progress"),
        f"Seats: {players}",
        f"Viewer: {viewer}",
        "",
    ]
    lines += _step_lines(r.opening, "")
    for deal in r.deals:
        lines += ["", *_deal_header(profile, deal.start), *_step_lines(deal.steps, "  ")]
    lines += ["", *_step_lines(r.ending, "")]
    lines.append(f"Result: {_result_text(r.result)}")
    return "\n".join(lines) + "\n"


def _result_text(result: Mapping[str, Any]) -> str:
    if "totals" in result:
        return (
            f"totals {_seat_list(result['totals'])}, places {_seat_list(result['places'])},"
            f" winners {_seat_list(result['winners']) or '-'}"
            + ("" if result.get("final") else " (provisional)")
        )
    wins = result["wins"]
    return f"rounds won A {wins['A']}, B {wins['B']}, winner {result['winner'] or '-'}"


# =============================================================================== verify


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
        def bad(check: Check, reason: str) -> Problem:
            return Problem(event.position, event.type, check, reason)

        try:
            decoded = model.decode(self.table, event.type, event.data)
        except Exception as err:
            return bad(Check.UNDECODABLE, _describe(err))
        if isinstance(decoded, TableCreated | SeatControlChanged):
            problem = self._table_event_problem(event, decoded)
        else:
            problem = self._game_event_problem(event, decoded)
        if problem is not None:
            return problem
        try:
            self.table = model.apply(self.table, decoded, deadline_of(event))
        except Exception as err:
            return bad(Check.DOES_NOT_FOLD, _describe(err))
        return None

    def _table_event_problem(
        self, event: RecordedEvent, decoded: TableCreated | SeatControlChanged
    ) -> Problem | None:
        if isinstance(decoded, TableCreated):
            reason = None
            if self.table is not None:
                reason = "a second TableCreated in the stream"
            elif f"{STREAM_PREFIX}{decoded.table_id}" != self.stream:
                reason = f"TableCreated names table {decoded.table_id}, not this stream's"
            elif decoded.game_id not in PROFILES:
                reason = f"unknown game {decoded.game_id!r}"
            return None if reason is None else _problem(event, Check.NOT_A_TABLE, reason)
        if self.owed:
            return _problem(
                event, Check.INCOMPLETE_MOVE, f"a seat change before {self.owed[0][0]}, still due"
            )
        return None

    def _game_event_problem(self, event: RecordedEvent, decoded: Any) -> Problem | None:
        assert self.table is not None  # model.decode refuses game events before creation
        profile = PROFILES[self.table.game_id]
        if event.type == REVEAL_EVENT:
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
            return Problem(
                event.position,
                event.type,
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
            return Problem(
                event.position,
                event.type,
                Check.DEAL_MISMATCH,
                f"the deal of seed {seed.hex()} differs from the recorded one for "
                + ", ".join(wrong),
            )
        self.dealt[int(getattr(decoded, profile.number_field))] = (seed, decoded.commitment)
        self.deals += 1
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
            return Problem(event.position, event.type, Check.REVEAL_MISMATCH, reason)
        self.revealed.add(number)
        return None

    def _redecided_problem(
        self, event: RecordedEvent, decoded: Any, profile: GameProfile
    ) -> Problem | None:
        """The event is exactly what the rules produce for its move or chance draw."""

        def bad(check: Check, reason: str) -> Problem:
            return Problem(event.position, event.type, check, reason)

        if not self.owed:
            try:
                owed = self._decide(decoded, profile)
            except RuleError as err:
                return bad(Check.ILLEGAL_MOVE, f"{err.reason}: {err.message()}")
            except Exception as err:
                return bad(Check.NOT_FROM_RULES, f"the rules cannot decide it: {_describe(err)}")
            if owed is None:
                return bad(Check.NOT_FROM_RULES, "no move and no chance draw produces it here")
            self.owed = owed
        expected_type, expected = self.owed.pop(0)
        if event.type == profile.result_event:
            self.result_position, self.result_recorded = event.position, dict(event.data)
        if (expected_type, expected) == (event.type, event.data):
            return None
        if expected_type != event.type:
            return bad(Check.NOT_FROM_RULES, f"the rules record {expected_type} here")
        check = (
            Check.RESULT_MISMATCH if event.type == profile.result_event else Check.NOT_FROM_RULES
        )
        return bad(check, _difference(event.data, expected))

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
        profile = PROFILES[self.table.game_id]
        at = self.result_position or last.position
        unrevealed = sorted(set(self.dealt) - self.revealed)
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


def _describe(error: BaseException) -> str:
    text = str(error).strip("'\"")
    return f"{type(error).__name__}: {text}" if text else type(error).__name__


def _short(value: Any, limit: int = 120) -> str:
    text = repr(value)
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


# =============================================================================== report


def render_report(report: AuditReport) -> str:
    """The human-readable verdict: what was checked, then OK or the first bad event."""
    chain = report.chain
    chain_text = (
        f"intact ({chain.checked} events, head at version {chain.version})"
        if chain.ok
        else f"BROKEN at #{chain.first_bad_position}: {chain.failure} ({chain.detail})"
    )
    deal = "deals" if report.game_id != khozor_teams.GAME_ID else "rounds"
    lines = [
        f"Stream {report.stream}  game {report.game_id or '?'}  {report.events} events",
        f"  hash chain   {chain_text}",
        f"  seeds        {report.seeds_checked} checked against their commitments, "
        f"{report.seeds_revealed} revealed seeds equal to the dealt ones",
        f"  {deal:<12} {report.deals_rederived} re-derived from their seeds",
        f"  rules        {report.moves_redecided} moves and {report.chance_redecided} "
        "chance draws re-decided, every event as the rules record it",
    ]
    if report.over and report.result is not None:
        where = f" (recorded at #{report.result_position})" if report.result_position else ""
        lines.append(f"  result       {_result_text(report.result)}{where}")
    elif report.result is not None:
        lines.append("  result       the game is still in progress")
    if report.problem is None:
        lines.append("OK: every check holds.")
    else:
        lines.append(f"FAILED at {report.problem}")
    return "\n".join(lines) + "\n"
