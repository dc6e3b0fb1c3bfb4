"""3-5-8 at the `hard` level (its `GameInfo.levels`' `Searcher`): PIMC
(`kozyr.games.search`) on the pure engine, from neutral data — the seat's view as the
game's view dict, the moves it lists, its redacted history (`kozyr.games.info.Decision`).

What the seat knows (`Facts`, from its view and its redacted history of the deal):
its own cards; every card played (so the suits a seat showed it lacks — with
`must_trump` a seat that threw a side card also lacks trumps); the exchange steps it
took part in (the card it gave stays with the receiver unless it came back, the card
returned is the receiver's highest of that suit, so the receiver holds nothing of that
suit above it; a card returned to a giver is in the giver's hand while he gives no
more); the talon and its discards when it declared. The sampler deals every other card
to the other hands, the untaken talon and the unseen discards at random, never where
the seat knows a card cannot be (`sample`, tested).

Decisions searched: the card to play, the discard (a handful of candidate discards:
the normal one and voids of each short side suit), the card to give (the lowest of
each suit) and the contract. A world is played out to the deal's end by `normal` for
every seat; a move is worth the seat's points of the deal. A contract is worth its
points now minus what the same contract is worth on an average later hand
(`CONTRACT_LATER`, the schedule: every contract must be declared once).
"""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from kozyr.games.cards import Card, Suit, parse_card
from kozyr.games.info import Decision, HistoryEntry, Move
from kozyr.games.search import pimc
from kozyr.games.three_five_eight import computer as normal358
from kozyr.games.three_five_eight import rules
from kozyr.games.three_five_eight.model import (
    DECK,
    FIRST_LOOK,
    SEATS,
    ChooseContract,
    Command,
    Contract,
    DealScored,
    DealState,
    Discard,
    GiveCard,
    Options,
    Phase,
    PlayCard,
    State,
    Transfer,
    TrickTaken,
)
from kozyr.games.three_five_eight.ranking import low_key, strength
from kozyr.games.three_five_eight.transitions import evolve

CONTRACT_LATER = {
    **dict.fromkeys((Contract.SPADES, Contract.HEARTS, Contract.DIAMONDS, Contract.CLUBS), -0.73),
    Contract.NO_TRUMP: -2.34,
    Contract.MINIMUM_TRICKS: -0.17,
}
"""A declarer's mean points with each contract when every seat plays `normal` (its
contract choice included), measured with `contract_baselines` of
tests/support/tournament.py over 600 games (1,800 deals per contract, ± 0.12; the four
suits pooled): what keeping the contract for a later deal is worth."""

NO_CAP = 99
Step = tuple[int, int, Card | None, Card | None]
"""An exchange step as this seat saw it: giver, receiver, given, returned (None: unseen)."""


@dataclass(frozen=True)
class Facts:
    """Everything one 3-5-8 seat knows about where the cards are."""

    seat: int
    hand: tuple[Card, ...]
    hidden_own: int
    played: frozenset[Card]
    out: frozenset[Card]
    voids: tuple[frozenset[Suit], ...]
    caps: tuple[dict[Suit, int], ...]
    known: tuple[frozenset[Card], ...]
    pinned: dict[Card, int]
    """Cards known to be in this declarer's hand or among his discards."""
    counts: tuple[int, ...]
    talon_slots: int
    discard_slots: int


def _cards(texts: Sequence[str] | None) -> tuple[Card, ...]:
    return tuple(parse_card(t) for t in texts or ())


