"""Property tests: whole random 3-5-8 games keep every invariant at every step.

One walk per example plays a full game (18 deals) with random legal moves, mixed
with the clock's default moves, and checks after every command:

* 52 cards conserved (hands, talon, discards, current trick, finished tricks);
* the turn number grows by exactly one per command; the turn names the acting seat;
* the default move is legal (decide accepts it, legal_commands lists it);
* no view and no redacted event holds a card the seat may not know, or the seed of
  a deal that has not ended ("knowledge" below is the RULES.md spec, tracked from
  the unredacted events independently of `views.py`);
* every event survives the JSON codec.

And at the end: 18 deals scored, each summing to 0; fold(events) == the stepped state.

A second walk tries, at random positions and at the first of each kind of turn, every
command `legal_commands` leaves out — every contract and every card for every seat (and
seats out of range), discards around each hand, the chance commands — and expects
`decide` to refuse each with a RuleError: a rule dropped from `decide` but kept in
`legal_commands` (e.g. following suit) cannot pass unseen.
"""

from __future__ import annotations

import json
import random
import re
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import kozyr.games.three_five_eight as game
from kozyr.games.cards import Card
from kozyr.games.codec import decode_event, encode_event, registry_of
from kozyr.games.errors import RuleError
from kozyr.games.three_five_eight import (
    DECK,
    CardExchanged,
    CardPlayed,
    CardsDealt,
    ChooseContract,
    Command,
    Contract,
    DealCards,
    DealScored,
    DealSeedRevealed,
    Discard,
    DrawFirstDealer,
    Event,
    GameEnded,
    GiveCard,
    HandsCompleted,
    PlayCard,
    State,
    TalonTaken,
)

CARD_TEXTS = frozenset(str(c) for c in DECK)
DECK_IDS = sorted(map(id, DECK))
VIEWERS: tuple[int | None, ...] = (0, 1, 2, None)
REGISTRY = registry_of([*game.EVENTS, *game.COMMANDS])
WALK = settings(max_examples=10, deadline=None, suppress_health_check=[HealthCheck.too_slow])


CARD_TOKEN = re.compile(r'"((?:10|[2-9JQKA])[CDHS])"')


def cards_in(text: str) -> set[str]:
    """Every card text ("AS", "10H") quoted as a JSON string in `text`."""
    return set(CARD_TOKEN.findall(text))


class Knowledge:
    """What each seat may know in the current deal (RULES.md), from the full events."""

    def __init__(self) -> None:
        self.known: dict[int | None, set[str]] = {v: set() for v in VIEWERS}
        self.secret_seed: str | None = None

    def learn(self, event: Event) -> None:
        if isinstance(event, CardsDealt):
            self.known = {v: set() for v in VIEWERS}
            for seat in range(3):
                self.known[seat] = {str(c) for c in event.hands[seat][:6]}
            self.secret_seed = event.seed.hex()
        elif isinstance(event, HandsCompleted):
            for seat in range(3):
                self.known[seat] |= {str(c) for c in event.rests[seat]}
        elif isinstance(event, CardExchanged):
            for seat in (event.giver, event.receiver):
                self.known[seat] |= {str(event.given), str(event.returned)}
        elif isinstance(event, TalonTaken):
            self.known[event.seat] |= {str(c) for c in event.cards}
        elif isinstance(event, CardPlayed):
            for v in VIEWERS:
                self.known[v].add(str(event.card))
        elif isinstance(event, DealSeedRevealed):
            for v in VIEWERS:
                self.known[v] = set(CARD_TEXTS)  # the deal is re-derivable from now on
            self.secret_seed = None

    def check(self, viewer: int | None, data: Any, what: str) -> None:
        text = json.dumps(data)  # also proves the data JSON-able
        leaked = cards_in(text) - self.known[viewer]
        assert not leaked, f"{what} shows {sorted(leaked)} to seat {viewer}"
        if self.secret_seed is not None:
            assert self.secret_seed not in text, f"{what} leaks the seed"


def conserved(state: State) -> None:
    d = state.deal
    if d is None:
        return
    held: list[Card] = [c for hand in d.hands for c in hand]
    if not d.talon_taken:
        held += d.talon
    held += d.discards
    held += d.trick
    held += [c for trick in d.completed for c in trick.cards]
    assert sorted(map(id, held)) == DECK_IDS  # cards are interned: identity is enough


