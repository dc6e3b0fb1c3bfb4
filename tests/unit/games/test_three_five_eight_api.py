"""The decider's surface: protocol, codec, options, texts, turns, views and seeds."""

from __future__ import annotations

import json
from typing import Any

import pytest

import kozyr.games.three_five_eight as game
from kozyr.games import fair_deal
from kozyr.games.cards import parse_card, parse_cards
from kozyr.games.codec import decode_event, encode_event, registry_of
from kozyr.games.decider import CHANCE, Decider
from kozyr.games.errors import OptionsError, RuleError
from kozyr.games.three_five_eight import (
    CardExchanged,
    CardPlayed,
    CardsDealt,
    CardsDiscarded,
    ChooseContract,
    Contract,
    ContractChosen,
    DealCards,
    DealScored,
    DealSeedRevealed,
    Discard,
    DrawFirstDealer,
    ExchangePlanned,
    ExchangeSkipped,
    FirstDealerDrawn,
    GameEnded,
    GiveCard,
    HandsCompleted,
    Phase,
    PlayCard,
    Role,
    State,
    TalonTaken,
    Transfer,
    TrickTaken,
)
from kozyr.games.three_five_eight import texts as texts_module
from kozyr.texts import Lang

DECIDER: Decider[game.State, game.Command, game.Event] = game  # mypy checks the module

TURN_KINDS = ["contract", "exchange_give", "discard", "play", "over"]
SEED = bytes(range(32))
HANDS, TALON = game.deal_from_seed(SEED)

SAMPLES: list[Any] = [
    DrawFirstDealer(SEED),
    DealCards(SEED),
    ChooseContract(1, Contract.MINIMUM_TRICKS),
    GiveCard(0, parse_card("10H")),
    Discard(2, parse_cards(["2C", "3D", "AS", "10H"])),
    PlayCard(1, parse_card("QS")),
    FirstDealerDrawn(2, SEED),
    CardsDealt(1, 2, fair_deal.commitment(SEED), SEED, HANDS, TALON),
    ContractChosen(1, 0, Contract.HEARTS),
    HandsCompleted(1, tuple(h[6:] for h in HANDS)),
    ExchangePlanned(2, (Transfer(1, 2, 2), Transfer(1, 0, 1))),
    CardExchanged(0, 1, 1, parse_card("4D"), parse_card("AD")),
    ExchangeSkipped(1, 0, 1),
    TalonTaken(0, TALON),
    CardsDiscarded(0, TALON),
    CardPlayed(2, parse_card("JC")),
    TrickTaken(16, 1, 0, parse_cards(["2H", "AH", "3C"])),
    DealScored(1, 2, Contract.SPADES, (8, 5, 3), (9, 4, 3), (1, -1, 0), (1, -1, 0)),
    DealSeedRevealed(1, fair_deal.commitment(SEED), SEED),
    GameEnded((5, 5, -10), (1, 1, 3)),
]

VIEW_KEYS = {
    "game_id",
    "seat",
    "options",
    "phase",
    "turn",
    "deal_number",
    "deals_total",
    "first_dealer",
    "dealer",
    "declarer",
    "third",
    "roles",
    "contract",
    "trump",
    "targets",
    "tricks",
    "hand",
    "hand_counts",
    "talon_count",
    "talon",
    "discards",
    "discard_count",
    "trick",
    "trick_leader",
    "tricks_played",
    "last_trick",
    "contracts_used",
    "exchange",
    "deal_scores",
    "totals",
    "deal_commitment",
    "deal_seed",
    "result",
}


def step(state: State, command: Any) -> State:
    for event in game.decide(state, command):
        state = game.evolve(state, event)
    return state


def reason(state: State, command: Any) -> str:
    with pytest.raises(RuleError) as caught:
        game.decide(state, command)
    return caught.value.reason


# -------------------------------------------------------------------------- codec