def facts(view: Mapping[str, Any], me: int, history: Sequence[HistoryEntry]) -> Facts:
    """What seat `me` knows, from its view and its redacted events of the deal."""
    hand = _cards(view.get("hand"))
    trump = Suit(view["trump"]) if view.get("trump") is not None else None
    must_trump = bool(_field(view, "options", {}).get("must_trump"))
    plays: list[tuple[int, Card]] = []
    holders: list[dict[Card, int]] = []  # exchange cards seen going to a seat
    caps: list[dict[Suit, int]] = [{} for _ in range(SEATS)]
    steps: list[Step] = []
    out: set[Card] = set()
    for kind, data in history:
        if kind == "CardPlayed":
            plays.append((int(data["seat"]), parse_card(data["card"])))
        elif kind == "CardExchanged":
            given = parse_card(data["given"]) if data.get("given") else None
            back = parse_card(data["returned"]) if data.get("returned") else None
            steps.append((int(data["giver"]), int(data["receiver"]), given, back))
        elif kind == "CardsDiscarded" and data.get("cards"):
            out.update(_cards(data["cards"]))
    if view.get("discards"):
        out.update(_cards(view["discards"]))
    # the view is the authority on the trick on the table (the history may lag)
    plays = plays[: len(plays) - len(plays) % SEATS]
    plays.extend((int(t["seat"]), parse_card(t["card"])) for t in _field(view, "trick", ()))
    voids: list[set[Suit]] = [set() for _ in range(SEATS)]
    for start in range(0, len(plays), SEATS):
        trick = plays[start : start + SEATS]
        led = trick[0][1].suit
        for seat, card in trick[1:]:
            if card.suit is not led and led is not None:
                voids[seat].add(led)
                if must_trump and trump is not None and card.suit is not trump:
                    voids[seat].add(trump)
    for index, (giver, receiver, given, back) in enumerate(steps):
        if given is None or back is None or given.suit is None:
            continue
        if giver == me:
            caps[receiver][given.suit] = min(caps[receiver].get(given.suit, NO_CAP), strength(back))
            if back != given and not _moves_on(steps[index + 1 :], receiver, me):
                holders.append({given: receiver})
        elif receiver == me and back != given and not _moves_on(steps[index + 1 :], giver, me):
            holders.append({back: giver})
    last_trick = _field(view, "last_trick", {}).get("cards") or ()
    played = frozenset((*(c for _, c in plays), *(parse_card(t["card"]) for t in last_trick)))
    held: list[set[Card]] = [set() for _ in range(SEATS)]
    for holding in holders:
        for card, seat in holding.items():
            for other in held:
                other.discard(card)
            held[seat].add(card)
    for seat in range(SEATS):
        held[seat] -= played | set(hand) | out
    held[me] = set()
    counts = _ints(view.get("hand_counts")) or (0,) * SEATS
    hidden_own = max(0, counts[me] - len(hand)) if counts else 0
    declarer = int(_field(view, "declarer", -1))
    pinned: dict[Card, int] = {}
    if declarer != me and declarer >= 0 and view.get("phase") in ("discard", "play"):
        caps[declarer] = {}  # the talon came after the exchange: any card may be in it
        if view.get("discard_count"):  # what he got may be among his discards
            pinned = dict.fromkeys(held[declarer], declarer)
            held[declarer] = set()
    return Facts(
        seat=me,
        hand=hand,
        hidden_own=hidden_own,
        played=played,
        out=frozenset(out),
        voids=tuple(frozenset(v) for v in voids),
        caps=tuple(caps),
        known=tuple(frozenset(k) for k in held),
        pinned=pinned,
        counts=counts,
        talon_slots=int(_field(view, "talon_count", 0)),
        discard_slots=int(_field(view, "discard_count", 0)) if declarer != me else 0,
    )


def _moves_on(later: Sequence[Step], seat: int, me: int) -> bool:
    """Whether `seat` takes part in a later exchange step this seat does not see: a
    card it holds may then have moved on (a receiver's return to the second giver)."""
    return any(seat in (g, r) and me not in (g, r) for g, r, _, _ in later)


@dataclass(frozen=True)
class Deal:
    """One determinization: every hand, the talon and the discards."""

    hands: tuple[tuple[Card, ...], ...]
    talon: tuple[Card, ...]
    discards: tuple[Card, ...]


TALON, DISCARDS, LOST = SEATS, SEATS + 1, SEATS + 2


def allowed(f: Facts, card: Card, slot: int) -> bool:
    """Whether the seat's knowledge lets `card` lie in `slot` (a seat, or a pile)."""
    if card in f.pinned:
        return slot in (f.pinned[card], DISCARDS)
    if slot >= SEATS or slot == f.seat:
        return True
    if card.suit in f.voids[slot]:
        return False
    assert card.suit is not None
    return strength(card) < f.caps[slot].get(card.suit, NO_CAP)


def sample(f: Facts, rng: random.Random, tries: int = 20) -> Deal | None:
    """A deal consistent with the facts, about uniform among them; None if the random
    placement kept running into dead ends (rare: only voids and caps constrain it)."""
    placed = f.played | f.out | set(f.hand) | {c for k in f.known for c in k}
    unknown = [c for c in DECK if c not in placed]
    need = [0] * (SEATS + 3)
    for seat in range(SEATS):
        need[seat] = f.hidden_own if seat == f.seat else f.counts[seat] - len(f.known[seat])
    need[TALON] = f.talon_slots
    need[DISCARDS] = f.discard_slots
    need[LOST] = len(unknown) - sum(need)
    if min(need) < 0:
        return None
    for _ in range(tries):
        deal = _place(f, unknown, list(need), rng)
        if deal is not None:
            return deal
    return None


