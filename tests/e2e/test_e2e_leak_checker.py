"""The leak checker itself: silent on honest data, loud on every kind of leak.

A checker that never fails proves nothing, so it is run here without any service on
games played by the engines in-process (seeded, so always the same games): every
honest view (through the service's own proto conversion, legal actions included) and
every honestly redacted history entry must pass, and each deliberately leaky copy —
another seat's card, the talon or discards shown to the wrong seat, a card not yet
shown, an exchange step of others, a seed before its reveal, a reserve or sleeping
card, the other team's signals — must be reported, with the right explanation.
"""

from __future__ import annotations

import copy
import random
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from types import ModuleType
from typing import Any

import pytest

from kozyr.api.table.v1 import views_pb2
from kozyr.games import khozor_teams, three_five_eight
from kozyr.games.codec import encode_event
from kozyr.games.plugin import plugin_by_id
from kozyr.games.three_five_eight.simulate import random_command
from kozyr.table.edge.actions import action_from_command
from kozyr.table.edge.views import game_view_to_proto, set_game_view
from tests.e2e.leaks import (
    KHOZOR_TEAMS,
    THREE_FIVE_EIGHT,
    LoggedEvent,
    Seen,
    as_seen_by,
    cards_in_text,
    find_leaks,
    find_open_hand_leaks,
    history_gaps,
    open_hand_limit,
    seen_refusal,
    seen_view,
)

pytestmark = pytest.mark.e2e

SEARCHED_SEEDS = 200
SUITS = {"C": "♣", "D": "♦", "H": "♥", "S": "♠"}


@dataclass
class Played:
    """A game played in-process: the admin's events and the state after each command."""

    game_id: str
    game: ModuleType
    events: list[LoggedEvent]
    decoded: list[Any]
    snapshots: list[tuple[int, Any]]

    def first(self, event_type: str, where: Callable[[LoggedEvent], bool] = bool) -> LoggedEvent:
        return next(e for e in self.events if e.type == event_type and where(e))

    def state_at(self, version: int) -> Any:
        """The state right after the command whose events include `version`."""
        return next(state for at, state in self.snapshots if at >= version)

    def version_at(self, version: int) -> int:
        return next(at for at, _ in self.snapshots if at >= version)

    def number(self, version: int, seat: int | None) -> int:
        """The log's `version` as `seat` counts versions (docs/api.md, "Versions")."""
        return as_seen_by(self.game_id, self.events, seat)[version - 1].version

    def view(self, version: int, seat: int | None) -> Seen:
        """The honest view of `seat` at (the end of the command holding) `version`."""
        at = self.version_at(version)
        state = self.state_at(version)
        table_view = views_pb2.TableView(table_id="t", version=self.number(at, seat))
        if seat is not None:
            table_view.seat = seat
        game_view = game_view_to_proto(self.game_id, self.game.view(state, seat))
        set_game_view(table_view, game_view)
        turn = self.game.turn(state)
        if seat is not None and seat in turn.seats:
            moves = (
                [self.game.default_command(state, seat)]
                if turn.kind == "discard"
                else self.game.legal_commands(state, seat)
            )
            table_view.legal_actions.extend(action_from_command(m) for m in moves)
        return seen_view(table_view, "fake")

    def history(self, seat: int | None) -> list[Seen]:
        seen: list[Seen] = []
        for event, decoded in zip(self.events, self.decoded, strict=True):
            data = self.game.redact(decoded, seat)
            if data is not None:
                entry = {"type": event.type, "data": data}
                number = len(seen) + 1  # the seat numbers what it sees 1, 2, 3 …
                seen.append(Seen("history", number, entry, f"history v{number}"))
        return seen

    def check(self, seat: int | None, seen: list[Seen]) -> list[str]:
        return find_leaks(self.game_id, self.events, seat, seen)