def test_every_command_and_event_type_round_trips_through_json() -> None:
    assert {type(s) for s in SAMPLES} == set(game.COMMANDS) | set(game.EVENTS)
    registry = registry_of([*game.COMMANDS, *game.EVENTS])
    for sample in SAMPLES:
        name, data = encode_event(sample)
        text = json.dumps(data)
        assert decode_event(registry, name, json.loads(text)) == sample


def test_the_json_of_a_deal_is_readable() -> None:
    _, data = encode_event(CardsDealt(1, 2, fair_deal.commitment(SEED), SEED, HANDS, TALON))
    assert data["seed"] == SEED.hex()
    assert data["hands"][0][:2] == ["7H", "8C"]
    assert data["talon"] == ["9S", "5H", "5D", "AC"]


def test_public_events_are_redacted_to_themselves() -> None:
    for sample in SAMPLES:
        if isinstance(sample, CardsDealt | HandsCompleted | CardExchanged):
            continue
        if isinstance(sample, TalonTaken | CardsDiscarded):
            continue
        if type(sample) in game.COMMANDS:
            continue
        for seat in (0, 1, 2, None):
            assert game.redact(sample, seat) == encode_event(sample)[1]


def test_a_deal_hides_its_seed_and_shows_its_commitment() -> None:
    deal = CardsDealt(1, 2, fair_deal.commitment(SEED), SEED, HANDS, TALON)
    for seat in (0, 1, 2, None):
        shown = game.redact(deal, seat)
        assert shown is not None
        assert SEED.hex() not in json.dumps(shown)
        assert shown["commitment"] == fair_deal.commitment(SEED)
        assert shown["hand_counts"] == [16, 16, 16]
        assert shown["talon_count"] == 4


# ------------------------------------------------------------------------ options


def test_default_options() -> None:
    state = game.initial_state({})
    assert state.options == game.Options(must_trump=False, turn_seconds=180)
    assert game.view(state, None)["options"] == {"must_trump": False, "turn_seconds": 180}


@pytest.mark.parametrize(
    "options",
    [{"must_trump": True}, {"turn_seconds": 10}, {"turn_seconds": 3600, "must_trump": False}],
)
def test_valid_options(options: dict[str, Any]) -> None:
    state = game.initial_state(options)
    for key, value in options.items():
        assert getattr(state.options, key) == value


@pytest.mark.parametrize(
    ("options", "words"),
    [
        ({"must_trumps": True}, "unknown option"),
        ({"must_trump": 1}, "must_trump"),
        ({"must_trump": "yes"}, "must_trump"),
        ({"turn_seconds": 9}, "between 10 and 3600"),
        ({"turn_seconds": 3601}, "between 10 and 3600"),
        ({"turn_seconds": True}, "whole number"),
        ({"turn_seconds": 60.0}, "whole number"),
        ({"turn_seconds": "60"}, "whole number"),
    ],
)
def test_invalid_options_are_refused(options: dict[str, Any], words: str) -> None:
    with pytest.raises(OptionsError, match=words) as caught:
        game.initial_state(options)
    assert caught.value.reason == "INVALID_OPTIONS"


def test_options_must_be_a_mapping() -> None:
    with pytest.raises(OptionsError, match="mapping"):
        game.initial_state([("must_trump", True)])  # type: ignore[arg-type]


# -------------------------------------------------------------------------- texts


def test_every_reason_has_a_text_in_every_language() -> None:
    for code in texts_module.REASONS:
        error = texts_module.error(code, suit="♠", trump="♥", card="AS", seat=1, contract="NT")
        assert error.reason == code
        for lang in Lang:
            message = error.message(lang)
            assert message
            assert "{" not in message
        assert error.message(Lang.RO) != error.message(Lang.EN)
        assert error.message("it-IT") == error.message(Lang.IT)


