"""A round of Khözör: deal, opener, defence, pickup, refill, sleep, victory, match."""

from __future__ import annotations

import hashlib
import random

import pytest

from kozyr.games import fair_deal, khozor_teams
from kozyr.games.cards import JokerColor, Rank, RankOrder, Suit
from kozyr.games.decider import CHANCE, Decider
from kozyr.games.errors import OptionsError, RuleError
from kozyr.games.khozor_teams import (
    Beat,
    CardsBeaten,
    CardsLed,
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
    Phase,
    PickUp,
    PilePickedUp,
    ReserveDrawn,
    RoundDealt,
    RoundWon,
    State,
    Team,
    ToggleSignal,
    chance_command,
    decide,
    default_command,
    evolve,
    fold,
    initial_state,
    is_over,
    legal_commands,
    result,
    turn,
)
from kozyr.games.khozor_teams.model import SignalKind
from kozyr.games.khozor_teams.scenarios import cards, deal_events, fill_hands, position

DECIDER: Decider[khozor_teams.State, khozor_teams.Command, khozor_teams.Event] = khozor_teams


def _step(state: State, command: object) -> tuple[State, list[Event]]:
    events = decide(state, command)
    for event in events:
        state = evolve(state, event)
    return state, events


def _reason(state: State, command: object) -> str:
    with pytest.raises(RuleError) as refused:
        decide(state, command)
    return refused.value.reason


def _seed(n: int) -> bytes:
    return hashlib.sha256(f"test seed {n}".encode()).digest()


# ------------------------------------------------------------------ deal and opener


def test_deal_is_rederivable_from_the_documented_positions() -> None:
    state = initial_state({})
    state, drawn = _step(state, DrawOpeningTeam(_seed(1)))
    expected_team = Team.A if fair_deal.draw_index(_seed(1), 2) == 0 else Team.B
    assert drawn == [
        OpeningTeamDrawn(_seed(1), hashlib.sha256(_seed(1)).hexdigest(), expected_team)
    ]
    state, events = _step(state, DealRound(_seed(2)))
    (dealt,) = events
    assert isinstance(dealt, RoundDealt)
    weakest_first = ["7", "8", "9", "10", "J", "Q", "K", "3", "2", "A"]
    deck = RankOrder(tuple(Rank(r) for r in weakest_first)).deck(
        jokers=(JokerColor.GRAY, JokerColor.BLACK, JokerColor.RED)
    )
    order = fair_deal.shuffle(deck, _seed(2))
    assert dealt.hands == tuple(order[5 * s : 5 * s + 5] for s in range(8))
    assert dealt.reserve == order[40:43]
    assert dealt.commitment == hashlib.sha256(_seed(2)).hexdigest()
    assert len(set(order)) == 43
    assert (dealt.round_no, dealt.trump, dealt.opening_team) == (1, Suit.HEARTS, expected_team)
    assert turn(state).kind == "confirm_opener"
    assert turn(state).seats == expected_team.seats


def test_both_teams_can_be_drawn_to_open() -> None:
    teams = set()
    for n in range(20):
        (event,) = decide(initial_state({}), DrawOpeningTeam(_seed(n)))
        assert isinstance(event, OpeningTeamDrawn)
        teams.add(event.team)
    assert teams == {Team.A, Team.B}


def test_turn_numbers_grow_at_every_decision_and_not_for_signals() -> None:
    state = initial_state({})
    assert turn(state) == khozor_teams.turn(state)
    numbers = [turn(state).number]
    kinds = [turn(state).kind]
    for seed in (_seed(3), _seed(4)):
        state, _ = _step(state, chance_command(state, seed))
        numbers.append(turn(state).number)
        kinds.append(turn(state).kind)
    team = state.opening_team
    assert team is not None
    state, _ = _step(state, ConfirmOpener(team.seats[1], team.seats[2]))
    numbers.append(turn(state).number)
    kinds.append(turn(state).kind)
    assert turn(state).seats == (team.seats[2],)
    assert kinds == [CHANCE, CHANCE, "confirm_opener", "lead"]
    assert numbers == [0, 1, 2, 3]
    toggles = [c for s in range(8) for c in legal_commands(state, s) if isinstance(c, ToggleSignal)]
    for toggle in toggles:
        state, _ = _step(state, toggle)
        assert turn(state).number == 3
    state, _ = _step(state, default_command(state, team.seats[2]))
    assert (turn(state).number, turn(state).kind) == (4, "defend")


