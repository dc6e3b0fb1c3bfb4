"""Random and malformed requests to every TableService RPC (project issue 5).

For each RPC, hypothesis sends at least 1,000 generated requests — junk and look-alike
table ids, odd request ids, seats and versions, every kind of move with bad cards,
wrong enums and the other game's moves, valid and broken tokens of every role — to one
real service (real socket, PostgreSQL and NATS), plus undecodable request bytes to every
method path. Every answer must be a success or a deliberate, typed refusal (a status
with an ErrorInfo reason): never INTERNAL/UNKNOWN (a handler crashed), never
DEADLINE_EXCEEDED/UNAVAILABLE (the service hung or died). A view that a GetTable or
WatchTable hands out must be for the seat the caller may see, with that seat's cards
only (`Arena.expect_allowed_view`). Afterwards the service must
still report SERVING and the prepared tables — one at each interesting phase of both
games — must be exactly as before: same version, same unredacted history.

Why a table may not change: a request that a correct service could accept is never
sent. The oracle (`Oracle.might_change`) errs on the side of "could be accepted": any
seat the caller may act for, any plausible request id, and every move the seat's view
lists as legal — or, where a view lists only some (discards, Khözör set leads and
beats), any distinct cards of the hand in a listed count. So every request the test
does send must be refused, and a table that changes anyway means that an illegal move
or a missed access check got through.

Requests are mostly plausible with one or two faults (`mostly`), so that they pass the
first checks and reach the deeper ones; a share of SubmitActions is aimed at the seat
whose turn it is (`aimed_submits`), so that bad moves meet the rules themselves.

How: hypothesis is synchronous, the service runs on pytest's event loop. Each test runs
hypothesis in a worker thread (`asyncio.to_thread`) and every example submits its call
to the loop (`run_coroutine_threadsafe`), so shrinking and the example database work as
usual.
"""

from __future__ import annotations

import asyncio
import base64
import json
import operator
from collections.abc import AsyncIterator, Callable, Coroutine, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any, TypeVar

import grpc
import jwt
import pytest
from google.protobuf.message import DecodeError, Message
from google.protobuf.timestamp_pb2 import Timestamp
from grpc_health.v1 import health_pb2, health_pb2_grpc
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from kozyr.api.common.v1 import cards_pb2, games_pb2
from kozyr.api.table.v1 import actions_pb2, views_pb2
from kozyr.api.table.v1 import table_service_pb2 as pb
from kozyr.api.table.v1 import table_service_pb2_grpc as pb_grpc
from kozyr.client import TableClient
from kozyr.games.cards import CardParseError, JokerColor, Rank, Suit, card, joker, parse_card
from kozyr.runtime.auth import Role, mint_token
from kozyr.runtime.errors import error_details
from kozyr.table.domain.seeding import is_client_seed
from kozyr.table.service import SERVICE_NAME
from tests.integration.table.conftest import RunningTableService
from tests.support.tables import JWT_KEY, token

pytestmark = pytest.mark.integration

EXAMPLES = 1_000
RAW_EXAMPLES = 300
FUZZ = settings(
    max_examples=EXAMPLES,
    deadline=None,
    suppress_health_check=[
        HealthCheck.function_scoped_fixture,
        HealthCheck.too_slow,
        HealthCheck.data_too_large,
        HealthCheck.large_base_example,
        HealthCheck.filter_too_much,
    ],
)
RAW_FUZZ = settings(FUZZ, max_examples=RAW_EXAMPLES)

CALL_SECONDS = 10.0
"""Client deadline of every call: running into it means the service hung."""
QUIET_SECONDS = 0.05
"""How long a watch that should wait silently is given to fail instead."""

REFUSALS = frozenset(
    {
        grpc.StatusCode.INVALID_ARGUMENT,
        grpc.StatusCode.NOT_FOUND,
        grpc.StatusCode.PERMISSION_DENIED,
        grpc.StatusCode.UNAUTHENTICATED,
        grpc.StatusCode.FAILED_PRECONDITION,
        grpc.StatusCode.ABORTED,
    }
)
"""The deliberate answers to a bad request (anything else is a crash, a hang or a gap)."""
MAX_DETAILS = 1_024
"""Longest acceptable status message. An error that echoes unbounded input overflows
gRPC's 8 KiB metadata limit (message + details in every language), and the caller gets
RESOURCE_EXHAUSTED instead of the error; below that it still ships the input back."""

THREE_FIVE_EIGHT_PLAYERS = ("ana", "bogdan", "chiara")
KHOZOR_PLAYERS = tuple(f"kz-{i}" for i in range(8))
PHASES = (
    (games_pb2.GAME_THREE_FIVE_EIGHT, THREE_FIVE_EIGHT_PLAYERS, "contract", 0),
    (games_pb2.GAME_THREE_FIVE_EIGHT, THREE_FIVE_EIGHT_PLAYERS, "discard", 0),
    (games_pb2.GAME_THREE_FIVE_EIGHT, THREE_FIVE_EIGHT_PLAYERS, "play", 1),
    (games_pb2.GAME_KHOZOR_TEAMS, KHOZOR_PLAYERS, "confirm_opener", 0),
    (games_pb2.GAME_KHOZOR_TEAMS, KHOZOR_PLAYERS, "lead", 0),
    (games_pb2.GAME_KHOZOR_TEAMS, KHOZOR_PLAYERS, "defend", 0),
)
"""The prepared tables: each game at each kind of turn (3-5-8 play: the second card of
a trick, which must follow suit), so bad moves meet every rule path."""

CONTRACTS = frozenset(range(1, 7))
SIGNALS = frozenset({1, 2})
SEAT_CONTROLS_THAT_CHANGE = frozenset({2, 3})  # COMPUTER, ABSENT (every seat is a PERSON)
CARD_CODES = tuple(
    [str(card(rank, suit)) for rank in Rank for suit in Suit]
    + [str(joker(colour)) for colour in JokerColor]
)

T = TypeVar("T")


# --------------------------------------------------------------------------- who calls


@dataclass(frozen=True)
class Caller:
    """One identity on the wire; `role` is None when the service must not authenticate it."""

    label: str
    authorization: str | None
    role: Role | None = None
    subject: str = ""
    extra: tuple[tuple[str, str], ...] = ()

    @property
    def metadata(self) -> tuple[tuple[str, str], ...]:
        auth = () if self.authorization is None else (("authorization", self.authorization),)
        return auth + self.extra