def _play(
    game_id: str, game: ModuleType, seed: int, move: Callable[[Any, random.Random], Any]
) -> Iterator[Played]:
    """Yield the game after every command, as far as the caller keeps asking."""
    rng = random.Random(seed)
    state = game.initial_state({})
    played = Played(game_id, game, [], [], [])
    while not game.is_over(state):
        turn = game.turn(state)
        command = game.chance_command(state, rng.randbytes(32)) if turn.is_chance else None
        for event in game.decide(state, command or move(state, rng)):
            state = game.evolve(state, event)
            name, data = encode_event(event)
            played.events.append(LoggedEvent(len(played.events) + 1, name, data))
            played.decoded.append(event)
        played.snapshots.append((len(played.events), state))
        yield played


def _types(played: Played) -> list[str]:
    return [e.type for e in played.events]


@pytest.fixture(scope="module")
def deals() -> Played:
    """Three 3-5-8 deals with an exchange in them."""
    for seed in range(SEARCHED_SEEDS):
        for played in _play(THREE_FIVE_EIGHT, three_five_eight, seed, random_command):
            if _types(played).count("DealSeedRevealed") == 3:
                if "CardExchanged" in _types(played):
                    return played
                break
    raise AssertionError("no seed gave three deals with an exchange")


def _khozor_move(state: Any, rng: random.Random) -> Any:
    """Signals now and then from any seat; beat when possible (so that cycles sleep)."""
    game = khozor_teams
    seat = rng.randrange(8)
    toggles = [c for c in game.legal_commands(state, seat) if isinstance(c, game.ToggleSignal)]
    if toggles and rng.random() < 0.3:
        return rng.choice(toggles)
    turn = game.turn(state)
    if turn.kind == "defend":
        return game.default_command(state, turn.seats[0])
    moves = game.legal_commands(state, rng.choice(turn.seats))
    return rng.choice([m for m in moves if not isinstance(m, game.ToggleSignal)])


@pytest.fixture(scope="module")
def rounds() -> Played:
    """Khözör until a round with a sleeping cycle ends; both teams signalled."""
    for seed in range(SEARCHED_SEEDS):
        for played in _play(KHOZOR_TEAMS, khozor_teams, seed, _khozor_move):
            types = _types(played)
            if "CycleSlept" in types and "DealSeedRevealed" in types[types.index("CycleSlept") :]:
                teams = {e.data["seat"] % 2 for e in played.events if e.type == "SignalSet"}
                if teams == {0, 1}:
                    return played
                break
            if len(types) > 3000:
                break
    raise AssertionError("no seed gave a sleeping cycle and signals of both teams")


# ------------------------------------------------------------------------ honest data


@pytest.mark.parametrize("seat", [0, 1, 2, None])
def test_honest_three_five_eight_data_passes(deals: Played, seat: int | None) -> None:
    views = [deals.view(at, seat) for at, _ in deals.snapshots]
    history = deals.history(seat)
    assert deals.check(seat, [*views, *history]) == []
    assert history_gaps(THREE_FIVE_EIGHT, deals.events, seat, [h.version for h in history]) == []


@pytest.mark.parametrize("seat", [0, 3, None])
def test_honest_khozor_data_passes(rounds: Played, seat: int | None) -> None:
    views = [rounds.view(at, seat) for at, _ in rounds.snapshots]
    history = rounds.history(seat)
    assert rounds.check(seat, [*views, *history]) == []
    assert history_gaps(KHOZOR_TEAMS, rounds.events, seat, [h.version for h in history]) == []


def test_a_history_numbered_by_the_log_is_caught(rounds: Played) -> None:
    """Gaps where the other team's signals are would tell the seat they happened."""
    seat = 0
    by_log = [
        e.version
        for e in rounds.events
        if e.type not in ("SignalSet", "SignalCleared") or e.data["seat"] % 2 == seat % 2
    ]
    assert history_gaps(KHOZOR_TEAMS, rounds.events, seat, by_log)


# ------------------------------------------------------------------------ 3-5-8 leaks


def _leaky_view(
    played: Played, version: int, seat: int | None, mutate: Callable[[dict[str, Any]], None]
) -> list[str]:
    honest = played.view(version, seat)
    assert played.check(seat, [honest]) == []
    data = copy.deepcopy(honest.data)
    mutate(data)
    return played.check(seat, [Seen("view", honest.version, data, "leaky view")])