def _before_confirmation(team: Team) -> State:
    return fold({}, deal_events(fill_hands({}), opening_team=team))


def test_any_player_of_the_opening_team_confirms_once() -> None:
    before = _before_confirmation(Team.B)
    assert before.phase is Phase.CONFIRM_OPENER
    assert _reason(before, ConfirmOpener(2, 1)) == "NOT_ON_OPENING_TEAM"
    assert _reason(before, ConfirmOpener(3, 2)) == "OPENER_NOT_ON_OPENING_TEAM"
    assert _reason(before, ConfirmOpener(3, 8)) == "INVALID_SEAT"
    assert _reason(before, Lead(1, (before.hands[1][0],))) == "WRONG_PHASE"
    after, events = _step(before, ConfirmOpener(7, 5))
    assert events == [OpenerConfirmed(7, 5)]
    assert (after.opener, after.to_act, turn(after).kind) == (5, 5, "lead")
    assert _reason(after, ConfirmOpener(1, 3)) == "OPENER_ALREADY_CONFIRMED"


def test_chance_commands_only_when_the_table_must_act() -> None:
    state = initial_state({})
    assert _reason(state, DealRound(_seed(1))) == "WRONG_PHASE"
    assert _reason(state, DrawOpeningTeam(b"short")) == "INVALID_SEED"
    state, _ = _step(state, DrawOpeningTeam(_seed(1)))
    assert _reason(state, DrawOpeningTeam(_seed(1))) == "WRONG_PHASE"
    assert isinstance(chance_command(state, _seed(2)), DealRound)
    state, _ = _step(state, DealRound(_seed(2)))
    with pytest.raises(RuleError):
        chance_command(state, _seed(3))
    assert _reason(state, DealRound(_seed(3))) == "WRONG_PHASE"
    with pytest.raises(RuleError) as refused:
        default_command(initial_state({}), 0)
    assert refused.value.reason == "NOT_A_PLAYER_MOVE"


# ------------------------------------------------------------------ defence

GREEDY_TRAP = {0: "7C 7S 8D 10D JD", 1: "7H 8C 8S JK-red 9C"}
"""Seat 0 leads 7♣ 7♠ 8♦; with ♥ trump 7♥ beats all three, 8♣ only 7♣, 8♠ only 7♠."""


def _after_trap_lead() -> State:
    state = position(fill_hands(GREEDY_TRAP), opener=0)
    state, _ = _step(state, Lead(0, cards("7C 7S 8D")))
    return state


def test_defence_needs_a_real_matching_not_first_fit() -> None:
    state = _after_trap_lead()
    # In this order first-fit puts 7♥ on 7♣ and strands 8♣; a matching exists.
    state, events = _step(state, Beat(1, cards("7H 8C 8S")))
    assert events[0] == CardsBeaten(1, cards("7H 8C 8S"))
    assert [p.seat for p in state.pile] == [0, 1]
    assert turn(state).seats == (2,)


@pytest.mark.parametrize(
    ("defence", "reason"),
    [
        ("7H 8C", "WRONG_CARD_COUNT"),
        ("7H 8C 8S 9C", "WRONG_CARD_COUNT"),
        ("JK-red 8C 8S", "JOKER_NOT_SINGLE"),
        ("8C 8S 9C", "DOES_NOT_BEAT"),  # nothing beats 8♦
        ("7H 8C 8C", "DUPLICATE_CARD"),
        ("7H 8C AS", "CARD_NOT_IN_HAND"),
    ],
)
def test_refused_defences(defence: str, reason: str) -> None:
    assert _reason(_after_trap_lead(), Beat(1, cards(defence))) == reason


def test_defence_turn_rules() -> None:
    state = _after_trap_lead()
    assert _reason(state, Beat(2, cards("7H 8C 8S"))) == "NOT_YOUR_TURN"
    assert _reason(state, Lead(1, cards("9C"))) == "MUST_DEFEND"
    fresh = position(fill_hands(GREEDY_TRAP), opener=0)
    assert _reason(fresh, Beat(0, cards("7C"))) == "NOTHING_TO_BEAT"
    assert _reason(fresh, PickUp(0)) == "NOTHING_TO_BEAT"