def _bearer(subject: str, role: Role) -> Caller:
    return Caller(f"{role.value}:{subject!r}", f"Bearer {token(subject, role)}", role, subject)


def _claims(**changes: object) -> dict[str, object]:
    now = int(datetime.now(UTC).timestamp())
    claims: dict[str, object] = {
        "iss": "kozyr",
        "sub": "mallory",
        "role": "admin",
        "iat": now,
        "exp": now + 3600,
    }
    claims.update(changes)
    return {k: v for k, v in claims.items() if v is not None}


def _unsigned(claims: dict[str, object]) -> str:
    """A token with `"alg": "none"`: servers must never let the token pick the algorithm."""

    def part(value: object) -> str:
        return base64.urlsafe_b64encode(json.dumps(value).encode()).rstrip(b"=").decode()

    return f"{part({'alg': 'none', 'typ': 'JWT'})}.{part(claims)}."


def _forged(label: str, encoded: str) -> Caller:
    return Caller(label, f"Bearer {encoded}")


def fixed_callers() -> tuple[tuple[Caller, ...], ...]:
    """Every role, seated or not, and tokens that must not authenticate — in groups."""
    other_key = "another-secret-another-secret-0123456789"
    long_ago = datetime.now(UTC) - timedelta(days=2)
    seated = [_bearer(p, Role.PLAYER) for p in THREE_FIVE_EIGHT_PLAYERS + KHOZOR_PLAYERS]
    unseated = [_bearer(s, Role.PLAYER) for s in ("stranger", "ана-😀", "x" * 500)]
    services = [_bearer("matchmaker", Role.SERVICE), _bearer("bots\x00", Role.SERVICE)]
    admins = [_bearer("moderator", Role.ADMIN), _bearer("mod\x00erator", Role.ADMIN)]
    refused = [
        Caller("anonymous", None),
        Caller("empty header", ""),
        Caller("bearer without token", "Bearer "),
        Caller("basic auth", "Basic YWxhZGRpbjpvcGVuc2VzYW1l"),
        _forged("wrong key", mint_token("moderator", Role.ADMIN, key=other_key)),
        _forged("expired", mint_token("ana", Role.PLAYER, key=JWT_KEY, now=long_ago)),
        _forged("alg none", _unsigned(_claims())),
        _forged("unknown role", jwt.encode(_claims(role="god"), JWT_KEY, algorithm="HS256")),
        _forged("role list", jwt.encode(_claims(role=["admin"]), JWT_KEY, algorithm="HS256")),
        _forged("blank subject", jwt.encode(_claims(sub=" "), JWT_KEY, algorithm="HS256")),
        _forged("no subject", jwt.encode(_claims(sub=None), JWT_KEY, algorithm="HS256")),
        _forged("wrong issuer", jwt.encode(_claims(iss="evil"), JWT_KEY, algorithm="HS256")),
    ]
    return tuple(tuple(group) for group in (seated, unseated, services, admins, refused))


HEADER_TEXT = st.text(st.characters(min_codepoint=0x20, max_codepoint=0x7E), max_size=80)
OPTIONAL_HEADER = st.none() | HEADER_TEXT.filter(lambda text: text.strip() == text)


def _with_headers(base: Caller, request_id: str | None, language: str | None) -> Caller:
    extra = [("x-request-id", request_id), ("accept-language", language)]
    headers = tuple((key, value) for key, value in extra if value is not None)
    return Caller(base.label, base.authorization, base.role, base.subject, headers)


def callers(groups: Sequence[Sequence[Caller]]) -> st.SearchStrategy[Caller]:
    """A known identity or garbage credentials, with random request-id/language headers."""
    known = st.one_of(*(st.sampled_from(group) for group in groups))
    base = mostly(
        known,
        st.builds(Caller, st.just("garbage"), HEADER_TEXT),
        st.builds(Caller, st.just("garbage bearer"), HEADER_TEXT.map("Bearer {}".format)),
    )
    return st.builds(_with_headers, base, OPTIONAL_HEADER, OPTIONAL_HEADER)


# --------------------------------------------------------------------------- the tables


Move = tuple[object, ...]
"""A move in a comparable form: its kind, then its cards (sorted, canonical) or value."""

CARD_MOVES = frozenset({"give_card", "play_card", "discard", "lead", "beat"})


def _codes(move: Any, kind: str) -> list[str]:
    if kind in ("give_card", "play_card"):
        return [move.card.code]
    return [c.code for c in move.cards]


def move_of(action: actions_pb2.Action) -> Move | None:
    """The comparable form of an action; None when it names no move or a non-card."""
    kind = action.WhichOneof("action")
    if kind is None:
        return None
    move = getattr(action, kind)
    if kind not in CARD_MOVES:
        values = [getattr(move, f.name) for f in move.DESCRIPTOR.fields]
        return (kind, *values)
    try:
        return (kind, *sorted(str(parse_card(code)) for code in _codes(move, kind)))
    except CardParseError:
        return None


@dataclass(frozen=True)
class Target:
    """A prepared table as it must stay: what each seat holds and may do right now."""

    table_id: str
    game: str
    seats: tuple[str, ...]
    version: int
    turn_number: int
    hands: tuple[frozenset[str], ...]
    legal: tuple[tuple[actions_pb2.Action, ...], ...]
    """The moves each seat's view lists (signals: only for the seats whose turn it is)."""
    history: tuple[pb.HistoryEvent, ...]

    def seat_of(self, subject: str) -> int | None:
        return self.seats.index(subject) if subject in self.seats else None

    def acting(self) -> list[int]:
        return [seat for seat, moves in enumerate(self.legal) if moves]


def _hand(view: views_pb2.TableView) -> frozenset[str]:
    hand = view.three_five_eight.hand if view.HasField("three_five_eight") else ()
    return frozenset(hand or view.khozor_teams.hand)