def _game_part(data: dict[str, Any]) -> dict[str, Any]:
    part: dict[str, Any] = data.get("three_five_eight") or data["khozor_teams"]
    return part


def _mentions(problems: list[str], *fragments: str) -> bool:
    return bool(problems) and all(any(f in p for p in problems) for f in fragments)


def test_another_seats_card_in_a_hand_is_caught(deals: Played) -> None:
    discarded = deals.first("CardsDiscarded")
    other = deals.state_at(discarded.version)
    card = str(other.deal.hands[1][0])
    problems = _leaky_view(
        deals, discarded.version, 0, lambda d: _game_part(d)["hand"].append(card)
    )
    assert _mentions(problems, f"card {card} it may not know", "seat 1's hand", "hand")


def test_own_cards_before_the_contract_are_caught(deals: Played) -> None:
    dealt = deals.first("CardsDealt")
    seventh = dealt.data["hands"][2][6]
    problems = _leaky_view(deals, dealt.version, 2, lambda d: _game_part(d)["hand"].append(seventh))
    assert _mentions(problems, f"card {seventh} it may not know", "is not its own")


def test_the_talon_is_caught_before_it_is_taken(deals: Played) -> None:
    dealt = deals.first("CardsDealt")
    declarer = (dealt.data["dealer"] + 1) % 3
    talon = dealt.data["talon"]
    problems = _leaky_view(
        deals, dealt.version, declarer, lambda d: _game_part(d).update(talon=talon)
    )
    assert _mentions(problems, "the talon", "talon")


def test_the_talon_and_discards_of_the_declarer_are_caught_elsewhere(deals: Played) -> None:
    discarded = deals.first("CardsDiscarded")
    taken = deals.first("TalonTaken")
    other = (discarded.data["seat"] + 1) % 3
    for key, cards in (("talon", taken.data["cards"]), ("discards", discarded.data["cards"])):

        def show(data: dict[str, Any], key: str = key, cards: list[str] = cards) -> None:
            _game_part(data)[key] = cards

        problems = _leaky_view(deals, discarded.version, other, show)
        assert _mentions(problems, f"{key} ", "it may not know"), key


def test_someone_elses_exchange_step_is_caught(deals: Played) -> None:
    step = deals.first("CardExchanged")
    third = ({0, 1, 2} - {step.data["giver"], step.data["receiver"]}).pop()

    def show_given(data: dict[str, Any]) -> None:
        _game_part(data)["exchange"]["steps"][0]["given"] = step.data["given"]

    problems = _leaky_view(deals, step.version, third, show_given)
    assert _mentions(problems, "exchange step 1: given card")


def test_a_seed_before_its_reveal_is_caught(deals: Played) -> None:
    dealt = deals.first("CardsDealt")
    problems = _leaky_view(
        deals, dealt.version, 0, lambda d: _game_part(d).update(deal_seed=dealt.data["seed"])
    )
    assert _mentions(problems, "seed of a deal not yet revealed", "deal_seed shown")


def test_a_legal_action_with_another_seats_card_is_caught(deals: Played) -> None:
    played = deals.first("CardPlayed", lambda e: e.data["seat"] == 0)
    state = deals.state_at(played.version - 1)
    card = str(state.deal.hands[2][0])
    action = {"play_card": {"card": {"code": card}}}
    problems = _leaky_view(
        deals, played.version - 1, 0, lambda d: d.setdefault("legal_actions", []).append(action)
    )
    assert _mentions(problems, f"card {card} it may not know")


def test_a_view_of_another_seat_or_a_hand_for_a_spectator_is_caught(deals: Played) -> None:
    dealt = deals.first("CardsDealt")
    assert _mentions(_leaky_view(deals, dealt.version, 0, lambda d: d.update(seat=1)), "a view")
    hand = dealt.data["hands"][0][:6]
    problems = _leaky_view(deals, dealt.version, None, lambda d: _game_part(d).update(hand=hand))
    assert _mentions(problems, "it may not know", "hand")


