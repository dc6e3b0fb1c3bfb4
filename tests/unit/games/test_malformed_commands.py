"""Both engines refuse a malformed command with a typed RuleError, whoever calls them.

The table service builds well-formed commands, but a bot, a test or a future service
may call a decider directly: a bool or a float for a seat, a raw string for an enum, a
list or a non-card inside a card tuple, a foreign object for a command must end in a
RuleError with a reason code (UNKNOWN_COMMAND, INVALID_SEAT, MALFORMED_COMMAND, or the
rules' own refusal of a well-typed move), never a KeyError or TypeError from inside the
rules (`kozyr.games.decider.command_check`). Hypothesis throws commands of every type with
any mix of junk and plausible field values at positions of every phase of both games.
"""

from __future__ import annotations

import dataclasses
import random
from types import ModuleType
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import kozyr.games.khozor_teams as kz
import kozyr.games.three_five_eight as t58
from kozyr.games.cards import Card, Rank, parse_card
from kozyr.games.errors import COMMON_TEXTS, RuleError
from kozyr.texts import Lang
from tests.support.higher_card import rules as higher_card

GAMES: tuple[ModuleType, ...] = (t58, kz, higher_card)
"""The two games and the test-only one: every game follows the convention."""
SHAPE_REASONS = {"UNKNOWN_COMMAND", "INVALID_SEAT", "MALFORMED_COMMAND"}
EVERY_CARD: tuple[Card, ...] = (*t58.DECK, *(c for c in kz.DECK if c.is_joker))


def _walk(game: ModuleType, steps: int, rng: random.Random) -> Any:
    """A position `steps` decisions into a random game (legal or timeout moves)."""
    state = game.initial_state({})
    for _ in range(steps):
        if game.is_over(state):
            break
        t = game.turn(state)
        if t.is_chance:
            command = game.chance_command(state, rng.randbytes(32))
        else:
            seat = rng.choice(t.seats)
            legal = game.legal_commands(state, seat) if rng.random() < 0.5 else []
            command = rng.choice(legal) if legal else game.default_command(state, seat)
        for event in game.decide(state, command):
            state = game.evolve(state, event)
    return state


POSITIONS: dict[str, list[Any]] = {
    game.GAME_ID: [_walk(game, steps, random.Random(steps)) for steps in range(0, 400, 9)]
    for game in GAMES
}

_ENUM_TEXTS = ("S", "NT", "MT", "three_set", "four_set", "A", "play", "")
_PLAIN_JUNK = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**70), max_value=2**70),
    st.floats(allow_nan=True),
    st.text(max_size=6),
    st.sampled_from(_ENUM_TEXTS),
    st.binary(max_size=40),
    st.just(Card(Rank.ACE, None)),
    st.just(Card("A", "S")),  # type: ignore[arg-type]  # a look-alike card, on purpose
    st.just(object()),
)
JUNK = st.recursive(
    _PLAIN_JUNK,
    lambda inner: st.one_of(st.lists(inner, max_size=6), st.lists(inner, max_size=6).map(tuple)),
    max_leaves=12,
)
PLAUSIBLE = st.one_of(
    st.integers(min_value=-1, max_value=9),
    st.sampled_from([*t58.Contract, *kz.SignalKind]),
    st.sampled_from(EVERY_CARD),
    st.lists(st.sampled_from(EVERY_CARD), min_size=0, max_size=6).map(tuple),
    st.binary(min_size=32, max_size=32),
)
FIELD = st.one_of(JUNK, PLAUSIBLE)


def _outcome(game: ModuleType, state: Any, command: object) -> list[Any] | RuleError:
    """The events of `command`, or its refusal; any other exception fails the test."""
    try:
        events: list[Any] = game.decide(state, command)
    except RuleError as refused:
        return refused
    return events


def _refusal_or_events(game: ModuleType, state: Any, command: object) -> None:
    """The one acceptable outcome: events that evolve cleanly, or a RuleError."""
    outcome = _outcome(game, state, command)
    if isinstance(outcome, RuleError):
        assert outcome.reason in getattr(game, "REASONS", COMMON_TEXTS)
        assert outcome.message(Lang.RO)
        assert outcome.message(Lang.IT)
        return
    for event in outcome:
        state = game.evolve(state, event)


@pytest.mark.parametrize("game", GAMES, ids=lambda g: g.GAME_ID)
@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_any_command_with_any_field_values_is_decided_or_refused(
    game: ModuleType, data: st.DataObject
) -> None:
    state = data.draw(st.sampled_from(POSITIONS[game.GAME_ID]))
    cls = data.draw(st.sampled_from(game.COMMANDS))
    values = [data.draw(FIELD) for _ in dataclasses.fields(cls)]
    _refusal_or_events(game, state, cls(*values))