async def _open_at(
    service: TableClient,
    game: games_pb2.Game.ValueType,
    players: Sequence[str],
    kind: str,
    further: int,
) -> str:
    """A new table, its turns expired (default moves) until a `kind` turn is open, and
    then `further` turns more."""
    table_id = (await service.create_table(game, list(players))).table_id
    for _ in range(10):
        view = await service.get_table(table_id)
        if view.turn.kind == kind and further == 0:
            return table_id
        further -= view.turn.kind == kind
        await service.expire_turn(table_id, view.turn.number)
    raise AssertionError(f"no {kind} turn reached")


async def _snapshot(admin: TableClient, table_id: str, players: Sequence[str]) -> Target:
    views = [await admin.get_table(table_id, seat=seat) for seat in range(len(players))]
    return Target(
        table_id=table_id,
        game=views[0].WhichOneof("game_view") or "",
        seats=tuple(players),
        version=views[0].version,
        turn_number=views[0].turn.number,
        hands=tuple(_hand(view) for view in views),
        legal=tuple(tuple(view.legal_actions) for view in views),
        history=tuple(await admin.history(table_id)),
    )


# --------------------------------------------------------------------------- the oracle


def _may_name_a_request(request_id: str) -> bool:
    """Wider than the service's rule (1-128 printable ASCII): when in doubt, it is valid."""
    return 0 < len(request_id) <= 128 and request_id.isascii()


def _counts_listed_in_part(kind: str, listed: Sequence[Move]) -> frozenset[int]:
    """Card counts of `kind` that the view lists only in part, when `kind` is playable now.

    3-5-8 lists one discard of the many (any 4 cards of the hand); Khözör lists set leads
    (3 or 5 cards) and beats (as many cards as the attack) only up to a limit.
    """
    same = [m for m in listed if m[0] == kind]
    if not same:
        return frozenset()
    if kind == "discard":
        return frozenset({4})
    if kind == "lead":
        return frozenset({3, 5})
    if kind == "beat":
        return frozenset(len(m) - 1 for m in same)
    return frozenset()


def _may_be_legal(target: Target, seat: int, action: actions_pb2.Action) -> bool:
    """Whether a correct service could accept `action` from `seat` now.

    Exact where the view lists every legal move of that kind; where it lists only some,
    any distinct cards of the hand in a listed count might be legal. Any Khözör seat
    may toggle a signal at any time; only the views of seats whose turn it is list them.
    """
    kind = action.WhichOneof("action")
    move = move_of(action)
    if move is None:
        return False
    if kind == "toggle_signal" and not target.legal[seat]:
        return target.game == "khozor_teams" and action.toggle_signal.signal in SIGNALS
    listed = [m for m in map(move_of, target.legal[seat]) if m is not None]
    cards = move[1:]
    if kind in CARD_MOVES and len(cards) in _counts_listed_in_part(str(kind), listed):
        return set(cards) <= target.hands[seat] and len(set(cards)) == len(cards)
    return move in listed


@dataclass(frozen=True)
class Oracle:
    """Which requests a correct service could accept at the prepared tables."""

    targets: tuple[Target, ...]

    def resolve(self, table_id: str) -> Target | None:
        """The prepared table a table id names: only its one canonical spelling does
        (uppercase, braces, `urn:uuid:` or no hyphens name nothing)."""
        return next((t for t in self.targets if t.table_id == table_id), None)

    @staticmethod
    def acting_seat(caller: Caller, target: Target, requested: int | None) -> int | None:
        """The seat a caller may act for at `target` (RULES.md / DESIGN.md §6), or None."""
        if caller.role is Role.PLAYER:
            own = target.seat_of(caller.subject)
            return own if requested is None or requested == own else None
        if caller.role is Role.ADMIN and requested is not None:
            return requested if 0 <= requested < len(target.seats) else None
        return None  # services act only for computer seats: the prepared tables have none

    def submit_might_change(self, request: pb.SubmitActionRequest, caller: Caller) -> bool:
        target = self.resolve(request.table_id)
        if target is None or not _may_name_a_request(request.request_id):
            return False
        if request.HasField("expected_version") and request.expected_version != target.version:
            return False
        requested = request.seat if request.HasField("seat") else None
        seat = self.acting_seat(caller, target, requested)
        return seat is not None and _may_be_legal(target, seat, request.action)

    def expire_might_change(self, request: pb.ExpireTurnRequest, caller: Caller) -> bool:
        target = self.resolve(request.table_id)
        return (
            caller.role in (Role.SERVICE, Role.ADMIN)
            and target is not None
            and request.turn_number == target.turn_number
        )

    def control_might_change(self, request: pb.SetSeatControlRequest, caller: Caller) -> bool:
        target = self.resolve(request.table_id)
        return (
            caller.role in (Role.SERVICE, Role.ADMIN)
            and target is not None
            and _may_name_a_request(request.request_id)
            and 0 <= request.seat < len(target.seats)
            and request.control in SEAT_CONTROLS_THAT_CHANGE
        )

    def presence_might_change(self, request: pb.SetSeatPresenceRequest, caller: Caller) -> bool:
        target = self.resolve(request.table_id)
        return (
            caller.role in (Role.SERVICE, Role.ADMIN)
            and target is not None
            and _may_name_a_request(request.request_id)
            and 0 <= request.seat < len(target.seats)
            # any presence is news: a prepared table has recorded none (unknown)
        )

    def seed_might_change(self, request: pb.SetClientSeedRequest, caller: Caller) -> bool:
        """A seated player's well-formed client seed for any deal (the next one takes
        it); a service or admin may set only a computer seat's: the tables have none."""
        target = self.resolve(request.table_id)
        requested = request.seat if request.HasField("seat") else None
        return (
            caller.role is Role.PLAYER
            and target is not None
            and _may_name_a_request(request.request_id)
            and self.acting_seat(caller, target, requested) is not None
            and is_client_seed(request.client_seed)
            and request.deal_number >= 1
        )

    def might_change(self, method: str, request: Any, caller: Caller) -> bool:
        """Whether a request to `method` could change a prepared table."""
        if method == "SubmitAction":
            return self.submit_might_change(request, caller)
        if method == "ExpireTurn":
            return self.expire_might_change(request, caller)
        if method == "SetSeatControl":
            return self.control_might_change(request, caller)
        if method == "SetSeatPresence":
            return self.presence_might_change(request, caller)
        if method == "SetClientSeed":
            return self.seed_might_change(request, caller)
        return False  # reads, and CreateTable (a new table is another table)

    @staticmethod
    def shown_seat(
        caller: Caller, target: Target, requested: int | None
    ) -> tuple[bool, int | None]:
        """Whether `caller` may get a view of `target` when asking for `requested`, and
        the seat that view must be for (None: the spectator's).

        Players see their own seat (spectators: none) and may name only it; services and
        admins see the seat they name, the spectator's when they name none.
        """
        if caller.role is Role.PLAYER:
            own = target.seat_of(caller.subject)
            return requested is None or requested == own, own
        if caller.role in (Role.SERVICE, Role.ADMIN):
            in_range = requested is None or 0 <= requested < len(target.seats)
            return in_range, requested
        return False, None

    def watch_waits(self, request: pb.WatchTableRequest, caller: Caller) -> bool:
        """A watch that is up to date stays open and silent until the table changes."""
        target = self.resolve(request.table_id)
        return (
            caller.role is not None
            and target is not None
            and request.from_version >= target.version
        )