def test_a_single_joker_beats_the_trump_ace_and_jokers_rank_among_themselves() -> None:
    hands = fill_hands({0: "AH 7C", 1: "JK-gray 8C", 2: "JK-black 9C", 3: "JK-red 10C"})
    state = position(hands, opener=0)
    state, _ = _step(state, Lead(0, cards("AH")))
    state, _ = _step(state, Beat(1, cards("JK-gray")))
    assert _reason(state, Beat(2, cards("9C"))) == "DOES_NOT_BEAT"
    state, _ = _step(state, Beat(2, cards("JK-black")))
    state, events = _step(state, Beat(3, cards("JK-red")))
    assert isinstance(events[0], CardsBeaten)


def test_every_listed_command_is_accepted_and_the_list_has_pickup_and_default() -> None:
    state = _after_trap_lead()
    listed = legal_commands(state, 1)
    assert PickUp(1) in listed
    assert default_command(state, 1) in listed
    for command in listed:
        decide(state, command)
    others = legal_commands(state, 2)
    assert all(isinstance(c, ToggleSignal) for c in others)


# ------------------------------------------------------------------ pickup and refill


def test_pickup_takes_the_whole_cycle_and_the_next_player_leads() -> None:
    hands = fill_hands({0: "7C 9H", 1: "8C 9D", 2: "QS KS"}, reserve="AS AD AC")
    state = position(hands, "AS AD AC", opener=0)
    state, led = _step(state, Lead(0, cards("7C")))
    assert led == [CardsLed(0, cards("7C")), ReserveDrawn(0, cards("AS AD AC"))]
    hands = fill_hands({0: "7C 9H 8H QH", 1: "8C 9D", 2: "QS KS"}, reserve="AS")
    state = position(hands, "AS", opener=0)
    state, _ = _step(state, Lead(0, cards("7C")))
    state, beaten = _step(state, Beat(1, cards("8C")))
    assert beaten == [CardsBeaten(1, cards("8C"))]  # the reserve ran out on seat 0
    state, picked = _step(state, PickUp(2))
    assert picked == [PilePickedUp(2, cards("7C 8C"))]  # no draw after a pickup
    assert set(state.hands[2]) == set(cards("QS KS 7C 8C"))
    assert state.pile == ()
    assert turn(state).kind == "lead"
    assert turn(state).seats == (3,)


def test_refill_stops_when_the_reserve_runs_short() -> None:
    hand = "7H 7S 9D 10C JC"
    state = position(fill_hands({0: hand}, reserve="AS AD"), "AS AD", opener=0)
    state, events = _step(state, Lead(0, cards("7H 7S 9D")))
    assert events == [CardsLed(0, cards("7H 7S 9D")), ReserveDrawn(0, cards("AS AD"))]
    assert len(state.hands[0]) == 4
    assert state.reserve == ()


def test_no_refill_above_five_cards() -> None:
    hand = "7H 7S 9D 10C JC QC"
    state = position(fill_hands({0: hand}, reserve="AS"), "AS", opener=0)
    state, events = _step(state, Lead(0, cards("7H")))
    assert events == [CardsLed(0, cards("7H"))]
    assert state.reserve == cards("AS")


# ------------------------------------------------------------------ sleep and victory

CLIMB = ["7C", "8C", "9C", "10C", "JC", "QC", "KC", "3C"]


def _climb(last: str = "3C AD", reserve: str = "") -> tuple[State, list[list[Event]]]:
    chosen = {s: f"{CLIMB[s]} {['7D', '8D', '9D', '10D', 'JD', 'QD', 'KD'][s]}" for s in range(7)}
    chosen[7] = last
    state = position(fill_hands(chosen, reserve=reserve), reserve, opener=0)
    state, first = _step(state, Lead(0, cards(CLIMB[0])))
    steps = [first]
    for seat in range(1, 8):
        state, events = _step(state, Beat(seat, cards(CLIMB[seat])))
        steps.append(events)
    return state, steps