def check_default_is_legal(state: State, seat: int, legal: list[Command]) -> None:
    default = game.default_command(state, seat)
    game.decide(state, default)  # raises if illegal
    if isinstance(default, Discard):
        assert frozenset(map(id, default.cards)) in {
            frozenset(map(id, c.cards)) for c in legal if isinstance(c, Discard)
        }
    else:
        assert default in legal


def check_views(state: State, knowledge: Knowledge) -> None:
    t = game.turn(state)
    for viewer in VIEWERS:
        v = game.view(state, viewer)
        knowledge.check(viewer, v, "view")
        assert v["turn"] == {"number": t.number, "kind": t.kind, "seats": list(t.seats)}
        if viewer is not None and state.deal is not None:
            hand = state.deal.hands[viewer]
            shown = hand if state.deal.contract is not None else hand[:6]
            assert sorted(v["hand"]) == sorted(str(c) for c in shown)


def check_event(event: Event, knowledge: Knowledge) -> None:
    name, data = encode_event(event)
    json.dumps(data)
    assert decode_event(REGISTRY, name, data) == event
    for viewer in VIEWERS:
        shown = game.redact(event, viewer)
        assert shown is not None
        knowledge.check(viewer, shown, name)


def walk(seed: int, must_trump: bool, timeout_share: float) -> tuple[State, list[Event]]:
    """Play a whole game, checking the step invariants; return the end and the log."""
    rng = random.Random(seed)
    options = {"must_trump": must_trump}
    state = game.initial_state(options)
    log: list[Event] = []
    knowledge = Knowledge()
    while not game.is_over(state):
        t = game.turn(state)
        for seat in range(3):
            if seat not in t.seats:
                assert game.legal_commands(state, seat) == []
        if t.is_chance:
            command = game.chance_command(state, rng.randbytes(32))
        else:
            (seat,) = t.seats
            legal = game.legal_commands(state, seat)
            assert legal
            check_default_is_legal(state, seat, legal)
            if rng.random() < timeout_share:
                command = game.default_command(state, seat)
            else:
                command = rng.choice(legal)
        events = game.decide(state, command)
        for event in events:
            state = game.evolve(state, event)
            knowledge.learn(event)
            check_event(event, knowledge)
            conserved(state)
        assert game.turn(state).number == t.number + 1
        check_views(state, knowledge)
        log += events
    return state, log


@WALK
@given(
    seed=st.integers(min_value=0, max_value=2**64),
    must_trump=st.booleans(),
    timeout_share=st.sampled_from([0.0, 0.3, 1.0]),
)
def test_random_games_end_after_18_zero_sum_deals(
    seed: int, must_trump: bool, timeout_share: float
) -> None:
    state, log = walk(seed, must_trump, timeout_share)
    scored = [e for e in log if isinstance(e, DealScored)]
    assert [e.deal for e in scored] == list(range(1, 19))
    for e in scored:
        assert sum(e.points) == 0
        assert sum(e.tricks) == 16
        assert sorted(e.targets) == [3, 5, 8]
        assert sum(e.totals) == 0
    assert isinstance(log[-1], GameEnded)
    assert list(log[-1].totals) == [sum(e.points[s] for e in scored) for s in range(3)]
    for seat in range(3):
        assert len(state.used[seat]) == 6
    assert game.turn(state).kind == "over"
    assert game.fold({"must_trump": must_trump}, log) == state


@settings(max_examples=6, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(min_value=0, max_value=2**64), cut=st.integers(0, 1500))
def test_fold_from_scratch_equals_stepping_and_is_deterministic(seed: int, cut: int) -> None:
    def play(noise: int) -> tuple[list[State], list[Event]]:
        random.seed(noise)  # the global RNG must not matter
        rng = random.Random(seed)
        state = game.initial_state({})
        states, log = [state], []
        while not game.is_over(state):
            random.random()
            t = game.turn(state)
            if t.is_chance:
                command = game.chance_command(state, rng.randbytes(32))
            else:
                command = rng.choice(game.legal_commands(state, t.seats[0]))
            for event in game.decide(state, command):
                state = game.evolve(state, event)
                states.append(state)
                log.append(event)
        return states, log

    states, log = play(1)
    again, log_again = play(2)
    assert log == log_again
    assert states == again
    k = min(cut, len(log))
    assert game.fold({}, log[:k]) == states[k]
    decoded = [decode_event(REGISTRY, *encode_event(e)) for e in log]
    assert game.fold({}, decoded) == states[-1]