# --------------------------------------------------------------------------- strategies

EDGES = (-(2**63), -(2**31) - 1, -(2**31), -1, 0, 1, 2**31 - 1, 2**31, 2**63 - 1)
USUAL_SHARE = 4
"""`mostly` draws the usual value USUAL_SHARE times in USUAL_SHARE + 1."""


def mostly(usual: st.SearchStrategy[T], *odd: st.SearchStrategy[T]) -> st.SearchStrategy[T]:
    """Usually `usual`, sometimes one of `odd`.

    A request whose every field is wrong only ever meets the first check; with each
    field usually plausible, most requests carry one or two faults and reach the
    deeper checks (access, rules, the store).
    """
    fault = st.one_of(*odd)
    choice = st.sampled_from((True,) * USUAL_SHARE + (False,))
    return choice.flatmap(lambda is_usual: usual if is_usual else fault)


def huge_text(pieces: Sequence[str] = ("a", "ä", "🂡", "\x00", "-")) -> st.SearchStrategy[str]:
    return st.builds(operator.mul, st.sampled_from(pieces), st.integers(1_000, 100_000))


def numbers(near: Sequence[int] = (), bits: int = 64) -> st.SearchStrategy[int]:
    """Any value of a signed field of `bits`, its edges, and values right around `near`."""
    low, high = -(2 ** (bits - 1)), 2 ** (bits - 1) - 1
    close = {n + d for n in near for d in (-1, 0, 1)}
    special = sorted(v for v in {*EDGES, *close} if low <= v <= high)
    return st.one_of(st.integers(low, high), st.sampled_from(special))


INT32 = numbers(bits=32)
SEATS = mostly(st.integers(0, 7), st.integers(-2, 9), INT32)
OPTIONAL_SEAT = st.none() | SEATS
ENUMS = mostly(st.integers(0, 6), st.integers(-1, 9), INT32)
PRINTABLE_ASCII = st.characters(min_codepoint=0x21, max_codepoint=0x7E)


def spellings(table_id: str) -> list[str]:
    """The same UUID written other ways, and near misses."""
    return [
        table_id.upper(),
        f"{{{table_id}}}",
        f"urn:uuid:{table_id}",
        table_id.replace("-", ""),
        f" {table_id}",
        f"{table_id}\x00",
        table_id[:-1],
        table_id[:-1] + ("0" if table_id[-1] != "0" else "1"),
    ]


def table_ids(targets: Sequence[Target]) -> st.SearchStrategy[str]:
    return mostly(
        st.sampled_from([t.table_id for t in targets]),
        st.sampled_from([spelled for t in targets for spelled in spellings(t.table_id)]),
        st.uuids().map(str),
        st.text(max_size=40),
        st.just(""),
        huge_text(),
    )


REQUEST_IDS = mostly(
    st.text(PRINTABLE_ASCII, min_size=1, max_size=128),
    st.just(""),
    st.sampled_from([" ", "a b", "x" * 128, "x" * 129, "\x00", "é", "🂡"]),
    st.text(max_size=140),
    huge_text(),
)


def card_codes() -> st.SearchStrategy[str]:
    variants = [v for c in CARD_CODES for v in (c.lower(), f" {c} ", f"{c}x", c[:-1])]
    return mostly(
        st.sampled_from(CARD_CODES),
        st.sampled_from(variants),
        st.sampled_from(["", "10", "1OH", "ZZ", "JK", "JK-", "JK-pink", "♠A", "AS,KD"]),
        st.text(max_size=6),
        huge_text(),
    )


GAME_MOVES = {
    "three_five_eight": ("choose_contract", "give_card", "discard", "play_card"),
    "khozor_teams": ("confirm_opener", "lead", "beat", "pick_up", "toggle_signal"),
}


def moves(
    one: st.SearchStrategy[cards_pb2.Card], many: st.SearchStrategy[list[cards_pb2.Card]]
) -> dict[str, st.SearchStrategy[actions_pb2.Action]]:
    """Each member of the Action oneof, built from these card strategies."""
    a = actions_pb2
    return {
        "choose_contract": ENUMS.map(
            lambda c: a.Action(choose_contract=a.ChooseContract(contract=a.Contract.ValueType(c)))
        ),
        "give_card": one.map(lambda c: a.Action(give_card=a.GiveCard(card=c))),
        "discard": many.map(lambda cs: a.Action(discard=a.Discard(cards=cs))),
        "play_card": one.map(lambda c: a.Action(play_card=a.PlayCard(card=c))),
        "confirm_opener": SEATS.map(
            lambda s: a.Action(confirm_opener=a.ConfirmOpener(opener_seat=s))
        ),
        "lead": many.map(lambda cs: a.Action(lead=a.Lead(cards=cs))),
        "beat": many.map(lambda cs: a.Action(beat=a.Beat(cards=cs))),
        "pick_up": st.just(a.Action(pick_up=a.PickUp())),
        "toggle_signal": ENUMS.map(
            lambda s: a.Action(toggle_signal=a.ToggleSignal(signal=a.Signal.ValueType(s)))
        ),
    }