def test_a_lead_and_seven_beats_sleep_and_the_eighth_player_leads() -> None:
    state, steps = _climb()
    assert all(not any(isinstance(e, CycleSlept) for e in s) for s in steps[:-1])
    assert steps[-1] == [CardsBeaten(7, cards("3C")), CycleSlept(7, 8)]
    assert state.pile == ()
    assert set(state.sleeping) == set(cards(" ".join(CLIMB)))
    assert turn(state).kind == "lead"
    assert turn(state).seats == (7,)


def test_the_eighth_beat_that_empties_a_hand_wins_instead_of_sleeping() -> None:
    state, steps = _climb(last="3C")
    assert steps[-1][0] == CardsBeaten(7, cards("3C"))
    assert RoundWon(1, Team.B, 7) in steps[-1]
    assert not any(isinstance(e, CycleSlept) for e in steps[-1])
    assert state.phase is Phase.AWAITING_DEAL
    assert turn(state).kind == CHANCE


def test_victory_right_after_a_beat_with_an_empty_reserve() -> None:
    state = position(fill_hands({0: "7C 9H", 1: "8C"}), opener=0)
    state, _ = _step(state, Lead(0, cards("7C")))
    state, events = _step(state, Beat(1, cards("8C")))
    assert events == [
        CardsBeaten(1, cards("8C")),
        RoundWon(1, Team.B, 1),
        DealSeedRevealed(1, state.seed or b""),
    ]
    assert state.results[-1].team is Team.B
    assert turn(state).is_chance


def test_a_refill_comes_before_the_victory_check() -> None:
    """Seat 1 beats with its last card while the reserve still holds one: it draws,
    so its hand is not empty and the round goes on."""
    hands = fill_hands({0: "7C 9H 10H 8H QH 2H", 1: "8C"}, reserve="AS")
    state = position(hands, "AS", opener=0)
    state, _ = _step(state, Lead(0, cards("7C")))  # six cards left: no draw
    state, events = _step(state, Beat(1, cards("8C")))
    assert events == [CardsBeaten(1, cards("8C")), ReserveDrawn(1, cards("AS"))]
    assert state.phase is Phase.PLAY
    assert state.hands[1] == cards("AS")


def test_a_lead_that_empties_the_hand_wins_at_once() -> None:
    state = position(fill_hands({2: "9H"}), opener=2)
    state, events = _step(state, Lead(2, cards("9H")))
    assert events[:2] == [CardsLed(2, cards("9H")), RoundWon(1, Team.A, 2)]
    assert state.phase is Phase.AWAITING_DEAL


def test_the_match_ends_at_five_round_wins() -> None:
    state = position(fill_hands({0: "9H"}), wins=(4, 2), opener=0)
    assert state.round_no == 7
    state, events = _step(state, Lead(0, cards("9H")))
    assert events[-1] == MatchWon(Team.A, 5, 2)
    assert is_over(state)
    assert turn(state).kind == "over"
    outcome = result(state)
    assert outcome["wins"] == {"A": 5, "B": 2}
    assert outcome["winner"] == "A"
    assert [r["team"] for r in outcome["rounds"]] == ["A"] * 4 + ["B"] * 2 + ["A"]
    assert outcome["rounds"][-1] == {"round": 7, "team": "A", "seat": 0}
    assert _reason(state, DealRound(_seed(9))) == "GAME_OVER"
    assert _reason(state, Lead(0, cards("9H"))) == "GAME_OVER"
    assert _reason(state, ToggleSignal(0, SignalKind.THREE_SET)) == "GAME_OVER"
    assert legal_commands(state, 0) == []
    with pytest.raises(RuleError):
        default_command(state, 0)


def test_four_wins_do_not_end_the_match() -> None:
    state = position(fill_hands({0: "9H"}), wins=(3, 4), opener=0)
    state, events = _step(state, Lead(0, cards("9H")))
    assert not any(isinstance(e, MatchWon) for e in events)
    assert not is_over(state)
    assert result(state)["winner"] is None


def _play_match(seed: int) -> list[Event]:
    rng = random.Random(seed)
    state = initial_state({})
    log: list[Event] = []
    while not is_over(state):
        t = turn(state)
        if t.is_chance:
            command: object = chance_command(state, rng.randbytes(32))
        else:
            command = rng.choice(legal_commands(state, rng.choice(t.seats)))
        state, events = _step(state, command)
        log.extend(events)
    return log