@pytest.mark.parametrize(
    ("catalogue", "keys"),
    [
        (texts_module.CONTRACT_NAMES, list(Contract)),
        (texts_module.PHASE_NAMES, list(Phase)),
        (texts_module.ROLE_NAMES, list(Role)),
        (
            texts_module.TURN_KIND_NAMES,
            [CHANCE, "contract", "exchange_give", "discard", "play", "over"],
        ),
    ],
)
def test_every_name_exists_in_every_language(catalogue: Any, keys: list[Any]) -> None:
    assert set(catalogue) == set(keys)
    for key in keys:
        for lang in Lang:
            assert texts_module.name(catalogue, key, lang)
    assert texts_module.name(texts_module.CONTRACT_NAMES, Contract.NO_TRUMP, Lang.IT) == (
        "Senza atout"
    )


def test_rule_errors_speak_the_players_language() -> None:
    state = step(game.initial_state({}), DrawFirstDealer(SEED))
    state = step(state, DealCards(SEED))
    with pytest.raises(RuleError) as caught:
        game.decide(state, ChooseContract(0, Contract.SPADES))  # declarer is seat 1
    assert caught.value.reason == "NOT_YOUR_TURN"
    assert caught.value.message(Lang.RO) == "Nu este rândul tău."
    assert caught.value.message(Lang.IT) == "Non è il tuo turno."


# -------------------------------------------------------------------- chance, turns


def test_turns_of_a_deal() -> None:
    state = game.initial_state({})
    t = game.turn(state)
    assert (t.number, t.kind, t.seats, t.is_chance) == (1, CHANCE, (), True)
    assert game.view(state, 0)["phase"] == "draw_dealer"
    state = step(state, game.chance_command(state, SEED))
    assert game.turn(state) == game.turn(state).__class__(2, CHANCE, ())
    first = state.first_dealer
    assert first == fair_deal.draw_index(SEED, 3) == 0
    state = step(state, game.chance_command(state, SEED))
    assert game.turn(state).kind == "contract"
    assert game.turn(state).seats == (1,)  # dealer 0 → declarer 1
    assert game.turn(state).number == 3
    state = step(state, ChooseContract(1, Contract.NO_TRUMP))
    assert (game.turn(state).kind, game.turn(state).seats) == ("discard", (1,))
    state = step(state, game.default_command(state, 1))
    assert game.turn(state).number == 5
    while game.turn(state).kind == "play":
        seat = game.turn(state).seats[0]
        before = game.turn(state).number
        state = step(state, game.default_command(state, seat))
        assert game.turn(state).number == before + 1
    assert game.turn(state).number == 5 + 48
    assert game.turn(state).is_chance
    assert game.view(state, 2)["phase"] == "deal"
    assert game.view(state, 2)["turn"]["kind"] == CHANCE


def test_the_seed_is_revealed_when_the_deal_ends_and_re_derives_it() -> None:
    state = step(game.initial_state({}), DrawFirstDealer(SEED))
    deal_seed = bytes(range(50, 82))
    (dealt,) = game.decide(state, DealCards(deal_seed))
    assert isinstance(dealt, CardsDealt)
    state = game.evolve(state, dealt)
    for seat in (0, 1, 2, None):
        v = game.view(state, seat)
        assert v["deal_seed"] is None
        assert v["deal_commitment"] == fair_deal.commitment(deal_seed)
    state = step(state, ChooseContract(1, Contract.MINIMUM_TRICKS))
    events = []
    while not game.turn(state).is_chance:
        command = game.default_command(state, game.turn(state).seats[0])
        assert game.view(state, 0)["deal_seed"] is None
        for event in game.decide(state, command):
            state = game.evolve(state, event)
            events.append(event)
    revealed = events[-1]
    assert isinstance(revealed, DealSeedRevealed)
    assert game.redact(revealed, None) == {
        "deal": 1,
        "commitment": fair_deal.commitment(deal_seed),
        "seed": deal_seed.hex(),
    }
    assert game.view(state, None)["deal_seed"] == deal_seed.hex()
    # a verifier re-derives the deal from the revealed seed alone (docs/fair-deal.md)
    assert fair_deal.commitment(revealed.seed) == revealed.commitment == dealt.commitment
    deck = fair_deal.shuffle(game.DECK, revealed.seed)
    assert dealt.hands == (deck[0:16], deck[16:32], deck[32:48])
    assert dealt.talon == deck[48:52]