def actions() -> st.SearchStrategy[actions_pb2.Action]:
    """Every member of the Action oneof (and none, and cards unset), with random cards."""
    one = st.builds(cards_pb2.Card, code=card_codes())
    many = mostly(st.lists(one, min_size=1, max_size=5), st.lists(one, max_size=9))
    a = actions_pb2
    return st.one_of(
        st.just(a.Action()),
        st.just(a.Action(give_card=a.GiveCard())),
        st.just(a.Action(play_card=a.PlayCard())),
        *moves(one, many).values(),
    )


def hand_actions(target: Target, seat: int) -> st.SearchStrategy[actions_pb2.Action]:
    """Moves of the table's game made mostly of the seat's own cards: these meet the rules."""
    hand = sorted(target.hands[seat])
    one = st.builds(cards_pb2.Card, code=mostly(st.sampled_from(hand), card_codes()))
    many = st.lists(one, max_size=6)
    built = moves(one, many)
    return st.one_of(*(built[kind] for kind in GAME_MOVES[target.game]))


def _aimed(
    target: Target,
    who: tuple[Caller, int | None],
    request_id: str,
    expected: int | None,
    action: actions_pb2.Action,
) -> tuple[Caller, pb.SubmitActionRequest]:
    caller, seat = who
    request = pb.SubmitActionRequest(table_id=target.table_id, request_id=request_id, action=action)
    _optional(request, "seat", seat)
    return caller, _optional(request, "expected_version", expected)


def aimed_submits(
    targets: Sequence[Target],
) -> st.SearchStrategy[tuple[Caller, pb.SubmitActionRequest]]:
    """Moves by a seat whose turn it is (its player, or an admin for it), at its table."""
    admin = _bearer("moderator", Role.ADMIN)
    branches = []
    for target in targets:
        for seat in target.acting():
            player = _bearer(target.seats[seat], Role.PLAYER)
            branches.append(
                st.builds(
                    _aimed,
                    st.just(target),
                    st.sampled_from([(player, None), (player, seat), (admin, seat)]),
                    st.text(PRINTABLE_ASCII, min_size=1, max_size=16),
                    st.sampled_from([None, target.version]),
                    mostly(hand_actions(target, seat), actions()),
                )
            )
    return st.one_of(*branches)


M = TypeVar("M", bound=Message)


def _optional(message: M, name: str, value: int | None) -> M:
    if value is not None:
        setattr(message, name, value)
    return message


def submit_requests(targets: Sequence[Target]) -> st.SearchStrategy[pb.SubmitActionRequest]:
    versions = [t.version for t in targets]

    def build(
        table_id: str, request_id: str, expected: int | None, seat: int | None, **rest: Any
    ) -> pb.SubmitActionRequest:
        request = pb.SubmitActionRequest(table_id=table_id, request_id=request_id, **rest)
        _optional(request, "seat", seat)
        return _optional(request, "expected_version", expected)

    return st.builds(
        build,
        table_id=table_ids(targets),
        request_id=REQUEST_IDS,
        expected=mostly(st.none(), numbers(versions)),
        seat=mostly(st.none(), SEATS),
        action=actions(),
        language=mostly(st.integers(0, 3), INT32),
    )


def get_requests(targets: Sequence[Target]) -> st.SearchStrategy[pb.GetTableRequest]:
    return st.builds(
        lambda table_id, seat: _optional(pb.GetTableRequest(table_id=table_id), "seat", seat),
        table_ids(targets),
        OPTIONAL_SEAT,
    )


def watch_requests(targets: Sequence[Target]) -> st.SearchStrategy[pb.WatchTableRequest]:
    versions = [t.version for t in targets]
    return st.builds(
        lambda table_id, start, seat: _optional(
            pb.WatchTableRequest(table_id=table_id, from_version=start), "seat", seat
        ),
        table_ids(targets),
        mostly(st.integers(0, min(versions) - 1), numbers(versions)),
        OPTIONAL_SEAT,
    )


def history_requests(targets: Sequence[Target]) -> st.SearchStrategy[pb.GetHistoryRequest]:
    versions = [t.version for t in targets]
    return st.builds(
        lambda table_id, start, size, seat: _optional(
            pb.GetHistoryRequest(table_id=table_id, from_version=start, page_size=size),
            "seat",
            seat,
        ),
        table_ids(targets),
        numbers(versions),
        numbers([1, 200, 1000], bits=32),
        OPTIONAL_SEAT,
    )


def expire_requests(targets: Sequence[Target]) -> st.SearchStrategy[pb.ExpireTurnRequest]:
    return st.builds(
        pb.ExpireTurnRequest,
        table_id=table_ids(targets),
        turn_number=numbers([t.turn_number for t in targets]),
    )


def control_requests(targets: Sequence[Target]) -> st.SearchStrategy[pb.SetSeatControlRequest]:
    return st.builds(
        pb.SetSeatControlRequest,
        table_id=table_ids(targets),
        seat=SEATS,
        control=mostly(st.integers(0, 3), INT32),
        request_id=REQUEST_IDS,
    )


def presence_requests(
    targets: Sequence[Target],
) -> st.SearchStrategy[pb.SetSeatPresenceRequest]:
    return st.builds(
        pb.SetSeatPresenceRequest,
        table_id=table_ids(targets),
        seat=SEATS,
        online=st.booleans(),
        request_id=REQUEST_IDS,
    )


def seed_requests(targets: Sequence[Target]) -> st.SearchStrategy[pb.SetClientSeedRequest]:
    seeds = mostly(
        st.text(st.characters(min_codepoint=0x20, max_codepoint=0x7E), min_size=1, max_size=64),
        st.sampled_from(("", "x" * 65, "é", "\x00", "a\nb", "🂡")),
        huge_text(),
    )
    return st.builds(
        pb.SetClientSeedRequest,
        table_id=table_ids(targets),
        request_id=REQUEST_IDS,
        seat=st.none() | SEATS,
        deal_number=mostly(st.integers(0, 40), INT32),
        client_seed=seeds,
    )


PLAYER_IDS = mostly(
    st.text(PRINTABLE_ASCII, min_size=1, max_size=12),
    st.sampled_from(("", " ", "\x00", "a\nb", "x" * 128, "x" * 129, "😀", "ana", "ana ")),
    st.text(max_size=20),
    huge_text(),
)


LEVELS = mostly(st.integers(0, 3), INT32)


