"""Private team signals: true when set, tap to clear, broken by a move, gone at round end,
seen by the signaller's team only."""

from __future__ import annotations

import random

import pytest

from kozyr.games.errors import RuleError
from kozyr.games.khozor_teams import (
    SEATS,
    CardsLed,
    ClearReason,
    DrawOpeningTeam,
    Event,
    Lead,
    PickUp,
    SignalCleared,
    SignalKind,
    SignalSet,
    State,
    Team,
    ToggleSignal,
    audience,
    chance_command,
    decide,
    evolve,
    fold,
    initial_state,
    legal_commands,
    redact,
    tapped_by,
    turn,
    view,
)
from kozyr.games.khozor_teams.scenarios import cards, deal_events, fill_hands, position

THREE, FIVE = SignalKind.THREE_SET, SignalKind.FIVE_SET


def _step(state: State, command: object) -> tuple[State, list[Event]]:
    events = decide(state, command)
    for event in events:
        state = evolve(state, event)
    return state, events


def _reason(state: State, command: object) -> str:
    with pytest.raises(RuleError) as refused:
        decide(state, command)
    return refused.value.reason


def test_a_true_signal_is_set_by_anyone_at_any_turn_and_a_false_one_refused() -> None:
    state = position(fill_hands({3: "7H 7S 9D 10C JC"}), opener=0)
    assert turn(state).seats == (0,)
    after, events = _step(state, ToggleSignal(3, THREE))
    assert events == [SignalSet(3, THREE)]
    assert after.signals[3] == {THREE}
    assert turn(after) == turn(state)
    assert _reason(state, ToggleSignal(3, FIVE)) == "SIGNAL_NOT_TRUE"
    assert _reason(state, ToggleSignal(8, THREE)) == "INVALID_SEAT"


def test_tapping_again_clears() -> None:
    state = position(fill_hands({3: "7H 7S 9D 10C JC"}), opener=0)
    state, _ = _step(state, ToggleSignal(3, THREE))
    state, events = _step(state, ToggleSignal(3, THREE))
    assert events == [SignalCleared(3, THREE, ClearReason.TAPPED)]
    assert state.signals[3] == frozenset()


def test_a_five_set_ignores_the_timing_limits_and_both_may_be_set() -> None:
    hand = "7H 7S 9D 9C AS"
    state = position(fill_hands({5: hand}, reserve="AH AD"), "AH AD", opener=0)
    state, _ = _step(state, ToggleSignal(5, FIVE))
    state, _ = _step(state, ToggleSignal(5, THREE))
    assert state.signals[5] == {THREE, FIVE}


def test_jokers_do_not_make_a_set() -> None:
    state = position(fill_hands({3: "7H 7S JK-red JK-gray"}), opener=0)
    assert _reason(state, ToggleSignal(3, THREE)) == "SIGNAL_NOT_TRUE"


def test_signals_during_the_opener_confirmation_even_for_the_other_team() -> None:
    hands = fill_hands({1: "7H 7S 9D 10C JC"})
    before = fold({}, deal_events(hands, opening_team=Team.A))
    state, events = _step(before, ToggleSignal(1, THREE))
    assert events == [SignalSet(1, THREE)]
    assert turn(state) == turn(before)


def test_no_signal_outside_a_round() -> None:
    state = initial_state({})
    assert _reason(state, ToggleSignal(0, THREE)) == "WRONG_PHASE"
    state = evolve(state, decide(state, DrawOpeningTeam(bytes(32)))[0])
    assert _reason(state, ToggleSignal(0, THREE)) == "WRONG_PHASE"


def test_a_move_that_breaks_the_set_clears_the_signal_with_an_event() -> None:
    state = position(fill_hands({0: "7H 7S 9D 10C JC"}), opener=0)
    state, _ = _step(state, ToggleSignal(0, THREE))
    state, events = _step(state, Lead(0, cards("7H")))
    assert events == [CardsLed(0, cards("7H")), SignalCleared(0, THREE, ClearReason.BROKEN)]
    assert state.signals[0] == frozenset()