def _place(f: Facts, unknown: list[Card], need: list[int], rng: random.Random) -> Deal | None:
    cards = list(unknown)
    rng.shuffle(cards)
    options = {c: [s for s in range(len(need)) if allowed(f, c, s)] for c in cards}
    cards.sort(key=lambda c: len(options[c]))
    slots: list[list[Card]] = [[] for _ in need]
    for card in cards:
        open_slots = [s for s in options[card] if need[s] > 0]
        if not open_slots:
            return None
        slot = rng.choices(open_slots, weights=[need[s] for s in open_slots])[0]
        slots[slot].append(card)
        need[slot] -= 1
    hands = []
    for seat in range(SEATS):
        if seat == f.seat:
            hands.append((*f.hand, *slots[seat]))
        else:
            hands.append((*sorted(f.known[seat], key=low_key), *slots[seat]))
    return Deal(tuple(hands), tuple(slots[TALON]), tuple(slots[DISCARDS]))


# ----------------------------------------------------------- worlds and rollouts


def world(view: Mapping[str, Any], me: int, deal: Deal) -> State:
    """The engine state of seat `me`'s view with `deal`'s cards in the hidden places
    (a field the view leaves unset reads as its proto default, as it always has)."""
    phase = Phase(_field(view, "phase", ""))
    contract = Contract(view["contract"]) if view.get("contract") is not None else None
    declarer = int(_field(view, "declarer", 0))
    discards = _cards(view["discards"]) if view.get("discards") else deal.discards
    exchange = _field(view, "exchange", {})
    legs = exchange.get("transfers") or ()
    transfers = tuple(Transfer(int(t["giver"]), int(t["receiver"]), int(t["count"])) for t in legs)
    current = int(_field(exchange, "current", len(transfers)))
    done = int(legs[current]["given"]) if current < len(transfers) else 0
    hands = deal.hands
    if phase is Phase.CONTRACT:  # the six seen cards first: the engine deals in order
        seen = _cards(view.get("hand"))
        hands = tuple(
            (*seen, *(c for c in h if c not in seen)) if s == me else h for s, h in enumerate(hands)
        )
    d = DealState(
        number=int(_field(view, "deal_number", 0)),
        dealer=int(_field(view, "dealer", 0)),
        commitment="",
        seed=b"",
        hands=hands,
        talon=deal.talon if phase in (Phase.CONTRACT, Phase.EXCHANGE) else (),
        contract=contract,
        transfers=transfers,
        transfer_index=current,
        transfer_done=done,
        talon_taken=phase in (Phase.DISCARD, Phase.PLAY),
        discards=discards if phase is Phase.PLAY else (),
        leader=int(_field(view, "trick_leader", declarer)),
        trick=tuple(parse_card(t["card"]) for t in _field(view, "trick", ())),
        completed=tuple(
            TrickTaken(i + 1, 0, 0, ()) for i in range(int(_field(view, "tricks_played", 0)))
        ),
        tricks=_ints(view.get("tricks")) or (0, 0, 0),
    )
    records = tuple(
        DealScored(
            int(_field(r, "deal", 0)),
            int(_field(r, "dealer", 0)),
            Contract(_field(r, "contract", "")),
            _ints(r.get("targets")),
            _ints(r.get("tricks")),
            _ints(r.get("points")),
            (0, 0, 0),
        )
        for r in _field(view, "deal_scores", ())
    )
    used = tuple(
        frozenset(Contract(c) for c in _field(row, "contracts", ()))
        for row in _field(view, "contracts_used", ())
    )
    return State(
        options=Options(must_trump=bool(_field(view, "options", {}).get("must_trump"))),
        phase=phase,
        turn_number=int(_field(_field(view, "turn", {}), "number", 0)),
        first_dealer=int(_field(view, "first_dealer", 0)),
        used=used or (frozenset(), frozenset(), frozenset()),
        records=records,
        totals=_ints(view.get("totals")) or (0, 0, 0),
        deal=d,
    )


def _ints(values: Sequence[Any] | None) -> tuple[int, ...]:
    return tuple(int(v) for v in values or ())


def _field(data: Mapping[str, Any], key: str, default: Any) -> Any:
    """A view's field, `default` where it is unset: absent (the wire's JSON) or None
    (the engine's own view dict)."""
    value = data.get(key)
    return default if value is None else value