def test_leaky_history_entries_are_caught(deals: Played) -> None:
    dealt = deals.first("CardsDealt")
    entry = {"type": "CardsDealt", "data": {"deal": 1, "hand": dealt.data["hands"][1][:6]}}
    problems = deals.check(0, [Seen("history", dealt.version, entry, "leaky")])
    assert _mentions(problems, "it may not know", "seat 1's hand")
    taken = deals.first("TalonTaken")
    other = (taken.data["seat"] + 1) % 3
    entry = {"type": "TalonTaken", "data": dict(taken.data, count=4)}
    assert _mentions(deals.check(other, [Seen("history", taken.version, entry, "x")]), "not know")
    assert deals.check(taken.data["seat"], [Seen("history", taken.version, entry, "x")]) == []


def test_leaky_refusal_texts_are_caught(deals: Played) -> None:
    discarded = deals.first("CardsDiscarded")
    state = deals.state_at(discarded.version)
    mine, theirs = str(state.deal.hands[0][0]), str(state.deal.hands[1][0])

    def text(card: str) -> str:
        return f"You do not hold {card[:-1]}{SUITS[card[-1]]}."

    at = discarded.version
    assert deals.check(0, [seen_refusal(at, [text(mine)], "CARD_NOT_IN_HAND")]) == []
    problems = deals.check(0, [seen_refusal(at, [text(theirs)], "CARD_NOT_IN_HAND")])
    assert _mentions(problems, f"card {theirs} it may not know")
    seed = deals.first("CardsDealt", lambda e: e.version > at).data["seed"]
    problems = deals.check(0, [seen_refusal(at, [f"reload ({seed})"], "STALE_VERSION")])
    assert _mentions(problems, "seed of a deal not yet revealed")


# ------------------------------------------------------------------------ Khözör leaks


def test_a_reserve_card_is_caught(rounds: Played) -> None:
    dealt = rounds.first("RoundDealt")
    card = dealt.data["reserve"][-1]
    problems = _leaky_view(rounds, dealt.version, 0, lambda d: _game_part(d)["hand"].append(card))
    assert _mentions(problems, f"card {card} it may not know", "the reserve")


def test_a_sleeping_card_is_caught(rounds: Played) -> None:
    slept = rounds.first("CycleSlept")
    led = [e for e in rounds.events if e.type == "CardsLed" and e.version < slept.version][-1]
    card = led.data["cards"][0]
    row = {"seat": led.data["seat"], "kind": "lead", "cards": [card]}
    problems = _leaky_view(
        rounds, slept.version, 0, lambda d: _game_part(d).setdefault("pile", []).append(row)
    )
    assert _mentions(problems, f"card {card} it may not know", "the sleeping cards", "pile")


def test_another_hand_in_khozor_is_caught(rounds: Played) -> None:
    dealt = rounds.first("RoundDealt")
    card = dealt.data["hands"][5][0]
    problems = _leaky_view(rounds, dealt.version, 2, lambda d: _game_part(d)["hand"].append(card))
    assert _mentions(problems, "seat 5's hand")


def test_the_other_teams_signals_are_caught(rounds: Played) -> None:
    signal = rounds.first("SignalSet")
    signaller = signal.data["seat"]
    opponent = (signaller + 1) % 8
    row = {"seat": signaller, signal.data["kind"]: True}
    problems = _leaky_view(
        rounds,
        signal.version,
        opponent,
        lambda d: _game_part(d).setdefault("signals", []).append(row),
    )
    assert _mentions(problems, f"signals of seat {signaller}, not of its team")
    entry = {"type": "SignalSet", "data": signal.data}
    problems = rounds.check(opponent, [Seen("history", signal.version, entry, "x")])
    assert _mentions(problems, f"a signal of seat {signaller}, not of its team")
    assert rounds.check(signaller, [Seen("history", signal.version, entry, "x")]) == []
    versions = [e.version for e in rounds.events]
    assert history_gaps(KHOZOR_TEAMS, rounds.events, opponent, versions) != []
    assert history_gaps(KHOZOR_TEAMS, rounds.events, None, versions) != []