def seat_assignments() -> st.SearchStrategy[pb.SeatAssignment]:
    return mostly(
        st.builds(pb.SeatAssignment, player_id=PLAYER_IDS),
        st.just(pb.SeatAssignment(computer=True)),
        st.builds(pb.SeatAssignment, computer=st.just(True), level=LEVELS),
        st.builds(pb.SeatAssignment, player_id=PLAYER_IDS, level=LEVELS),
        st.just(pb.SeatAssignment(computer=False)),
        st.just(pb.SeatAssignment()),
    )


def options() -> st.SearchStrategy[dict[str, Message]]:
    seconds = mostly(st.integers(10, 3600), numbers([10, 180, 3600], bits=32))
    return st.one_of(
        st.just({}),
        st.builds(
            lambda must, turn: {
                "three_five_eight": pb.ThreeFiveEightOptions(must_trump=must, turn_seconds=turn)
            },
            st.booleans(),
            seconds,
        ),
        st.builds(lambda turn: {"khozor_teams": pb.KhozorTeamsOptions(turn_seconds=turn)}, seconds),
    )


def create_requests() -> st.SearchStrategy[pb.CreateTableRequest]:
    return st.builds(
        lambda request_id, game, seats, chosen, table: pb.CreateTableRequest(
            request_id=request_id, game=game, seats=seats, table=table, **chosen
        ),
        REQUEST_IDS,
        mostly(st.integers(1, 2), st.integers(-1, 4), INT32),
        mostly(
            st.one_of(*(st.lists(seat_assignments(), min_size=n, max_size=n) for n in (3, 8))),
            st.lists(seat_assignments(), max_size=10),
        ),
        options(),
        st.builds(
            pb.TableOptions,
            cover_after_seconds=mostly(st.integers(0, 3600), INT32),
            computer_level=LEVELS,
        ),
    )


UNDECODABLE = (
    b"\x0a\x02\xc3\x28",  # field 1 (a string): invalid UTF-8
    b"\x0a\x05ab",  # field 1: longer than the message
    b"\x10",  # field 2: a varint cut short
    b"\x10\x80\x80\x80\x80\x80\x80\x80\x80\x80\x80\x01",  # an 11-byte varint
    b"\x0b",  # a group that never ends
    b"\x0c",  # the end of a group never started
    b"\x0f",  # wire type 7 does not exist
    b"\xff\xff\xff\xff",
)


def _mangle(data: bytes, edits: Sequence[tuple[str, int, int]]) -> bytes:
    """`data` with bytes flipped, cut off, inserted or dropped at the given positions."""
    out = bytearray(data)
    for edit, position, value in edits:
        at = position % (len(out) + 1)
        if edit == "flip" and at < len(out):
            out[at] ^= value or 0xFF
        elif edit == "cut":
            del out[at:]
        elif edit == "insert":
            out.insert(at, value)
        elif edit == "drop" and at < len(out):
            del out[at]
    return bytes(out)


def raw_requests(valid: st.SearchStrategy[Message]) -> st.SearchStrategy[bytes]:
    """Request bytes: random, known-undecodable, and encoded requests mangled."""
    edit = st.tuples(
        st.sampled_from(("flip", "cut", "insert", "drop")),
        st.integers(0, 2**16),
        st.integers(0, 255),
    )
    encoded = valid.map(lambda message: message.SerializeToString())
    return st.one_of(
        st.binary(max_size=300),
        st.sampled_from(UNDECODABLE),
        st.builds(_mangle, encoded, st.lists(edit, min_size=1, max_size=4)),
    )


def list_requests(targets: Sequence[Target]) -> st.SearchStrategy[pb.ListTablesRequest]:
    """ListTables' filters: players, moments (odd ones too), states, page sizes, tokens."""
    moments = st.builds(
        Timestamp,
        seconds=numbers([0, 946_684_800, 1_800_000_000, 253_402_300_799]),
        nanos=mostly(st.integers(0, 999_999_999), INT32),
    )

    def request(
        player: str, since: Timestamp | None, state: int, size: int, token: str
    ) -> pb.ListTablesRequest:
        made = pb.ListTablesRequest(
            player_id=player,
            state=state,  # type: ignore[arg-type]
            page_size=size,
            page_token=token,
        )
        if since is not None:
            made.created_since.CopyFrom(since)
        return made

    return st.builds(
        request,
        st.just("") | PLAYER_IDS,
        st.none() | moments,
        ENUMS,
        numbers([0, 1, 50, 500], bits=32),
        mostly(st.just(""), st.text(max_size=80), huge_text()),
    )


REQUEST_TYPES: dict[str, type[Message]] = {
    "CreateTable": pb.CreateTableRequest,
    "GetTable": pb.GetTableRequest,
    "WatchTable": pb.WatchTableRequest,
    "SubmitAction": pb.SubmitActionRequest,
    "GetHistory": pb.GetHistoryRequest,
    "ExpireTurn": pb.ExpireTurnRequest,
    "SetSeatControl": pb.SetSeatControlRequest,
    "SetSeatPresence": pb.SetSeatPresenceRequest,
    "SetClientSeed": pb.SetClientSeedRequest,
    "ListTables": pb.ListTablesRequest,
}


def requests_of(method: str, targets: Sequence[Target]) -> st.SearchStrategy[Message]:
    """The structured request strategy of each method (what mangled bytes start from)."""
    if method == "CreateTable":
        return create_requests()
    made: dict[str, Callable[[Sequence[Target]], st.SearchStrategy[Any]]] = {
        "GetTable": get_requests,
        "WatchTable": watch_requests,
        "SubmitAction": submit_requests,
        "GetHistory": history_requests,
        "ExpireTurn": expire_requests,
        "SetSeatControl": control_requests,
        "SetSeatPresence": presence_requests,
        "SetClientSeed": seed_requests,
        "ListTables": list_requests,
    }
    return made[method](targets)


def decoded(method: str, raw: bytes) -> Message | None:
    """The request the service will see, or None when the bytes do not parse."""
    try:
        return REQUEST_TYPES[method].FromString(raw)
    except DecodeError:
        return None


# --------------------------------------------------------------------------- the arena