def test_chance_errors() -> None:
    state = game.initial_state({})
    assert reason(state, DrawFirstDealer(b"short")) == "INVALID_SEED"
    assert reason(state, DealCards(SEED)) == "WRONG_PHASE"
    assert reason(state, PlayCard(0, parse_card("AS"))) == "NOT_YOUR_TURN"
    with pytest.raises(RuleError, match="NOT_A_PLAYER_MOVE"):
        game.default_command(state, 0)
    assert game.legal_commands(state, 0) == []
    state = step(state, DrawFirstDealer(SEED))
    assert reason(state, DrawFirstDealer(SEED)) == "WRONG_PHASE"
    state = step(state, DealCards(SEED))
    with pytest.raises(RuleError, match="WRONG_PHASE"):
        game.chance_command(state, SEED)
    with pytest.raises(RuleError, match="NOT_YOUR_TURN"):
        game.default_command(state, 0)
    assert reason(state, ChooseContract(7, Contract.SPADES)) == "INVALID_SEAT"
    assert reason(state, ChooseContract(True, Contract.SPADES)) == "INVALID_SEAT"
    assert reason(state, "play the ace") == "UNKNOWN_COMMAND"


# -------------------------------------------------------------------------- views


def test_view_keys_are_the_documented_ones_in_every_phase() -> None:
    assert set(game.VIEW_KEYS) == VIEW_KEYS
    assert len(game.VIEW_KEYS) == len(VIEW_KEYS)
    state = game.initial_state({"must_trump": True})
    seen = set()
    seeds = iter(bytes([i]) * 32 for i in range(1, 40))
    while not game.is_over(state):
        for seat in (0, 1, 2, None):
            v = game.view(state, seat)
            assert set(v) == VIEW_KEYS
            json.dumps(v)
        seen.add(state.phase)
        t = game.turn(state)
        command = (
            game.chance_command(state, next(seeds))
            if t.is_chance
            else game.default_command(state, t.seats[0])
        )
        state = step(state, command)
        if len(state.records) >= 3:
            break
    assert seen >= {Phase.DRAW_DEALER, Phase.DEAL, Phase.CONTRACT, Phase.DISCARD, Phase.PLAY}


def test_view_during_play() -> None:
    state = step(game.initial_state({}), DrawFirstDealer(SEED))
    state = step(state, DealCards(SEED))
    state = step(state, ChooseContract(1, Contract.SPADES))
    state = step(state, game.default_command(state, 1))
    state = step(state, game.default_command(state, 1))  # seat 1 leads
    v = game.view(state, 2)
    assert v["phase"] == "play"
    assert v["deal_number"] == 1
    assert (v["dealer"], v["declarer"], v["third"]) == (0, 1, 2)
    assert v["roles"] == ["dealer", "declarer", "third"]
    assert v["contract"] == "S"
    assert v["trump"] == "S"
    assert v["targets"] == [3, 8, 5]
    assert v["hand_counts"] == [16, 15, 16]
    assert len(v["hand"]) == 16
    assert v["trick_leader"] == 1
    assert len(v["trick"]) == 1
    assert v["trick"][0]["seat"] == 1
    assert v["turn"]["seats"] == [2]
    assert v["contracts_used"] == [[], ["S"], []]
    assert v["talon"] is None
    assert v["discards"] is None
    assert v["discard_count"] == 4
    assert v["talon_count"] == 0
    assert v["exchange"] is None
    assert v["result"] is None
    # a hand is shown sorted by suit ♣ ♦ ♥ ♠, then rank 2 … A
    suits = [card[-1] for card in v["hand"]]
    assert suits == sorted(suits, key="CDHS".index)


@pytest.mark.parametrize("seat", [-1, 3, True])
def test_views_and_histories_exist_only_for_real_seats(seat: int) -> None:
    state = game.initial_state({})
    with pytest.raises(ValueError, match="no seat"):
        game.view(state, seat)
    with pytest.raises(ValueError, match="no seat"):
        game.redact(FirstDealerDrawn(0, SEED), seat)