@pytest.mark.parametrize("game", GAMES, ids=lambda g: g.GAME_ID)
@settings(max_examples=100, deadline=None)
@given(data=st.data())
def test_anything_but_a_command_is_an_unknown_command(
    game: ModuleType, data: st.DataObject
) -> None:
    state = data.draw(st.sampled_from(POSITIONS[game.GAME_ID]))
    other = kz if game is not kz else t58
    foreign = data.draw(st.sampled_from(other.COMMANDS))
    command = data.draw(st.one_of(JUNK, st.just(foreign)))
    with pytest.raises(RuleError) as refused:
        game.decide(state, command)
    assert refused.value.reason == "UNKNOWN_COMMAND"


AS = parse_card("AS")
SEED = bytes(32)


def _mid_play(game: ModuleType) -> Any:
    return next(s for s in POSITIONS[game.GAME_ID] if s.phase.value == "play")


@pytest.mark.parametrize(
    ("command", "reason"),
    [
        (t58.ChooseContract(True, t58.Contract.SPADES), "INVALID_SEAT"),
        (t58.PlayCard(1.0, AS), "INVALID_SEAT"),  # type: ignore[arg-type]
        (t58.PlayCard(3, AS), "INVALID_SEAT"),
        (t58.ChooseContract(0, "S"), "MALFORMED_COMMAND"),  # type: ignore[arg-type]
        (t58.PlayCard(0, "AS"), "MALFORMED_COMMAND"),  # type: ignore[arg-type]
        (t58.PlayCard(0, Card(Rank.ACE, None)), "MALFORMED_COMMAND"),
        (t58.Discard(0, [AS, AS, AS, AS]), "MALFORMED_COMMAND"),  # type: ignore[arg-type]
        (t58.Discard(0, (AS, None)), "MALFORMED_COMMAND"),  # type: ignore[arg-type]
        (t58.DealCards(SEED.hex()), "MALFORMED_COMMAND"),  # type: ignore[arg-type]
        (kz.PickUp(0), "UNKNOWN_COMMAND"),
        ("play the ace", "UNKNOWN_COMMAND"),
    ],
)
def test_three_five_eight_shape_errors(command: object, reason: str) -> None:
    with pytest.raises(RuleError) as refused:
        t58.decide(_mid_play(t58), command)
    assert refused.value.reason == reason


@pytest.mark.parametrize(
    ("command", "reason"),
    [
        (kz.ToggleSignal(0, "four_set"), "MALFORMED_COMMAND"),  # type: ignore[arg-type]
        (kz.ToggleSignal(0, "three_set"), "MALFORMED_COMMAND"),  # type: ignore[arg-type]
        (kz.ToggleSignal(True, kz.SignalKind.THREE_SET), "INVALID_SEAT"),
        (kz.ConfirmOpener(0, True), "INVALID_SEAT"),
        (kz.PickUp("0"), "INVALID_SEAT"),  # type: ignore[arg-type]
        (kz.PickUp(-1), "INVALID_SEAT"),
        (kz.Lead(0, [AS]), "MALFORMED_COMMAND"),  # type: ignore[arg-type]
        (kz.Beat(0, (AS, "KS")), "MALFORMED_COMMAND"),  # type: ignore[arg-type]
        (kz.DealRound(None), "MALFORMED_COMMAND"),  # type: ignore[arg-type]
        (t58.PlayCard(0, AS), "UNKNOWN_COMMAND"),
        (None, "UNKNOWN_COMMAND"),
    ],
)
def test_khozor_shape_errors(command: object, reason: str) -> None:
    with pytest.raises(RuleError) as refused:
        kz.decide(_mid_play(kz), command)
    assert refused.value.reason == reason


def test_a_hand_built_card_equal_to_a_held_one_is_played() -> None:
    """Only the type is checked up front: a `Card` built by hand is as good as the
    interned one, and whether the seat holds it stays the rules' question."""
    state = _mid_play(t58)
    seat = t58.turn(state).seats[0]
    legal = t58.legal_commands(state, seat)[0]
    assert isinstance(legal, t58.PlayCard)
    built = Card(legal.card.rank, legal.card.suit)
    assert built is not legal.card
    assert t58.decide(state, t58.PlayCard(seat, built)) == t58.decide(state, legal)