@dataclass(frozen=True)
class Outcome:
    """How a call ended: a status (None: a watch still open and silent) and its reason."""

    code: grpc.StatusCode | None
    reason: str | None = None
    details: str = ""
    view: views_pb2.TableView | None = None
    """The view a successful GetTable, or the first answer of a WatchTable, carried."""

    @classmethod
    def of(cls, error: grpc.aio.AioRpcError) -> Outcome:
        info = error_details(error)
        return cls(info.code, info.reason, info.message)


VIEW_REPLIES: dict[str, type[Any]] = {
    "GetTable": pb.GetTableResponse,
    "WatchTable": pb.WatchTableResponse,
}


def view_of(method: str, reply: object) -> views_pb2.TableView | None:
    """The view a reply of `method` carries (raw calls answer bytes), None for others."""
    kind = VIEW_REPLIES.get(method)
    if kind is None:
        return None
    message: Any = kind.FromString(reply) if isinstance(reply, bytes) else reply
    view: views_pb2.TableView = message.view
    return view


def _shown(request: object) -> str:
    text = repr(request)
    return text if len(text) < 2_000 else f"{text[:2_000]}… ({len(text)} characters)"


@dataclass
class Arena:
    """The prepared tables of one running service, and calls to it from hypothesis."""

    loop: asyncio.AbstractEventLoop
    channel: grpc.aio.Channel
    stub: pb_grpc.TableServiceStub
    admin: TableClient
    oracle: Oracle
    callers: st.SearchStrategy[Caller]
    calls: int = 0

    @property
    def targets(self) -> tuple[Target, ...]:
        return self.oracle.targets

    def run(self, work: Coroutine[Any, Any, T]) -> T:
        """Run `work` on the service's loop from hypothesis's thread."""
        return asyncio.run_coroutine_threadsafe(work, self.loop).result(CALL_SECONDS * 2)

    def call(self, method: str, request: Message, caller: Caller) -> Outcome:
        outcome = self.run(self._unary(getattr(self.stub, method), request, caller, method))
        self.expect_deliberate(method, outcome, request)
        self.expect_allowed_view(method, request, caller, outcome)
        return outcome

    def call_raw(self, method: str, raw: bytes, caller: Caller, waits: bool) -> Outcome:
        path = f"/{SERVICE_NAME}/{method}"
        if method == "WatchTable":
            outcome = self.run(
                self._first_view(self.channel.unary_stream(path), raw, caller, waits)
            )
        else:
            outcome = self.run(self._unary(self.channel.unary_unary(path), raw, caller, method))
        self.expect_deliberate(method, outcome, raw)
        request = decoded(method, raw)
        if request is not None:
            self.expect_allowed_view(method, request, caller, outcome)
        return outcome

    def watch(self, request: pb.WatchTableRequest, caller: Caller, waits: bool) -> Outcome:
        outcome = self.run(self._first_view(self.stub.WatchTable, request, caller, waits))
        self.expect_deliberate("WatchTable", outcome, request)
        self.expect_allowed_view("WatchTable", request, caller, outcome)
        return outcome

    @staticmethod
    async def _unary(method: Any, request: Any, caller: Caller, name: str) -> Outcome:
        try:
            reply = await method(request, metadata=caller.metadata, timeout=CALL_SECONDS)
        except grpc.aio.AioRpcError as error:
            return Outcome.of(error)
        return Outcome(grpc.StatusCode.OK, view=view_of(name, reply))

    @staticmethod
    async def _first_view(method: Any, request: Any, caller: Caller, waits: bool) -> Outcome:
        """The stream's first answer; a watch that `waits` only gets a moment to fail."""
        call = method(request, metadata=caller.metadata, timeout=CALL_SECONDS)
        try:
            async with asyncio.timeout(QUIET_SECONDS if waits else CALL_SECONDS):
                first = await call.read()
        except TimeoutError:
            return Outcome(None)
        except grpc.aio.AioRpcError as error:
            return Outcome.of(error)
        finally:
            call.cancel()
        if first is grpc.aio.EOF:
            return Outcome(grpc.StatusCode.OK, "STREAM_ENDED_WITHOUT_A_VIEW")
        return Outcome(grpc.StatusCode.OK, view=view_of("WatchTable", first))

    def expect_deliberate(self, method: str, outcome: Outcome, request: object) -> None:
        """A success or a typed refusal (a silent watch is judged by the caller)."""
        self.calls += 1
        if outcome.code is None:
            return
        if outcome.code is grpc.StatusCode.OK:
            assert outcome.reason is None, f"{method}: the stream ended at once: {_shown(request)}"
            return
        assert outcome.code in REFUSALS, (
            f"{method} → {outcome.code.name} {outcome.details!r} for {_shown(request)}"
        )
        assert outcome.reason, (
            f"{method} → {outcome.code.name} without ErrorInfo: {_shown(request)}"
        )
        assert len(outcome.details) <= MAX_DETAILS, (
            f"{method}: a {len(outcome.details)}-character error message for {_shown(request)}"
        )

    def expect_allowed_view(
        self, method: str, request: Any, caller: Caller, outcome: Outcome
    ) -> None:
        """A view handed out is one this caller may see: the seat he may ask for, with
        that seat's cards (a spectator's: none) — never another seat's."""
        if outcome.view is None:
            return
        view = outcome.view
        target = self.oracle.resolve(request.table_id)
        assert target is not None, f"{method} answered for no table: {_shown(request)}"
        assert view.table_id == target.table_id, f"{method}: another table's view"
        requested = request.seat if request.HasField("seat") else None
        allowed, seat = self.oracle.shown_seat(caller, target, requested)
        shown = view.seat if view.HasField("seat") else None
        assert allowed, f"{method}: {caller.label} got seat {shown}'s view: {_shown(request)}"
        assert shown == seat, f"{method}: {caller.label} got seat {shown}'s view, not {seat}'s"
        hand = target.hands[seat] if seat is not None else frozenset()
        assert _hand(view) == hand, f"{method}: {caller.label} was shown other cards"

    async def fuzz(self, body: Callable[[], None], examples: int = EXAMPLES) -> None:
        """Run a hypothesis test in a worker thread, then check nothing was harmed."""
        await asyncio.to_thread(body)
        assert self.calls >= examples, f"only {self.calls} requests were sent"
        await self.expect_healthy_and_untouched()

    async def expect_healthy_and_untouched(self) -> None:
        health = health_pb2_grpc.HealthStub(self.channel)
        answer = await health.Check(health_pb2.HealthCheckRequest(service=SERVICE_NAME))
        assert answer.status == health_pb2.HealthCheckResponse.SERVING
        for target in self.targets:
            view = await self.admin.get_table(target.table_id)
            assert view.version == target.version, f"{target.game} table {target.table_id} moved"
            assert tuple(await self.admin.history(target.table_id)) == target.history