def test_khozor_history_naming_cards_or_seeds_is_caught(rounds: Played) -> None:
    led = rounds.first("CardsLed")
    entry = {"type": "CardsLed", "data": led.data}
    problems = rounds.check(led.data["seat"], [Seen("history", led.version, entry, "x")])
    assert _mentions(problems, "history names cards")
    dealt = rounds.first("RoundDealt")
    entry = {"type": "RoundDealt", "data": {"round_no": 1, "seed": dealt.data["seed"]}}
    problems = rounds.check(0, [Seen("history", dealt.version, entry, "x")])
    assert _mentions(problems, "seed of a deal not yet revealed")
    problems = _leaky_view(
        rounds, dealt.version, 0, lambda d: _game_part(d).update(deal_seed=dealt.data["seed"])
    )
    assert _mentions(problems, "deal_seed shown before its DealSeedRevealed")


def test_cards_named_in_any_language_are_read_in_texts() -> None:
    """Refusals carry every language: a card named the Romanian or Italian way
    ("D♠" for the queen, "jolly rosso") is as much a card as "Q♠"."""
    texts = ["Nu ai cartea D♠.", "Non hai la carta F♥ né jolly rosso.", "You do not hold 10♣."]
    assert sorted(cards_in_text(texts)) == sorted(["QS", "JH", "JK-red", "10C"])
    assert cards_in_text(["Rămâi la masă", "Donna", "DR"]) == []


def test_a_server_seed_before_its_reveal_is_caught(deals: Played) -> None:
    """Seed scheme 2: a server seed a seat learns before its deal ended would let it
    steer the deal with its client seed (docs/fair-deal.md §9)."""
    server_seed = "ab" * 32
    committed = {"deal": 9, "commitment": "c" * 64, "server_seed": server_seed}
    events = [
        LoggedEvent(1, "ServerSeedCommitted", committed),
        *(LoggedEvent(e.version + 1, e.type, e.data) for e in deals.events),
    ]
    revealed_at = len(events) + 1  # appended after the honest game's log
    reveal = {"deal": 9, "server_seed": server_seed}
    events.append(LoggedEvent(revealed_at, "ServerSeedRevealed", reveal))
    leaky = {"next_deal": {"number": 9, "server_seed": server_seed}}
    early = find_leaks(THREE_FIVE_EIGHT, events, None, [Seen("view", 5, leaky, "early")])
    assert _mentions(early, "seed of a deal not yet revealed", "early")
    late = Seen("view", revealed_at, {"deals": [{"server_seed": server_seed}]}, "late")
    assert find_leaks(THREE_FIVE_EIGHT, events, None, [late]) == []


# ------------------------------------------------------------------ open-hand spectators

DELAY = 6


def _states(played: Played) -> list[Any]:
    """The state after each event: index v is the state at log version v (0: none yet)."""
    state = played.game.initial_state({})
    states = [state]
    for event in played.decoded:
        state = played.game.evolve(state, event)
        states.append(state)
    return states


def _open_hand_view(played: Played, states: list[Any], live: int, shown_at: int) -> Seen:
    """The open-hand view of log version `shown_at` (honest at `live` when it is
    `DELAY` behind), judged as received at `live`: the spectator's view of that
    version with every seat's hand."""
    state = states[shown_at]
    view = views_pb2.TableView(table_id="t", version=played.number(shown_at, None))
    set_game_view(view, game_view_to_proto(played.game_id, played.game.view(state, None)))
    places = plugin_by_id(played.game_id).card_places
    assert places is not None
    hands = [
        views_pb2.SeatHand(seat=seat, cards=[str(c) for c in hand])
        for seat, hand in enumerate(places(state).hands)
    ]
    view.open_hand.CopyFrom(views_pb2.OpenHand(delay=DELAY, log_version=shown_at, hands=hands))
    seen = seen_view(view, "open-hand")
    return Seen("view", live, seen.data, f"open-hand view at live v{live}")


def _honest(rounds: Played, live: int, delay: int = DELAY) -> int:
    return open_hand_limit(KHOZOR_TEAMS, rounds.events, delay, live)


