"""Views, redacted history and the JSON codec of every command and event."""

from __future__ import annotations

import json

import pytest

from kozyr.games.cards import Suit
from kozyr.games.codec import decode_event, encode_event, registry_of
from kozyr.games.khozor_teams import (
    COMMANDS,
    EVENTS,
    VIEW_KEYS,
    Beat,
    CardsBeaten,
    CardsLed,
    ClearReason,
    ConfirmOpener,
    CycleSlept,
    DealRound,
    DealSeedRevealed,
    DrawOpeningTeam,
    Event,
    Lead,
    MatchWon,
    OpenerConfirmed,
    OpeningTeamDrawn,
    PickUp,
    PilePickedUp,
    ReserveDrawn,
    RoundDealt,
    RoundWon,
    SignalCleared,
    SignalKind,
    SignalSet,
    State,
    Team,
    ToggleSignal,
    decide,
    evolve,
    initial_state,
    redact,
    view,
)
from kozyr.games.khozor_teams.scenarios import cards, fill_hands, position

SEED = bytes(range(32))


def _step(state: State, command: object) -> tuple[State, list[Event]]:
    events = decide(state, command)
    for event in events:
        state = evolve(state, event)
    return state, events


def _round_in_play() -> State:
    hands = fill_hands({0: "7C 9H JK-red", 1: "8C 10D", 2: "QS KS"}, reserve="AS")
    state = position(hands, "AS", opener=0)
    state, _ = _step(state, Lead(0, cards("7C")))
    state, _ = _step(state, Beat(1, cards("8C")))
    return state


def test_view_keys_and_json() -> None:
    states = [initial_state({}), _round_in_play()]
    for state in states:
        for seat in [None, *range(8)]:
            shown = view(state, seat)
            assert tuple(shown) == VIEW_KEYS
            assert json.loads(json.dumps(shown)) == shown


def test_view_of_a_round_in_play() -> None:
    state = _round_in_play()
    mine = view(state, 0)
    assert mine["viewer_seat"] == 0
    assert mine["viewer_team"] == "A"
    assert mine["phase"] == "play"
    assert mine["round"] == 1
    assert mine["trump"] == "H"
    assert mine["hand"] == ["AS", "9H", "JK-red"]  # weakest first: non-trumps, trumps, jokers
    assert mine["hand_counts"] == [3, 1, 2, 5, 5, 5, 5, 5]
    assert mine["reserve_count"] == 0
    assert mine["sleeping_count"] == 0
    assert mine["pile"] == [
        {"seat": 0, "kind": "lead", "cards": ["7C"]},
        {"seat": 1, "kind": "beat", "cards": ["8C"]},
    ]
    assert mine["turn"] == {"number": 5, "kind": "defend", "seats": [2]}
    assert mine["opening_team"] == "A"
    assert mine["opener"] == 0
    assert mine["wins"] == {"A": 0, "B": 0}
    assert mine["turn_seconds"] == 180
    assert mine["deal_commitment"] == state.commitment
    assert mine["deal_seed"] is None
    assert view(state, 1)["hand"] == ["10D"]
    assert view(state, None)["hand"] == []
    assert view(state, None)["viewer_team"] is None
    with pytest.raises(ValueError, match="seat"):
        view(state, 8)
    with pytest.raises(ValueError, match="seat"):
        redact(CardsLed(0, cards("7C")), -1)


def test_the_seed_shows_only_once_the_round_is_over() -> None:
    state = position(fill_hands({0: "9H"}), opener=0)
    assert view(state, 0)["deal_seed"] is None
    state, events = _step(state, Lead(0, cards("9H")))
    revealed = next(e for e in events if isinstance(e, DealSeedRevealed))
    assert view(state, 3)["deal_seed"] == revealed.seed.hex()
    assert redact(revealed, 3) == {"round_no": 1, "seed": revealed.seed.hex()}
    assert view(state, 3)["round_winners"] == [{"round": 1, "team": "A", "seat": 0}]


def test_history_names_no_card_and_no_unrevealed_seed() -> None:
    state = initial_state({})
    state, drawn = _step(state, DrawOpeningTeam(SEED))
    state, dealt = _step(state, DealRound(bytes(reversed(SEED))))
    for seat in [None, *range(8)]:
        shown = redact(dealt[0], seat)
        assert shown is not None
        assert set(shown) == {
            "round_no",
            "trump",
            "opening_team",
            "commitment",
            "hand_counts",
            "reserve_count",
        }
        assert shown["hand_counts"] == [5] * 8
        assert shown["reserve_count"] == 3
        assert redact(drawn[0], seat) == encode_event(drawn[0])[1]
    hidden: list[CardsLed | CardsBeaten | PilePickedUp | ReserveDrawn] = [
        CardsLed(0, cards("7C 7D 8S")),
        CardsBeaten(1, cards("9C")),
        PilePickedUp(2, cards("7C 9C")),
        ReserveDrawn(3, cards("AS AD")),
    ]
    for event in hidden:
        for seat in [None, *range(8)]:
            assert redact(event, seat) == {"seat": event.seat, "card_count": len(event.cards)}


def _one_of_each() -> list[object]:
    two = cards("7C 8D")
    return [
        DrawOpeningTeam(SEED),
        DealRound(SEED),
        ConfirmOpener(2, 4),
        Lead(0, two),
        Beat(1, cards("JK-red")),
        PickUp(3),
        ToggleSignal(5, SignalKind.FIVE_SET),
        OpeningTeamDrawn(SEED, "ab" * 32, Team.B),
        RoundDealt(3, Suit.SPADES, Team.A, "cd" * 32, SEED, (two, (), cards("10H")), two),
        OpenerConfirmed(1, 3),
        CardsLed(0, two),
        CardsBeaten(1, cards("7H AS")),
        PilePickedUp(2, two),
        ReserveDrawn(3, cards("QS")),
        CycleSlept(7, 8),
        SignalSet(4, SignalKind.THREE_SET),
        SignalCleared(4, SignalKind.THREE_SET, ClearReason.ROUND_END),
        RoundWon(2, Team.B, 5),
        DealSeedRevealed(2, SEED),
        MatchWon(Team.A, 5, 3),
    ]


def test_every_command_and_event_round_trips_through_json() -> None:
    samples = _one_of_each()
    assert {type(s) for s in samples} == set(COMMANDS) | set(EVENTS)
    registry = registry_of([*COMMANDS, *EVENTS])
    for sample in samples:
        name, data = encode_event(sample)
        assert decode_event(registry, name, json.loads(json.dumps(data))) == sample