# ------------------------------------------------- what legal_commands leaves out is refused

UNLISTED = settings(max_examples=5, deadline=None, suppress_health_check=[HealthCheck.too_slow])
CHECK_SHARE = 0.03
"""Share of a walk's positions where every candidate command is tried (~30 a game)."""
SEAT_NUMBERS = (-1, 0, 1, 2, 3)


def _as_the_rules_compare(command: Command) -> object:
    """A discard is a set of four cards (any order); other commands compare as they are.

    Interned cards: ids tell them apart, and a discard naming a card twice stays a
    four-id tuple that matches no listed combination.
    """
    if isinstance(command, Discard):
        return (Discard, command.seat, tuple(sorted(map(id, command.cards))))
    return command


def _discards(state: State, seat: int, rng: random.Random) -> list[Command]:
    """Discards around the seat's hand: some legal, most not (wrong size, a card twice,
    a card it does not hold). Every 4 cards of the hand are listed, so a random one is
    either listed or refused — nothing in between."""
    hand = list(state.deal.hands[seat]) if state.deal is not None else []
    foreign = [c for c in DECK if c not in hand]
    picks: list[tuple[Card, ...]] = [(), tuple(rng.sample(DECK, 4))]
    if len(hand) >= 5:
        four = rng.sample(hand, 4)
        picks += [
            tuple(four),
            tuple(reversed(four)),  # the same set in another order: legal too
            tuple(four[:3]),
            tuple(rng.sample(hand, 5)),
            (*four[:3], four[0]),
            (*four[:3], rng.choice(foreign)),
        ]
    return [Discard(seat, cards) for cards in picks]


def candidate_commands(state: State, rng: random.Random) -> list[Command]:
    """Every contract and every card of the deck for every seat (and two out of range),
    discards around each hand, and both chance commands."""
    commands: list[Command] = [DrawFirstDealer(rng.randbytes(32)), DealCards(rng.randbytes(32))]
    for seat in SEAT_NUMBERS:
        commands += [ChooseContract(seat, contract) for contract in Contract]
        commands += [GiveCard(seat, c) for c in DECK]
        commands += [PlayCard(seat, c) for c in DECK]
        if 0 <= seat < 3:
            commands += _discards(state, seat, rng)
    return commands


def check_unlisted_are_refused(state: State, rng: random.Random) -> int:
    """Every candidate that no seat's `legal_commands` lists is refused with a RuleError
    (at a chance turn: every player command, and the chance command not due)."""
    t = game.turn(state)
    listed = {
        _as_the_rules_compare(c) for seat in range(3) for c in game.legal_commands(state, seat)
    }
    if t.is_chance:
        due = game.chance_command(state, rng.randbytes(32))
        listed.add(_as_the_rules_compare(due))
        listed_kinds = {type(due)}
    else:
        listed_kinds = set()
    refused = 0
    for command in candidate_commands(state, rng):
        if _as_the_rules_compare(command) in listed or type(command) in listed_kinds:
            continue
        try:
            game.decide(state, command)
        except RuleError:
            refused += 1
        else:
            raise AssertionError(f"{command} is not listed at turn {t} but decide accepts it")
    return refused


@UNLISTED
@given(seed=st.integers(min_value=0, max_value=2**64), must_trump=st.booleans())
def test_every_command_legal_commands_leaves_out_is_refused(seed: int, must_trump: bool) -> None:
    rng = random.Random(seed)
    state = game.initial_state({"must_trump": must_trump})
    checked_kinds: set[str] = set()
    while not game.is_over(state):
        t = game.turn(state)
        if rng.random() < CHECK_SHARE or t.kind not in checked_kinds:
            assert check_unlisted_are_refused(state, rng) > 0
            checked_kinds.add(t.kind)
        if t.is_chance:
            command = game.chance_command(state, rng.randbytes(32))
        else:
            command = rng.choice(game.legal_commands(state, t.seats[0]))
        for event in game.decide(state, command):
            state = game.evolve(state, event)
    check_unlisted_are_refused(state, rng)  # the game is over: nothing is legal
    assert checked_kinds >= {"chance", "contract", "discard", "play"}