def test_honest_open_hand_views_pass(rounds: Played) -> None:
    states = _states(rounds)
    live = range(1, len(rounds.events) + 1)
    views = [_open_hand_view(rounds, states, v, _honest(rounds, v)) for v in live]
    assert find_open_hand_leaks(KHOZOR_TEAMS, rounds.events, DELAY, views) == []
    assert len({v.data["open_hand"]["log_version"] for v in views}) > DELAY, "it moved on"


def test_the_delay_counts_moves_not_events(rounds: Played) -> None:
    """The judge's own count: signal taps, deals and seat events bring no card closer.
    Right after a signal the limit is where it was before it; right after a lead it
    moves on."""
    signal = rounds.first("SignalSet")
    assert _honest(rounds, signal.version) == _honest(rounds, signal.version - 1)
    led = [e for e in rounds.events if e.type == "CardsLed"][DELAY]  # DELAY moves in
    assert _honest(rounds, led.version - 1) < _honest(rounds, led.version)
    assert _honest(rounds, len(rounds.events)) < len(rounds.events) - DELAY, "events > moves"


def test_an_open_hand_view_without_the_delay_is_caught(rounds: Played) -> None:
    """The planted leaks: the table's delay taken as 0 (the live hands shown), one move
    short, and the delay counted in log events instead of moves."""
    states = _states(rounds)
    live = range(DELAY + 1, len(rounds.events) + 1)
    views = [_open_hand_view(rounds, states, v, v) for v in live]
    problems = find_open_hand_leaks(KHOZOR_TEAMS, rounds.events, DELAY, views)
    assert len([p for p in problems if f"fewer than {DELAY} moves behind" in p]) == len(views)
    for too_new in (
        lambda v: _honest(rounds, v, DELAY - 1),  # one move short
        lambda v: max(1, v - DELAY),  # DELAY events back, not DELAY moves
    ):
        short = [
            _open_hand_view(rounds, states, v, too_new(v))
            for v in live
            if too_new(v) > _honest(rounds, v)
        ]
        assert len(short) > len(live) // 4
        problems = find_open_hand_leaks(KHOZOR_TEAMS, rounds.events, DELAY, short)
        assert len([p for p in problems if "moves behind" in p]) == len(short)


def test_newer_hands_under_an_old_version_are_caught(rounds: Played) -> None:
    """A view that names the delayed version but shows the live hands: the hands do
    not match that version's, and a card drawn since is one it may not know."""
    states = _states(rounds)
    drawn = rounds.first("ReserveDrawn")
    live = drawn.version  # the draw is not DELAY moves old yet
    honest = _open_hand_view(rounds, states, live, _honest(rounds, live))
    lying = copy.deepcopy(honest.data)
    lying["open_hand"]["hands"] = _open_hand_view(rounds, states, live, live).data["open_hand"][
        "hands"
    ]
    problems = find_open_hand_leaks(
        KHOZOR_TEAMS, rounds.events, DELAY, [Seen("view", live, lying, "lying view")]
    )
    card = drawn.data["cards"][0]
    assert _mentions(problems, f"seat {drawn.data['seat']}'s hand")
    assert _mentions(problems, f"card {card} it may not know")


def test_an_open_hand_view_with_signals_or_a_seat_is_caught(rounds: Played) -> None:
    states = _states(rounds)
    signal = rounds.first("SignalSet")
    live = signal.version + DELAY
    honest = _open_hand_view(rounds, states, live, _honest(rounds, live))
    leaky = copy.deepcopy(honest.data)
    _game_part(leaky)["signals"] = [{"seat": signal.data["seat"], "three_set": True}]
    leaky["seat"] = 2
    problems = find_open_hand_leaks(
        KHOZOR_TEAMS, rounds.events, DELAY, [Seen("view", live, leaky, "leaky view")]
    )
    assert _mentions(problems, "not of its team")
    assert _mentions(problems, "a view for seat 2")
    no_hands = {k: v for k, v in honest.data.items() if k != "open_hand"}
    got = find_open_hand_leaks(
        KHOZOR_TEAMS, rounds.events, DELAY, [Seen("view", live, no_hands, "plain")]
    )
    assert _mentions(got, "no open hands")