def test_a_move_that_keeps_the_set_keeps_the_signal() -> None:
    state = position(fill_hands({0: "7H 7S 7D 10C JC"}), opener=0)
    state, _ = _step(state, ToggleSignal(0, THREE))
    state, events = _step(state, Lead(0, cards("7H")))
    assert events == [CardsLed(0, cards("7H"))]
    assert state.signals[0] == {THREE}


def test_the_refill_counts_before_the_check() -> None:
    state = position(fill_hands({0: "7H 7S 9D 10C JC"}, reserve="9C"), "9C", opener=0)
    state, _ = _step(state, ToggleSignal(0, THREE))
    state, events = _step(state, Lead(0, cards("7H")))
    assert not any(isinstance(e, SignalCleared) for e in events)
    assert state.signals[0] == {THREE}


def test_a_pickup_never_breaks_a_signal() -> None:
    state = position(fill_hands({0: "AS 9D", 1: "7H 7S 9C 10C"}), opener=0)
    state, _ = _step(state, ToggleSignal(1, THREE))
    state, _ = _step(state, Lead(0, cards("AS")))
    state, events = _step(state, PickUp(1))
    assert not any(isinstance(e, SignalCleared) for e in events)
    assert state.signals[1] == {THREE}


def test_every_signal_clears_when_the_round_ends() -> None:
    hands = fill_hands({0: "9H", 1: "7H 7S 9D 10C JC", 2: "7C 7D 8D 9S 10S"})
    state = position(hands, opener=0)
    state, _ = _step(state, ToggleSignal(1, THREE))
    state, _ = _step(state, ToggleSignal(2, THREE))
    state, events = _step(state, Lead(0, cards("9H")))
    cleared = [e for e in events if isinstance(e, SignalCleared)]
    assert cleared == [
        SignalCleared(1, THREE, ClearReason.ROUND_END),
        SignalCleared(2, THREE, ClearReason.ROUND_END),
    ]
    assert all(not s for s in state.signals)


def test_signals_are_seen_by_the_signaller_s_team_only() -> None:
    """Checked from every seat, 0 included (seat 0 is a seat, not the spectator)."""
    state = position(fill_hands({2: "7H 7S 9D 10C JC"}), opener=0)
    state, events = _step(state, ToggleSignal(2, THREE))
    for seat in range(SEATS):
        rows = {row["seat"]: row for row in view(state, seat)["signals"]}
        if seat % 2 == 0:  # team A, the signaller's
            assert set(rows) == {0, 2, 4, 6}, seat
            assert rows[2] == {"seat": 2, "three_set": True, "five_set": False}, seat
            assert redact(events[0], seat) == {"seat": 2, "kind": "three_set"}, seat
        else:
            assert set(rows) == {1, 3, 5, 7}, seat
            assert not any(row["three_set"] or row["five_set"] for row in rows.values()), seat
            assert redact(events[0], seat) is None, seat
    assert view(state, None)["signals"] == []
    assert redact(events[0], None) is None


def test_audience_says_exactly_who_may_see_an_event_and_taps_are_the_seat_s_own() -> None:
    """The table numbers versions per viewer from `audience`, and limits taps per seat
    from `tapped_by`: both must agree with the rules' own redaction and decisions."""
    rng = random.Random(8)
    state = initial_state({})
    seen: set[str] = set()
    for _ in range(400):
        t = turn(state)
        if t.is_chance:
            command: object = chance_command(state, rng.randbytes(32))
        else:
            seat = rng.randrange(SEATS)
            taps = [c for c in legal_commands(state, seat) if isinstance(c, ToggleSignal)]
            moves = legal_commands(state, rng.choice(t.seats))
            command = rng.choice(taps) if taps and rng.random() < 0.3 else rng.choice(moves)
        state, events = _step(state, command)
        for event in events:
            seen.add(type(event).__name__)
            seats = audience(event)
            for viewer in (None, *range(SEATS)):
                hidden = seats is not None and viewer not in seats
                assert (redact(event, viewer) is None) is hidden, (event, viewer)
            toggled = command.seat if isinstance(command, ToggleSignal) else None
            assert tapped_by(event) == (
                toggled if isinstance(event, SignalSet | SignalCleared) else None
            )
    assert {"SignalSet", "SignalCleared", "CardsLed"} <= seen