@pytest.fixture
async def arena(table_service: RunningTableService) -> AsyncIterator[Arena]:
    service = TableClient(table_service.target, token("matchmaker", Role.SERVICE))
    admin = TableClient(table_service.target, token("moderator", Role.ADMIN))
    targets = []
    for game, players, kind, further in PHASES:
        table_id = await _open_at(service, game, players, kind, further)
        targets.append(await _snapshot(admin, table_id, players))
    await service.close()
    channel = grpc.aio.insecure_channel(table_service.target)
    yield Arena(
        loop=asyncio.get_running_loop(),
        channel=channel,
        stub=pb_grpc.TableServiceStub(channel),
        admin=admin,
        oracle=Oracle(tuple(targets)),
        callers=callers(fixed_callers()),
    )
    await channel.close()
    await admin.close()


# --------------------------------------------------------------------------- the tests


def expect_watch(outcome: Outcome, waits: bool, request: object) -> None:
    """An up-to-date watch stays silent (no duplicate view); any other answers at once."""
    if waits:
        assert outcome.code is not grpc.StatusCode.OK, f"a view nobody missed: {request!r}"
    else:
        assert outcome.code is not None, f"WatchTable hung: {_shown(request)}"


async def test_create_table_refuses_random_requests_cleanly(arena: Arena) -> None:
    @FUZZ
    @given(caller=arena.callers, request=create_requests())
    def one(caller: Caller, request: pb.CreateTableRequest) -> None:
        arena.call("CreateTable", request, caller)

    await arena.fuzz(one)


async def test_get_table_refuses_random_requests_cleanly(arena: Arena) -> None:
    @FUZZ
    @given(caller=arena.callers, request=get_requests(arena.targets))
    def one(caller: Caller, request: pb.GetTableRequest) -> None:
        arena.call("GetTable", request, caller)

    await arena.fuzz(one)


async def test_watch_table_refuses_random_requests_cleanly(arena: Arena) -> None:
    @FUZZ
    @given(caller=arena.callers, request=watch_requests(arena.targets))
    def one(caller: Caller, request: pb.WatchTableRequest) -> None:
        waits = arena.oracle.watch_waits(request, caller)
        outcome = arena.watch(request, caller, waits)
        expect_watch(outcome, waits, request)

    await arena.fuzz(one)


async def test_submit_action_refuses_random_requests_cleanly(arena: Arena) -> None:
    anyone = st.tuples(arena.callers, submit_requests(arena.targets))

    @FUZZ
    @given(st.one_of(anyone, aimed_submits(arena.targets)))
    def one(call: tuple[Caller, pb.SubmitActionRequest]) -> None:
        caller, request = call
        assume(not arena.oracle.submit_might_change(request, caller))
        arena.call("SubmitAction", request, caller)

    await arena.fuzz(one)


async def test_get_history_refuses_random_requests_cleanly(arena: Arena) -> None:
    @FUZZ
    @given(caller=arena.callers, request=history_requests(arena.targets))
    def one(caller: Caller, request: pb.GetHistoryRequest) -> None:
        arena.call("GetHistory", request, caller)

    await arena.fuzz(one)


async def test_expire_turn_refuses_random_requests_cleanly(arena: Arena) -> None:
    @FUZZ
    @given(caller=arena.callers, request=expire_requests(arena.targets))
    def one(caller: Caller, request: pb.ExpireTurnRequest) -> None:
        assume(not arena.oracle.expire_might_change(request, caller))
        arena.call("ExpireTurn", request, caller)

    await arena.fuzz(one)


async def test_set_seat_control_refuses_random_requests_cleanly(arena: Arena) -> None:
    @FUZZ
    @given(caller=arena.callers, request=control_requests(arena.targets))
    def one(caller: Caller, request: pb.SetSeatControlRequest) -> None:
        assume(not arena.oracle.control_might_change(request, caller))
        arena.call("SetSeatControl", request, caller)

    await arena.fuzz(one)


async def test_set_seat_presence_refuses_random_requests_cleanly(arena: Arena) -> None:
    @FUZZ
    @given(caller=arena.callers, request=presence_requests(arena.targets))
    def one(caller: Caller, request: pb.SetSeatPresenceRequest) -> None:
        assume(not arena.oracle.presence_might_change(request, caller))
        arena.call("SetSeatPresence", request, caller)

    await arena.fuzz(one)


async def test_set_client_seed_refuses_random_requests_cleanly(arena: Arena) -> None:
    @FUZZ
    @given(caller=arena.callers, request=seed_requests(arena.targets))
    def one(caller: Caller, request: pb.SetClientSeedRequest) -> None:
        assume(not arena.oracle.seed_might_change(request, caller))
        arena.call("SetClientSeed", request, caller)

    await arena.fuzz(one)


async def test_list_tables_refuses_random_requests_cleanly(arena: Arena) -> None:
    @FUZZ
    @given(caller=arena.callers, request=list_requests(arena.targets))
    def one(caller: Caller, request: pb.ListTablesRequest) -> None:
        arena.call("ListTables", request, caller)

    await arena.fuzz(one)


@pytest.mark.parametrize("method", list(REQUEST_TYPES))
async def test_undecodable_and_mangled_bytes_are_refused_cleanly(arena: Arena, method: str) -> None:
    @RAW_FUZZ
    @given(caller=arena.callers, raw=raw_requests(requests_of(method, arena.targets)))
    def one(caller: Caller, raw: bytes) -> None:
        request = decoded(method, raw)
        assume(request is None or not arena.oracle.might_change(method, request, caller))
        waits = isinstance(request, pb.WatchTableRequest) and arena.oracle.watch_waits(
            request, caller
        )
        outcome = arena.call_raw(method, raw, caller, waits)
        if method == "WatchTable":
            expect_watch(outcome, waits, raw)

    await arena.fuzz(one, RAW_EXAMPLES)
