"""One property suite for every registered game — the two real ones and the test-only
"higher card wins" — through nothing but its plugin (`kozyr.games.plugin`).

Random whole games (chance from random seeds, moves among those a view would list) must:
end; keep every card of the deck somewhere once dealt (conservation); offer a default
move the rules accept; never show a seat a card of another seat's hand, or anything
face down, unless the plugin says that seat has seen it (no leak in any view, the
spectator's included); map each listed move to its wire form and back unchanged; and
fold, from its events as stored (JSON), to the very state stepping reached. The
per-game property tests keep their finer, rule-specific checks.
"""

from __future__ import annotations

import dataclasses
import json
import random
from collections import Counter
from typing import Any

import pytest

import tests.support.higher_card  # noqa: F401  (registers the test-only game)
from kozyr.games import khozor_teams, three_five_eight  # noqa: F401  (register themselves)
from kozyr.games.cards import Card, CardParseError, parse_card
from kozyr.games.codec import decode_event, encode_event, registry_of
from kozyr.games.plugin import AnyPlugin, CardPlaces, registered

PLUGINS = {plugin.id: plugin for plugin in registered()}
SEEDS = (1, 2)
MAX_STEPS = 20_000


def test_the_test_only_game_is_registered_beside_the_real_ones() -> None:
    assert {"three_five_eight", "khozor_teams", "higher_card"} <= set(PLUGINS)
    assert len({p.code for p in PLUGINS.values()}) == len(PLUGINS)


def card_texts(value: Any) -> set[str]:
    """Every string anywhere in a view that names a card."""
    if isinstance(value, str):
        try:
            return {str(parse_card(value))}
        except CardParseError:
            return set()
    if isinstance(value, dict):
        return set().union(*(card_texts(v) for v in value.values()))
    if isinstance(value, list):
        return set().union(*(card_texts(v) for v in value))
    return set()


def check_conserved(plugin: AnyPlugin, places: CardPlaces) -> None:
    held = places.all()
    if held:
        assert Counter(map(str, held)) == Counter(map(str, plugin.deck))


def check_no_leak(plugin: AnyPlugin, state: Any, places: CardPlaces) -> None:
    def names(cards: Any) -> set[str]:
        return {str(c) for c in cards}

    hidden = names(places.hidden)
    hands = [names(hand) for hand in places.hands]
    spectator = card_texts(plugin.rules.view(state, None))
    assert not spectator & (hidden | set().union(*hands)), "the spectator sees hidden cards"
    for seat in range(plugin.rules.SEATS):
        others = set().union(*(h for s, h in enumerate(hands) if s != seat))
        seen = names(places.seen[seat]) if places.seen else set()
        leaked = card_texts(plugin.rules.view(state, seat)) & (others | hidden) - seen
        assert not leaked, f"seat {seat} sees {sorted(leaked)}"


def check_seat_view(plugin: AnyPlugin, state: Any) -> None:
    """A game's `seat_view` is all that differs between its viewers' views: each view is
    the spectator's with those keys replaced (the table shares the rest among them), and
    those keys convert to the wire alone as inside the whole view (the table converts
    each viewer's part alone)."""
    if plugin.seat_view is None:
        return
    spectator = plugin.rules.view(state, None)
    keys = set(plugin.seat_view(state, None))
    for seat in [None, *range(plugin.rules.SEATS)]:
        own = plugin.seat_view(state, seat)
        assert set(own) == keys
        whole = plugin.rules.view(state, seat)
        assert whole == spectator | own, seat
        wire = plugin.view_to_wire(whole)
        assert dict(plugin.view_to_wire(own)) == {k: wire[k] for k in keys}, seat


def check_wire_round_trip(plugin: AnyPlugin, seat: int, moves: list[Any]) -> None:
    for move in moves:
        kind, fields = plugin.action_of(move)
        assert plugin.command_of(kind, seat, json.loads(json.dumps(fields))) == move