def test_trump_cycles_and_the_winners_open_the_next_round() -> None:
    log = _play_match(seed=11)
    deals = [e for e in log if isinstance(e, RoundDealt)]
    wins = [e for e in log if isinstance(e, RoundWon)]
    assert len(deals) >= 5
    assert [d.trump for d in deals[:5]] == [
        Suit.HEARTS,
        Suit.DIAMONDS,
        Suit.SPADES,
        Suit.CLUBS,
        Suit.HEARTS,
    ]
    assert [d.round_no for d in deals] == list(range(1, len(deals) + 1))
    drawn = next(e for e in log if isinstance(e, OpeningTeamDrawn))
    assert deals[0].opening_team is drawn.team
    for won, next_deal in zip(wins, deals[1:], strict=False):
        assert next_deal.opening_team is won.team


# ------------------------------------------------------------------ timeouts


@pytest.mark.parametrize(
    ("hand", "expected"),
    [
        ("AH 7S JK-red 8C", "7S"),  # weakest non-trump
        ("7S 7C 9D", "7C"),  # ties broken by suit order ♣ ♦ ♥ ♠
        ("AH 8H JK-gray", "8H"),  # only trumps and a joker: the weakest trump
        ("JK-red JK-gray", "JK-gray"),  # nothing but jokers
    ],
)
def test_default_lead(hand: str, expected: str) -> None:
    state = position(fill_hands({0: hand}), opener=0)
    assert default_command(state, 0) == Lead(0, cards(expected))


@pytest.mark.parametrize(
    ("lead", "defence_hand", "expected"),
    [
        ("9D", "10D 7H AD JK-red", "10D"),
        ("9D", "7H JK-gray", "7H"),
        ("AH", "JK-black JK-gray", "JK-gray"),
        ("7C 7S 8D", "8C 8S 9D 7H 2H", "8C 8S 9D"),
        ("7C 7S 8D", "8C 8S 7H 2H", "8C 8S 7H"),
    ],
)
def test_default_beat_has_the_least_total_strength(
    lead: str, defence_hand: str, expected: str
) -> None:
    leader = f"{lead} {'JD QD KD 3D'}".split()[:5]
    state = position(fill_hands({0: " ".join(leader), 1: defence_hand}), opener=0)
    state, _ = _step(state, Lead(0, cards(lead)))
    command = default_command(state, 1)
    assert isinstance(command, Beat)
    assert set(command.cards) == set(cards(expected))


def test_default_defence_without_a_beat_picks_up() -> None:
    state = position(fill_hands({0: "AS 9D", 1: "7C 8C"}), opener=0)
    state, _ = _step(state, Lead(0, cards("AS")))
    assert default_command(state, 1) == PickUp(1)
    assert legal_commands(state, 1)[0] == PickUp(1)


def test_default_confirmation_is_the_lowest_seat_of_the_opening_team() -> None:
    before = _before_confirmation(Team.B)
    assert default_command(before, 5) == ConfirmOpener(5, 1)
    with pytest.raises(RuleError):
        default_command(before, 4)
    playing = position(fill_hands({}), opener=0)
    with pytest.raises(RuleError) as refused:
        default_command(playing, 1)
    assert refused.value.reason == "NOT_YOUR_TURN"


# ------------------------------------------------------------------ options


def test_options() -> None:
    assert initial_state({}).turn_seconds == 180
    assert initial_state({"turn_seconds": 10}).turn_seconds == 10
    assert initial_state({"turn_seconds": 3600}).turn_seconds == 3600


@pytest.mark.parametrize(
    ("options", "fragment"),
    [
        ({"turn_seconds": 9}, "between"),
        ({"turn_seconds": 3601}, "between"),
        ({"turn_seconds": "60"}, "integer"),
        ({"turn_seconds": 60.0}, "integer"),
        ({"turn_seconds": True}, "integer"),
        ({"must_trump": True}, "must_trump"),
    ],
)
def test_bad_options_are_refused(options: dict[str, object], fragment: str) -> None:
    with pytest.raises(OptionsError) as refused:
        initial_state(options)
    assert fragment in str(refused.value)