def policy(state: State, seat: int) -> Command:
    """`normal` on an engine state: the rollouts' move for every seat."""
    d = state.deal
    assert d is not None
    hand = d.hands[seat]
    phase = state.phase
    if phase is Phase.PLAY:
        assert d.contract is not None
        legal = rules.playable(d, hand, state.options.must_trump)
        return PlayCard(seat, normal358.play_card(legal, hand, d.trick, d.contract))
    if phase is Phase.DISCARD:
        assert d.contract is not None
        return Discard(seat, normal358.discard_cards(hand, d.contract))
    if phase is Phase.EXCHANGE:
        giveable = [c for c in hand if c.suit is not d.trump]
        return GiveCard(seat, normal358.give_card(giveable, hand))
    unused = [c for c in Contract if c not in state.used[seat]]
    return ChooseContract(seat, normal358.choose_contract(unused, hand[:FIRST_LOOK]))


def outcome(state: State, command: Command, seat: int) -> int:
    """The seat's points of the deal: `command` now, then `normal` for everybody."""
    while True:
        for event in rules.decide(state, command):
            if isinstance(event, DealScored):
                return event.points[seat]
            state = evolve(state, event)
        acting = rules.acting_seat(state)
        assert acting is not None, "a deal ends with its scoring"
        command = policy(state, acting)


# -------------------------------------------------------------------- candidates


def _discard_candidates(hand: Sequence[Card], contract: Contract) -> list[tuple[Card, ...]]:
    found = [normal358.discard_cards(hand, contract)]
    trump = contract.trump
    lengths = Counter(c.suit for c in hand)
    lowest = sorted((c for c in hand if c.suit is not trump), key=low_key)
    for suit, n in sorted(lengths.items(), key=lambda kv: kv[1]):
        if suit is trump or n > 4:
            continue
        void = [c for c in hand if c.suit is suit]
        found.append(tuple([*void, *(c for c in lowest if c not in void)][:4]))
    found.append(tuple(sorted(hand, key=low_key, reverse=True)[:4]))
    found.append(tuple(lowest[:4]))
    unique: list[tuple[Card, ...]] = []
    for cards in found:
        if len(cards) == 4 and frozenset(cards) not in {frozenset(u) for u in unique}:
            unique.append(cards)
    return unique


def choose(decision: Decision) -> Move:
    """The hard move: the normal one unless the search finds a better one."""
    view, moves, me = decision.view, decision.moves, decision.seat
    fallback = normal358.normal(view, moves)
    kind = moves[0][0]
    hand = _cards(view.get("hand"))
    actions: list[Move]
    commands: list[Command]
    if kind == "play_card" or kind == "give_card":
        if len(moves) == 1:
            return moves[0]
        ordered = [fallback, *(m for m in moves if m != fallback)]
        if kind == "give_card":  # the lowest card of each suit is enough
            per_suit: dict[Suit | None, Move] = {}
            for m in sorted(moves[1:], key=lambda m: low_key(normal358.move_card(m))):
                per_suit.setdefault(normal358.move_card(m).suit, m)
            ordered = [fallback, *(m for m in per_suit.values() if m != fallback)]
        actions = ordered
        commands = [
            PlayCard(me, normal358.move_card(a))
            if kind == "play_card"
            else GiveCard(me, normal358.move_card(a))
            for a in actions
        ]
    elif kind == "discard":
        discards = _discard_candidates(hand, Contract(_field(view, "contract", "")))
        actions = [normal358.discard_move(c) for c in discards]
        commands = [Discard(me, c) for c in discards]
    elif kind == "choose_contract":
        unused = [normal358.contract_of(a) for a in moves]
        if len(unused) == 1:
            return moves[0]
        first = normal358.contract_of(fallback)
        contracts = [first, *(c for c in unused if c is not first)]
        actions = [normal358.contract_move(c) for c in contracts]
        commands = [ChooseContract(me, c) for c in contracts]
    else:
        return fallback
    f = facts(view, me, decision.history)
    rng = random.Random(decision.seed)

    def draw(r: random.Random) -> State | None:
        deal = sample(f, r)
        return None if deal is None else world(view, me, deal)

    def value(state: State, command: Command) -> float:
        points = outcome(state, command, me)
        if isinstance(command, ChooseContract):
            return points - CONTRACT_LATER[command.contract]
        return points

    found = pimc(commands, draw, value, decision, rng)
    return actions[found.best]