def step(plugin: AnyPlugin, state: Any, rng: random.Random) -> tuple[Any, list[Any]]:
    """One decision: a chance draw, or a random listed move of a seat whose turn it is
    (after checking that its default move is accepted)."""
    rules = plugin.rules
    turn = rules.turn(state)
    if turn.is_chance:
        command = rules.chance_command(state, rng.randbytes(32))
    else:
        seat = rng.choice(turn.seats)
        rules.decide(state, rules.default_command(state, seat))  # raises if illegal
        moves = plugin.listed_moves(state, seat)
        assert moves, f"seat {seat} must act but has no move to choose"
        check_wire_round_trip(plugin, seat, moves)
        turn_moves = [m for m in moves if getattr(m, "seat", seat) == seat]
        command = rng.choice(turn_moves)
    events = rules.decide(state, command)
    for event in events:
        state = rules.evolve(state, event)
    return state, events


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("game_id", sorted(PLUGINS))
def test_random_games_end_conserve_cards_leak_nothing_and_fold_as_stepped(
    game_id: str, seed: int
) -> None:
    plugin = PLUGINS[game_id]
    rules, rng = plugin.rules, random.Random(seed)
    assert plugin.card_places is not None, "every game says where its cards are"
    state = start = rules.initial_state({})
    log: list[Any] = []
    for _ in range(MAX_STEPS):
        if rules.is_over(state):
            break
        state, events = step(plugin, state, rng)
        log += events
        places = plugin.card_places(state)
        check_conserved(plugin, places)
        check_no_leak(plugin, state, places)
        check_seat_view(plugin, state)
    assert rules.is_over(state), f"{game_id} did not end within {MAX_STEPS} decisions"
    assert rules.turn(state).seats == ()
    stored = [json.loads(json.dumps(encode_event(e))) for e in log]
    types = registry_of(rules.EVENTS)
    folded = start
    for type_name, data in stored:
        folded = rules.evolve(folded, decode_event(types, type_name, data))
    assert folded == state


@pytest.mark.parametrize("game_id", sorted(PLUGINS))
def test_fair_deal_marks_every_deal_and_reveals_each_seed(game_id: str) -> None:
    """What the table's deal records rely on: one `Dealt` per deal, each followed by its
    seed's `Revealed` before the next deal and by the end."""
    from kozyr.games.plugin import Dealt, Revealed

    plugin = PLUGINS[game_id]
    rules, rng = plugin.rules, random.Random(7)
    state, open_deal, deals = rules.initial_state({}), False, 0
    while not rules.is_over(state):
        state, events = step(plugin, state, rng)
        for event in events:
            mark = plugin.fair_deal(event)
            if isinstance(mark, Dealt):
                assert not open_deal
                open_deal, deals = True, deals + 1
            elif isinstance(mark, Revealed):
                assert open_deal
                open_deal = False
    assert deals >= 1
    assert not open_deal


def test_card_places_names_cards() -> None:
    for plugin in PLUGINS.values():
        assert all(isinstance(c, Card) for c in plugin.deck)
        assert len(set(plugin.deck)) == len(plugin.deck)


def test_the_leak_check_catches_a_view_that_shows_another_hand() -> None:
    """The suite's own check, against a deliberately leaky copy of the test game."""
    from tests.support.higher_card import rules

    plugin = PLUGINS["higher_card"]
    state = rules.initial_state({})
    for event in rules.decide(state, rules.DealCards(bytes(32))):
        state = rules.evolve(state, event)
    assert plugin.card_places is not None
    places = plugin.card_places(state)
    check_no_leak(plugin, state, places)
    leaky = dataclasses.replace(plugin, rules=_Leaky())
    with pytest.raises(AssertionError, match="sees"):
        check_no_leak(leaky, state, places)


class _Leaky:
    """The test game's rules, but a seat's view also shows the other seat's hand."""

    def __getattr__(self, name: str) -> Any:
        from tests.support.higher_card import rules

        return getattr(rules, name)

    def view(self, state: Any, seat: int | None) -> dict[str, Any]:
        from tests.support.higher_card import rules

        shown = rules.view(state, seat)
        if seat is not None:
            shown["hand"] += [str(c) for c in state.hands[1 - seat]]
        return shown
