"""Scenario tests of every 3-5-8 rule (RULES.md "Game 1").

Each scenario folds chosen events (the hands are whatever the `CardsDealt` event says)
and then sends real commands to `decide`. Earlier deals are summarised by the events
that record them (`ContractChosen`, `DealScored`, `DealSeedRevealed`): the exchange
depends on nothing else.

Seats: the first dealer is seat 2 in every scenario, so deal 1 has dealer 2,
declarer 0, third 1; deal 2 dealer 0, declarer 1, third 2; deal 3 dealer 1,
declarer 2, third 0.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pytest

import kozyr.games.three_five_eight as game
from kozyr.games import fair_deal
from kozyr.games.cards import Card, format_cards, parse_cards
from kozyr.games.errors import RuleError
from kozyr.games.three_five_eight import (
    DECK,
    CardExchanged,
    CardPlayed,
    CardsDealt,
    CardsDiscarded,
    ChooseContract,
    Contract,
    ContractChosen,
    DealScored,
    DealSeedRevealed,
    Discard,
    Event,
    ExchangePlanned,
    ExchangeSkipped,
    FirstDealerDrawn,
    GameEnded,
    GiveCard,
    HandsCompleted,
    PlayCard,
    State,
    TalonTaken,
    Transfer,
    TrickTaken,
)
from kozyr.games.three_five_eight.scoring import places

FIRST_DEALER = 2
NORMAL_TARGET = {1: 8, 2: 5, 0: 3}  # by (seat - dealer) % 3: declarer, third, dealer
MT_TARGET = {1: 3, 2: 5, 0: 8}
RANK_TEXTS = ("2", "3", "4", "5", "6", "7", "8", "9", "10", "J", "Q", "K", "A")  # weakest first


# ------------------------------------------------------------------------ builders


def cards(text: str) -> tuple[Card, ...]:
    return parse_cards(text.split())


def arrange(
    h0: str = "", h1: str = "", h2: str = "", talon: str = ""
) -> tuple[tuple[tuple[Card, ...], ...], tuple[Card, ...]]:
    """Hands that start with the given cards (in that order), filled up to 16 with the
    remaining cards in canonical deck order; the talon likewise filled up to 4."""
    wanted = [list(cards(h)) for h in (h0, h1, h2)]
    tal = list(cards(talon))
    named = [c for h in wanted for c in h] + tal
    assert len(named) == len(set(named)), "a card named twice"
    rest = [c for c in DECK if c not in named]
    for hand in wanted:
        while len(hand) < 16:
            hand.append(rest.pop(0))
    while len(tal) < 4:
        tal.append(rest.pop(0))
    assert not rest
    return tuple(tuple(h) for h in wanted), tuple(tal)


def seed_of(deal: int) -> bytes:
    return bytes([deal]) * 32


def dealt(deal: int, hands: tuple[tuple[Card, ...], ...], talon: tuple[Card, ...]) -> CardsDealt:
    dealer = (FIRST_DEALER + deal - 1) % 3
    seed = seed_of(deal)
    return CardsDealt(deal, dealer, fair_deal.commitment(seed), seed, hands, talon)


def past_deal(
    deal: int, contract: Contract, points: Sequence[int], totals_before: Sequence[int]
) -> list[Event]:
    """The record of a finished deal with the given points (plays omitted)."""
    dealer = (FIRST_DEALER + deal - 1) % 3
    declarer = (dealer + 1) % 3
    table = MT_TARGET if contract is Contract.MINIMUM_TRICKS else NORMAL_TARGET
    target = tuple(table[(s - dealer) % 3] for s in range(3))
    sign = -1 if contract is Contract.MINIMUM_TRICKS else 1
    tricks = tuple(t + sign * p for t, p in zip(target, points, strict=True))
    totals = tuple(a + b for a, b in zip(totals_before, points, strict=True))
    hands, talon = arrange()
    return [
        dealt(deal, hands, talon),
        ContractChosen(deal, declarer, contract),
        HandsCompleted(deal, tuple(h[6:] for h in hands)),
        DealScored(deal, dealer, contract, target, tricks, tuple(points), totals),
        DealSeedRevealed(deal, fair_deal.commitment(seed_of(deal)), seed_of(deal)),
    ]


def history(*deals: tuple[Contract, Sequence[int]]) -> list[Event]:
    """The game start and finished deals 1..n with the given contracts and points."""
    events: list[Event] = [FirstDealerDrawn(FIRST_DEALER, bytes(32))]
    totals: Sequence[int] = (0, 0, 0)
    for number, (contract, points) in enumerate(deals, start=1):
        events += past_deal(number, contract, points, totals)
        totals = tuple(a + b for a, b in zip(totals, points, strict=True))
    return events


def fold(events: list[Event], **options: Any) -> State:
    return game.fold(options, events)


def step(state: State, command: Any) -> tuple[State, list[Event]]:
    events = game.decide(state, command)
    for e in events:
        state = game.evolve(state, e)
    return state, events


def reason(state: State, command: Any) -> str:
    with pytest.raises(RuleError) as caught:
        game.decide(state, command)
    return caught.value.reason


def in_play(
    contract: Contract,
    hands: tuple[tuple[Card, ...], ...],
    talon: tuple[Card, ...],
    discards: str,
    **options: Any,
) -> State:
    """Deal 1 (declarer seat 0) after the contract, talon and discards: seat 0 leads."""
    events: list[Event] = [
        FirstDealerDrawn(FIRST_DEALER, bytes(32)),
        dealt(1, hands, talon),
        ContractChosen(1, 0, contract),
        HandsCompleted(1, tuple(h[6:] for h in hands)),
        TalonTaken(0, talon),
        CardsDiscarded(0, cards(discards)),
    ]
    return fold(events, **options)


def hand_of(state: State, seat: int) -> list[str]:
    assert state.deal is not None
    return sorted(format_cards(state.deal.hands[seat]))


# -------------------------------------------------------------- start and schedule


def test_first_dealer_is_drawn_from_the_seed_and_rotates() -> None:
    state = game.initial_state({})
    assert game.turn(state).is_chance
    seed = bytes(range(100, 132))
    state, events = step(state, game.chance_command(state, seed))
    expected = fair_deal.draw_index(seed, 3)
    assert events == [FirstDealerDrawn(expected, seed)]
    dealers = []
    for _ in range(4):
        while not game.turn(state).is_chance:
            seat = game.turn(state).seats[0]
            state, _ = step(state, game.default_command(state, seat))
        state, events = step(state, game.chance_command(state, bytes(32)))
        deal_event = events[0]
        assert isinstance(deal_event, CardsDealt)
        dealers.append(deal_event.dealer)
        assert game.turn(state).seats == ((deal_event.dealer + 1) % 3,)  # declarer decides
    assert dealers == [(expected + k) % 3 for k in range(4)]


def test_the_deal_is_the_seeds_shuffle_sixteen_each_and_a_talon_of_four() -> None:
    state = fold([FirstDealerDrawn(0, bytes(32))])
    seed = bytes(range(32))
    _, events = step(state, game.DealCards(seed))
    (deal,) = events
    assert isinstance(deal, CardsDealt)
    deck = fair_deal.shuffle(DECK, seed)
    assert deal.hands == (deck[0:16], deck[16:32], deck[32:48])
    assert deal.talon == deck[48:52]
    assert deal.commitment == fair_deal.commitment(seed)
    assert deal.seed == seed


def test_each_player_declares_each_contract_once_over_18_deals() -> None:
    state = game.initial_state({})
    declared: dict[int, list[Contract]] = {0: [], 1: [], 2: []}
    dealers: list[int] = []
    seeds = iter(bytes([i]) * 32 for i in range(1, 40))
    while not game.is_over(state):
        t = game.turn(state)
        if t.is_chance:
            command = game.chance_command(state, next(seeds))
        else:
            command = game.default_command(state, t.seats[0])
        state, events = step(state, command)
        for e in events:
            if isinstance(e, ContractChosen):
                declared[e.seat].append(e.contract)
            if isinstance(e, CardsDealt):
                dealers.append(e.dealer)
                assert e.deal == len(dealers)
    assert len(dealers) == 18
    assert all(dealers[k + 1] == (dealers[k] + 1) % 3 for k in range(17))
    for seat in range(3):
        assert sorted(declared[seat]) == sorted(Contract)
        # the timeout picks the first unused contract in the order ♠ ♥ ♦ ♣ NT MT
        assert declared[seat] == list(Contract)
    assert len(state.records) == 18


def test_a_used_contract_cannot_be_declared_again() -> None:
    # deal 4 has dealer 2 and declarer 0 again
    events = history(
        (Contract.SPADES, (0, 0, 0)),  # declared by seat 0
        (Contract.NO_TRUMP, (0, 0, 0)),  # seat 1
        (Contract.MINIMUM_TRICKS, (0, 0, 0)),  # seat 2
    )
    hands, talon = arrange()
    state = fold([*events, dealt(4, hands, talon)])
    assert game.turn(state).seats == (0,)
    assert reason(state, ChooseContract(0, Contract.SPADES)) == "CONTRACT_ALREADY_USED"
    legal = game.legal_commands(state, 0)
    assert [c.contract for c in legal if isinstance(c, ChooseContract)] == [
        Contract.HEARTS,
        Contract.DIAMONDS,
        Contract.CLUBS,
        Contract.NO_TRUMP,
        Contract.MINIMUM_TRICKS,
    ]
    assert game.default_command(state, 0) == ChooseContract(0, Contract.HEARTS)
    assert game.view(state, 0)["contracts_used"] == [["S"], ["NT"], ["MT"]]


# ---------------------------------------------------------- first six cards only


def test_before_the_contract_a_seat_sees_only_its_first_six_cards() -> None:
    hands, talon = arrange()
    deal = dealt(1, hands, talon)
    state = fold([FirstDealerDrawn(FIRST_DEALER, bytes(32)), deal])
    for seat in range(3):
        v = game.view(state, seat)
        assert sorted(v["hand"]) == sorted(format_cards(hands[seat][:6]))
        assert v["hand_counts"] == [16, 16, 16]
        r = game.redact(deal, seat)
        assert r is not None
        assert r["hand"] == format_cards(hands[seat][:6])
        assert "seed" not in r
        assert "hands" not in r
    assert game.view(state, None)["hand"] == []
    spectator = game.redact(deal, None)
    assert spectator is not None
    assert spectator["hand"] == []

    state, events = step(state, ChooseContract(0, Contract.NO_TRUMP))
    completed = next(e for e in events if isinstance(e, HandsCompleted))
    for seat in range(3):
        held = hands[seat] + (talon if seat == 0 else ())  # NT: seat 0 took the talon
        assert sorted(game.view(state, seat)["hand"]) == sorted(format_cards(held))
        shown = game.redact(completed, seat)
        assert shown == {"deal": 1, "cards": format_cards(hands[seat][6:])}
    assert game.redact(completed, None) == {"deal": 1, "cards": []}


# --------------------------------------------------------------------- exchange


def test_one_giver_one_receiver_with_forced_returns() -> None:
    # deal 1: seat 0 +2, seat 1 −2. Deal 2: dealer 0, declarer 1 (8), third 2 (5).
    events = history((Contract.SPADES, (2, -2, 0)))
    hands, talon = arrange(
        h0="4D 2C 3C 5C 6C 7C 8C 9C 10C JC QC KC AC 2D 3D 5D",
        h1="AD KD 6D 2H 3H 4H 5H 6H 7H 8H 9H 10H JH QH KH AH",
    )
    state = fold([*events, dealt(2, hands, talon)])
    state, chosen = step(state, ChooseContract(1, Contract.HEARTS))
    assert chosen[2:] == [ExchangePlanned(2, (Transfer(0, 1, 2),))]
    assert game.turn(state).kind == "exchange_give"
    assert game.turn(state).seats == (0,)

    # the receiver's highest diamond, counting the 4♦, is the A♦
    state, gave = step(state, GiveCard(0, cards("4D")[0]))
    assert gave == [CardExchanged(0, 1, 1, *cards("4D AD"))]
    assert "AD" in hand_of(state, 0)
    assert "4D" in hand_of(state, 1)
    assert "AD" not in hand_of(state, 1)

    # the receiver holds no club: the same card comes back; then the talon is taken
    state, gave = step(state, GiveCard(0, cards("2C")[0]))
    assert gave == [CardExchanged(0, 1, 2, *cards("2C 2C")), TalonTaken(1, talon)]
    assert hand_of(state, 0).count("2C") == 1
    assert "2C" not in hand_of(state, 1)
    assert game.turn(state).kind == "discard"
    assert game.turn(state).seats == (1,)
    assert len(hand_of(state, 1)) == 20


def test_same_card_returns_when_the_receiver_holds_nothing_higher() -> None:
    events = history((Contract.SPADES, (1, -1, 0)))
    hands, talon = arrange(
        h0="QD 2C 3C 4C 5C 6C 7C 8C 9C 10C JC QC KC AC AD KD",
        h1="2D 3D JD 2H 3H 4H 5H 6H 7H 8H 9H 10H JH QH KH AH",
    )
    state = fold([*events, dealt(2, hands, talon)])
    state, _ = step(state, ChooseContract(1, Contract.HEARTS))
    state, gave = step(state, GiveCard(0, cards("QD")[0]))
    assert gave[0] == CardExchanged(0, 1, 1, *cards("QD QD"))
    assert hand_of(state, 1).count("QD") == 0
    assert sorted(hand_of(state, 0)) == sorted(format_cards(hands[0]))


def test_two_givers_the_higher_current_target_gives_first() -> None:
    # deal 1: seat 0 +1, seat 1 +2, seat 2 −3. Deal 2 targets: seat 1 = 8, seat 0 = 3.
    events = history((Contract.SPADES, (1, 2, -3)))
    hands, talon = arrange()
    state = fold([*events, dealt(2, hands, talon)])
    state, chosen = step(state, ChooseContract(1, Contract.DIAMONDS))
    assert chosen[-1] == ExchangePlanned(2, (Transfer(1, 2, 2), Transfer(0, 2, 1)))
    givers = []
    while game.turn(state).kind == "exchange_give":
        seat = game.turn(state).seats[0]
        givers.append(seat)
        state, _ = step(state, game.default_command(state, seat))
    assert givers == [1, 1, 0]
    view = game.view(state, 2)["exchange"]
    assert [(t["giver"], t["receiver"], t["count"], t["given"]) for t in view["transfers"]] == [
        (1, 2, 2, 2),
        (0, 2, 1, 1),
    ]


def test_two_receivers_split_by_minus_points_higher_target_first() -> None:
    # deal 1: seat 0 −1, seat 1 +3, seat 2 −2. Deal 2 targets: seat 2 = 5 > seat 0 = 3.
    events = history((Contract.SPADES, (-1, 3, -2)))
    hands, talon = arrange()
    state = fold([*events, dealt(2, hands, talon)])
    state, chosen = step(state, ChooseContract(1, Contract.CLUBS))
    assert chosen[-1] == ExchangePlanned(2, (Transfer(1, 2, 2), Transfer(1, 0, 1)))
    receivers = []
    while game.turn(state).kind == "exchange_give":
        assert game.turn(state).seats == (1,)
        state, gave = step(state, game.default_command(state, 1))
        assert isinstance(gave[0], CardExchanged)
        receivers.append(gave[0].receiver)
    assert receivers == [2, 2, 0]


def test_two_receivers_when_the_declarer_is_not_first() -> None:
    # deal 1: seat 0 +3, seat 1 −1, seat 2 −2. Deal 2: seat 1 declares (8) and gets
    # served first although its minus points are fewer.
    events = history((Contract.SPADES, (3, -1, -2)))
    hands, talon = arrange()
    state = fold([*events, dealt(2, hands, talon)])
    _, chosen = step(state, ChooseContract(1, Contract.SPADES))
    assert chosen[-1] == ExchangePlanned(2, (Transfer(0, 1, 1), Transfer(0, 2, 2)))


def test_trumps_cannot_be_given() -> None:
    events = history((Contract.SPADES, (2, -2, 0)))
    hands, talon = arrange(h0="2H 3H 4H AS 2C 3C")
    state = fold([*events, dealt(2, hands, talon)])
    state, _ = step(state, ChooseContract(1, Contract.HEARTS))
    assert reason(state, GiveCard(0, cards("2H")[0])) == "TRUMP_NOT_EXCHANGEABLE"
    legal = game.legal_commands(state, 0)
    given = {str(c.card) for c in legal if isinstance(c, GiveCard)}
    assert given == {str(c) for c in hands[0] if c.suit is not None and c.suit.value != "H"}
    # the timeout gives the lowest non-trump, ties by suit order: 2♣ before 2♠ etc.
    assert game.default_command(state, 0) == GiveCard(0, cards("2C")[0])
    assert reason(state, GiveCard(0, cards("AD")[0])) == "CARD_NOT_IN_HAND"
    assert reason(state, GiveCard(1, cards("2C")[0])) == "NOT_YOUR_TURN"
    assert reason(state, PlayCard(0, cards("2C")[0])) == "WRONG_PHASE"


@pytest.mark.parametrize("contract", [Contract.NO_TRUMP, Contract.MINIMUM_TRICKS])
def test_no_exchange_in_no_trump_or_minimum_tricks(contract: Contract) -> None:
    events = history((Contract.SPADES, (2, -2, 0)))
    hands, talon = arrange()
    state = fold([*events, dealt(2, hands, talon)])
    state, chosen = step(state, ChooseContract(1, contract))
    assert not any(isinstance(e, ExchangePlanned | CardExchanged) for e in chosen)
    assert chosen[-1] == TalonTaken(1, talon)
    assert game.turn(state).kind == "discard"
    assert game.view(state, 0)["exchange"] is None


def test_no_exchange_in_the_first_deal() -> None:
    hands, talon = arrange()
    state = fold([FirstDealerDrawn(FIRST_DEALER, bytes(32)), dealt(1, hands, talon)])
    state, chosen = step(state, ChooseContract(0, Contract.SPADES))
    assert [type(e) for e in chosen] == [ContractChosen, HandsCompleted, TalonTaken]


def test_no_exchange_when_the_previous_deal_was_all_zero() -> None:
    events = history((Contract.SPADES, (3, -3, 0)), (Contract.HEARTS, (0, 0, 0)))
    hands, talon = arrange()
    state = fold([*events, dealt(3, hands, talon)])
    _, chosen = step(state, ChooseContract(2, Contract.SPADES))
    assert [type(e) for e in chosen] == [ContractChosen, HandsCompleted, TalonTaken]


@pytest.mark.parametrize("previous", [Contract.NO_TRUMP, Contract.MINIMUM_TRICKS])
def test_the_exchange_follows_the_previous_deal_only_whatever_its_contract(
    previous: Contract,
) -> None:
    # deal 1 would make seat 0 give 3 cards to seat 1; deal 2 (NT or MT) decides.
    # Deal 3: dealer 1, declarer 2 (8), third 0 (5): receiver 2 first.
    events = history((Contract.SPADES, (3, -3, 0)), (previous, (-1, 2, -1)))
    hands, talon = arrange()
    state = fold([*events, dealt(3, hands, talon)])
    _, chosen = step(state, ChooseContract(2, Contract.DIAMONDS))
    assert chosen[-1] == ExchangePlanned(3, (Transfer(1, 2, 1), Transfer(1, 0, 1)))


def test_a_giver_holding_only_trumps_skips_his_gives() -> None:
    # Unreachable with 16-card hands (a suit has 13 cards and a give never changes
    # the giver's suits); the rule is still implemented, so it is tested on a
    # hand-made deal where the giver holds only the 13 hearts.
    events = history((Contract.SPADES, (-1, 3, -2)))  # giver seat 1 → seats 2 and 0
    hearts = " ".join(f"{r}H" for r in RANK_TEXTS)
    hands, talon = arrange(h1=hearts)
    hands = ((*hands[0], *hands[1][13:]), hands[1][:13], hands[2])  # 19 / 13 / 16 cards
    state = fold([*events, dealt(2, hands, talon)])
    state, chosen = step(state, ChooseContract(1, Contract.HEARTS))
    assert chosen[2:] == [
        ExchangePlanned(2, (Transfer(1, 2, 2), Transfer(1, 0, 1))),
        ExchangeSkipped(1, 2, 2),
        ExchangeSkipped(1, 0, 1),
        TalonTaken(1, talon),
    ]
    transfers = game.view(state, 0)["exchange"]["transfers"]
    assert [t["skipped"] for t in transfers] == [True, True]


def test_exchanged_cards_are_seen_by_giver_and_receiver_only() -> None:
    events = history((Contract.SPADES, (2, -2, 0)))
    hands, talon = arrange(h0="4D", h1="AD")
    state = fold([*events, dealt(2, hands, talon)])
    state, _ = step(state, ChooseContract(1, Contract.HEARTS))
    state, gave = step(state, GiveCard(0, cards("4D")[0]))
    exchanged = gave[0]
    assert isinstance(exchanged, CardExchanged)
    for seat in (0, 1):
        assert game.redact(exchanged, seat) == {
            "giver": 0,
            "receiver": 1,
            "number": 1,
            "given": "4D",
            "returned": "AD",
        }
        steps = game.view(state, seat)["exchange"]["steps"]
        assert steps == [{"giver": 0, "receiver": 1, "number": 1, "given": "4D", "returned": "AD"}]
    for other in (2, None):
        assert game.redact(exchanged, other) == {
            "giver": 0,
            "receiver": 1,
            "number": 1,
            "given": None,
            "returned": None,
        }
        view = game.view(state, other)["exchange"]
        assert view["steps"][0]["given"] is None
        assert view["transfers"][0]["given"] == 1
        assert view["transfers"][0]["count"] == 2


# ------------------------------------------------------------------ talon, discard


def test_talon_pickup_and_discard() -> None:
    hands, talon = arrange(h0="2C 3C 4C 5C 6C 7C", talon="AS AH AD AC")
    state = fold([FirstDealerDrawn(FIRST_DEALER, bytes(32)), dealt(1, hands, talon)])
    state, chosen = step(state, ChooseContract(0, Contract.SPADES))
    taken = chosen[-1]
    assert taken == TalonTaken(0, talon)
    assert len(hand_of(state, 0)) == 20
    own = game.view(state, 0)
    assert own["talon"] == ["AS", "AH", "AD", "AC"]
    assert own["talon_count"] == 0
    for seat in (1, 2, None):
        assert game.view(state, seat)["talon"] is None
        assert game.redact(taken, seat) == {"seat": 0, "cards": None, "count": 4}
    assert game.redact(taken, 0) == {"seat": 0, "cards": ["AS", "AH", "AD", "AC"], "count": 4}

    assert reason(state, Discard(0, cards("2C 3C 4C"))) == "DISCARD_FOUR_CARDS"
    assert reason(state, Discard(0, cards("2C 3C 4C 4C"))) == "DISCARD_FOUR_CARDS"
    assert reason(state, Discard(0, cards("2C 3C 4C KS"))) == "CARD_NOT_IN_HAND"
    assert reason(state, Discard(1, cards("2C 3C 4C 5C"))) == "NOT_YOUR_TURN"
    # the timeout discards the four lowest non-trumps, by rank then suit (2♣ 2♦ 3♣ 3♦)
    assert game.default_command(state, 0) == Discard(0, cards("2C 2D 3C 3D"))

    discard = Discard(0, cards("AH 2C AD 3C"))  # talon cards may be discarded
    state, done = step(state, discard)
    assert done == [CardsDiscarded(0, cards("AH 2C AD 3C"))]
    assert len(hand_of(state, 0)) == 16
    assert "AS" in hand_of(state, 0)
    assert game.turn(state).kind == "play"
    assert game.turn(state).seats == (0,)  # the declarer leads
    assert game.view(state, 0)["discards"] == ["AH", "2C", "AD", "3C"]
    assert game.view(state, 1)["discards"] is None
    assert game.view(state, 1)["discard_count"] == 4
    assert game.redact(done[0], 2) == {"seat": 0, "cards": None, "count": 4}
    assert game.view(state, 0)["tricks"] == [0, 0, 0]  # discards are no tricks


def test_timeout_discard_without_trump_takes_the_four_lowest_cards() -> None:
    hands, talon = arrange(h0="2S 2H 3D 2D AC KC", talon="2C 3S QH JH")
    state = fold([FirstDealerDrawn(FIRST_DEALER, bytes(32)), dealt(1, hands, talon)])
    state, _ = step(state, ChooseContract(0, Contract.NO_TRUMP))
    # lowest by rank, ties by suit order ♣ ♦ ♥ ♠: 2♣ 2♦ 2♥ 2♠
    assert game.default_command(state, 0) == Discard(0, cards("2C 2D 2H 2S"))


def test_timeout_discard_prefers_non_trumps_and_fills_with_the_lowest_trumps() -> None:
    # Holding 13 trumps the declarer still has 7 non-trumps after the talon, so the
    # trump fallback needs a hand-made deal: 13 spades and a talon of only 2 cards.
    spades = cards(" ".join(f"{r}S" for r in reversed(RANK_TEXTS)))
    rest = [c for c in DECK if c not in spades and str(c) not in ("KD", "AD")]
    odd_hands = (spades, tuple(rest[:16]), tuple(rest[16:]))
    state = fold([FirstDealerDrawn(FIRST_DEALER, bytes(32)), dealt(1, odd_hands, cards("AD KD"))])
    state, _ = step(state, ChooseContract(0, Contract.SPADES))
    assert game.default_command(state, 0) == Discard(0, cards("KD AD 2S 3S"))
    # with enough non-trumps, trumps are kept even when they are lower
    hands, talon = arrange(h0="2S 3S 4S 5S 9C 9D 9H", talon="10C 10D JC QC")
    state = fold([FirstDealerDrawn(FIRST_DEALER, bytes(32)), dealt(1, hands, talon)])
    state, _ = step(state, ChooseContract(0, Contract.SPADES))
    command = game.default_command(state, 0)
    assert isinstance(command, Discard)
    assert all(c.suit is not None and c.suit.value != "S" for c in command.cards)


# ------------------------------------------------------------------------- play


def _led_by_1(contract: Contract, **options: Any) -> State:
    """Seat 0 leads K♠, seat 1 must answer. Seat 1: A♠ 2♠ + ♦; seat 2: void in ♠."""
    hands, talon = arrange(
        h0="KS 2C 3C 4C 5C 6C 7C 8C 9C 10C JC QC KC AC 2D 3D",
        h1="AS 2S 4D 5D 6D 7D 8D 9D 10D JD QD KD AD 2H 3H 4H",
        h2="5H 6H 7H 8H 9H 10H JH QH KH AH 3S 4S 5S 6S 7S 8S",
    )
    return in_play(contract, hands, talon, discards="2C 3C 4C 5C", **options)


def test_follow_suit_without_having_to_beat() -> None:
    state = _led_by_1(Contract.HEARTS)
    state, _ = step(state, PlayCard(0, cards("KS")[0]))
    assert reason(state, PlayCard(1, cards("4D")[0])) == "MUST_FOLLOW_SUIT"
    assert reason(state, PlayCard(1, cards("2H")[0])) == "MUST_FOLLOW_SUIT"  # nor trump
    legal = {str(c.card) for c in game.legal_commands(state, 1) if isinstance(c, PlayCard)}
    assert legal == {"AS", "2S"}
    state, events = step(state, PlayCard(1, cards("2S")[0]))  # need not beat the K
    assert events == [CardPlayed(1, cards("2S")[0])]
    assert game.default_command(state, 2) == PlayCard(2, cards("3S")[0])


def _void_in_led_suit(contract: Contract, **options: Any) -> State:
    """Seat 0 leads Q♣; seat 1 holds no club; seat 2 holds 10♣ J♣ K♣ A♣."""
    hands, talon = arrange(
        h0="QC 2C 3C 4C 5C 6C 7C 8C 9C 2D 3D 4D 10D JD QD KD",
        h1="2S 3S 4S 5S 6S 7S 5D 6D 7D 8D 9D 2H 3H 4H 5H 6H",
        h2="10C JC KC AC AD 7H 8H 9H 10H JH QH KH AH 8S 9S 10S",
        talon="JS QS KS AS",
    )
    state = in_play(contract, hands, talon, discards="JS QS KS AS", **options)
    state, _ = step(state, PlayCard(0, cards("QC")[0]))
    return state


def test_must_trump_on_forces_a_trump_when_void() -> None:
    state = _void_in_led_suit(Contract.HEARTS, must_trump=True)
    assert reason(state, PlayCard(1, cards("5D")[0])) == "MUST_TRUMP"
    assert reason(state, PlayCard(1, cards("2S")[0])) == "MUST_TRUMP"
    legal = {str(c.card) for c in game.legal_commands(state, 1) if isinstance(c, PlayCard)}
    assert legal == {"2H", "3H", "4H", "5H", "6H"}
    assert game.default_command(state, 1) == PlayCard(1, cards("2H")[0])
    state, _ = step(state, PlayCard(1, cards("6H")[0]))
    # seat 2 holds clubs: following suit comes before trumping
    legal = {str(c.card) for c in game.legal_commands(state, 2) if isinstance(c, PlayCard)}
    assert legal == {"10C", "JC", "KC", "AC"}


def test_must_trump_need_not_overtrump() -> None:
    hands, talon = arrange(
        h0="QC 2H 3C 4C 5C 6C 7C 8C 9C 10C JC KC AC 2D 3D 4D",
        h1="AH 3S 4S 5S 6S 7S 5D 6D 7D 8D 9D 2S 3H 4H 5H 6H",
        h2="KH 8H 8S 9S 10S JS QS KS AS 10D JD QD KD AD 7H 9H",
    )
    state = in_play(Contract.HEARTS, hands, talon, discards="2D 3D 4D 3C", must_trump=True)
    state, _ = step(state, PlayCard(0, cards("QC")[0]))
    state, _ = step(state, PlayCard(1, cards("AH")[0]))
    legal = {str(c.card) for c in game.legal_commands(state, 2) if isinstance(c, PlayCard)}
    assert legal == {"KH", "8H", "7H", "9H"}  # any trump, even one that loses
    state, events = step(state, PlayCard(2, cards("7H")[0]))
    assert events[-1] == TrickTaken(1, 0, 1, cards("QC AH 7H"))


def test_must_trump_off_lets_a_void_player_discard_anything() -> None:
    state = _void_in_led_suit(Contract.HEARTS)
    legal = {str(c.card) for c in game.legal_commands(state, 1) if isinstance(c, PlayCard)}
    assert legal == set(hand_of(state, 1))
    assert len(legal) == 16
    state, events = step(state, PlayCard(1, cards("5D")[0]))
    assert events == [CardPlayed(1, cards("5D")[0])]


def test_must_trump_has_no_effect_without_a_trump_suit() -> None:
    state = _void_in_led_suit(Contract.NO_TRUMP, must_trump=True)
    assert len(game.legal_commands(state, 1)) == 16
    # the lowest legal card, ties by suit order: 2♥ 2♠ → 2♥ (♥ < ♠)
    assert game.default_command(state, 1) == PlayCard(1, cards("2H")[0])


def test_trick_winners_with_and_without_trumps() -> None:
    # ♥ trump: a void player's small trump beats the A of the suit led
    state = _void_in_led_suit(Contract.HEARTS)
    state, _ = step(state, PlayCard(1, cards("2H")[0]))
    state, events = step(state, PlayCard(2, cards("AC")[0]))
    assert events[-1] == TrickTaken(1, 0, 1, cards("QC 2H AC"))
    assert game.turn(state).seats == (1,)  # the winner leads
    assert game.view(state, 0)["tricks"] == [0, 1, 0]
    # no trump: the off-suit 6♥ is worthless, the highest club wins
    state = _void_in_led_suit(Contract.NO_TRUMP)
    state, _ = step(state, PlayCard(1, cards("6H")[0]))
    state, events = step(state, PlayCard(2, cards("AC")[0]))
    assert events[-1] == TrickTaken(1, 0, 2, cards("QC 6H AC"))
    last = game.view(state, 1)["last_trick"]
    assert last == {
        "number": 1,
        "leader": 0,
        "winner": 2,
        "cards": [
            {"seat": 0, "card": "QC"},
            {"seat": 1, "card": "6H"},
            {"seat": 2, "card": "AC"},
        ],
    }
    # a lower club than the one led does not win
    state = _void_in_led_suit(Contract.NO_TRUMP)
    state, _ = step(state, PlayCard(1, cards("6H")[0]))
    state, events = step(state, PlayCard(2, cards("10C")[0]))
    assert events[-1] == TrickTaken(1, 0, 0, cards("QC 6H 10C"))


def _strength(c: Card) -> int:
    return RANK_TEXTS.index(str(c)[:-1])


def test_the_highest_trump_wins_and_a_higher_card_of_the_led_suit_wins_without_trump() -> None:
    hands, talon = arrange(
        h0="9S 2C 3C 4C 5C 6C 7C 8C 9C 10C JC QC KC AC 2D 3D",
        h1="3H 4D 5D 6D 7D 8D 9D 10D JD QD KD AD 2H 4H 5H 6H",
        h2="JS 7H 8H 9H 10H JH QH KH AH 2S 3S 4S 5S 6S 7S 8S",
    )
    state = in_play(Contract.HEARTS, hands, talon, discards="2C 3C 4C 5C")
    state, _ = step(state, PlayCard(0, cards("9S")[0]))
    state, _ = step(state, PlayCard(1, cards("3H")[0]))  # void in ♠: trumps
    state, events = step(state, PlayCard(2, cards("JS")[0]))  # higher ♠, but no trump
    assert events[-1] == TrickTaken(1, 0, 1, cards("9S 3H JS"))
    state, _ = step(state, PlayCard(1, cards("2H")[0]))
    state, _ = step(state, PlayCard(2, cards("AH")[0]))
    state, events = step(state, PlayCard(0, cards("2D")[0]))
    assert events[-1] == TrickTaken(2, 1, 2, cards("2H AH 2D"))


def test_playing_a_card_not_held_or_out_of_turn() -> None:
    state = _led_by_1(Contract.HEARTS)
    assert reason(state, PlayCard(0, cards("AS")[0])) == "CARD_NOT_IN_HAND"
    assert reason(state, PlayCard(1, cards("AS")[0])) == "NOT_YOUR_TURN"
    assert reason(state, PlayCard(3, cards("AS")[0])) == "INVALID_SEAT"
    assert reason(state, ChooseContract(0, Contract.CLUBS)) == "WRONG_PHASE"
    assert reason(state, game.DealCards(bytes(32))) == "WRONG_PHASE"
    assert game.legal_commands(state, 1) == []


# ----------------------------------------------------------------------- scoring


def _play_out(state: State) -> tuple[State, list[Event]]:
    """Finish the deal with the timeout's moves (the lowest legal card each time)."""
    events: list[Event] = []
    while game.turn(state).kind == "play":
        state, done = step(state, game.default_command(state, game.turn(state).seats[0]))
        events += done
    return state, events


def _winner(trick: tuple[Card, ...], trump: str | None) -> int:
    """Independent reference: highest trump, else highest card of the suit led."""
    suit = [str(c)[-1] for c in trick]
    trumps = [i for i in range(3) if trump is not None and suit[i] == trump]
    pool = trumps or [i for i in range(3) if suit[i] == suit[0]]
    return max(pool, key=lambda i: _strength(trick[i]))


@pytest.mark.parametrize(
    ("contract", "trump"),
    [(Contract.MINIMUM_TRICKS, None), (Contract.SPADES, "S"), (Contract.NO_TRUMP, None)],
)
def test_a_whole_deal_is_scored_against_its_targets(contract: Contract, trump: str | None) -> None:
    hands, talon = arrange(
        h0="AS KS QS JS AH KH 2C 3C 4C 5C 6C 7C 8C 9C 10C JC",
        h1="2S 3S 4S 2H 3H 4H 2D 3D 4D 5D 6D 7D 8D 9D 10D JD",
    )
    state = in_play(contract, hands, talon, discards="2C 3C 4C 5C")
    state, events = _play_out(state)
    tricks = [0, 0, 0]
    for e in events:
        if isinstance(e, TrickTaken):
            assert e.winner == (e.leader + _winner(e.cards, trump)) % 3
            tricks[e.winner] += 1
    scored = next(e for e in events if isinstance(e, DealScored))
    assert sum(tricks) == 16
    assert list(scored.tricks) == tricks
    # deal 1: dealer 2, declarer 0, third 1
    if contract is Contract.MINIMUM_TRICKS:
        targets = [3, 5, 8]
        points = [targets[s] - tricks[s] for s in range(3)]
    else:
        targets = [8, 5, 3]
        points = [tricks[s] - targets[s] for s in range(3)]
    assert list(scored.targets) == targets
    assert list(scored.points) == points
    assert sum(points) == 0
    assert list(scored.totals) == points
    assert game.view(state, 1)["deal_scores"][0]["points"] == points
    assert events[-1] == DealSeedRevealed(1, fair_deal.commitment(seed_of(1)), seed_of(1))
    assert game.turn(state).is_chance


def test_mt_targets_are_reversed_and_shown_from_the_contract_on() -> None:
    hands, talon = arrange()
    state = fold([FirstDealerDrawn(FIRST_DEALER, bytes(32)), dealt(1, hands, talon)])
    assert game.view(state, 0)["targets"] is None
    state, _ = step(state, ChooseContract(0, Contract.MINIMUM_TRICKS))
    v = game.view(state, 2)
    assert v["roles"] == ["declarer", "third", "dealer"]
    assert v["targets"] == [3, 5, 8]
    assert v["tricks"] == [0, 0, 0]


# ----------------------------------------------------------------------- ending


def test_places_share_ties() -> None:
    assert places([5, 5, -10]) == (1, 1, 3)
    assert places([3, -6, 3]) == (1, 3, 1)
    assert places([0, 0, 0]) == (1, 1, 1)
    assert places([-1, 4, -3]) == (2, 1, 3)
    assert places([2, -1, -1]) == (1, 2, 2)


def _schedule(points_of_deal_1: Sequence[int]) -> list[tuple[Contract, Sequence[int]]]:
    """17 past deals, each seat declaring ♠ ♥ ♦ ♣ NT in turn; only deal 1 scores."""
    order = list(Contract)
    return [(order[(n - 1) // 3], points_of_deal_1 if n == 1 else (0, 0, 0)) for n in range(1, 18)]


def _finish_deal_18(deals: list[tuple[Contract, Sequence[int]]]) -> tuple[State, list[Event]]:
    """Deal 18 (dealer 1, declarer 2, whose last contract is MT) played by the timeouts."""
    hands, talon = arrange()
    state = fold([*history(*deals), dealt(18, hands, talon)])
    events: list[Event] = []
    while not game.is_over(state):
        t = game.turn(state)
        assert not t.is_chance
        state, done = step(state, game.default_command(state, t.seats[0]))
        events += done
    return state, events


def test_the_game_ends_after_deal_18_with_shared_places() -> None:
    # First find deal 18's points (they do not depend on deal 1), then choose deal 1
    # so that seats 0 and 1 end level on 5 and seat 2 on −10.
    _, events = _finish_deal_18(_schedule((0, 0, 0)))
    last = next(e for e in events if isinstance(e, DealScored))
    assert last.contract is Contract.MINIMUM_TRICKS
    p = last.points
    state, events = _finish_deal_18(_schedule((5 - p[0], 5 - p[1], -10 - p[2])))
    ended = events[-1]
    assert isinstance(ended, GameEnded)
    assert ended == GameEnded((5, 5, -10), (1, 1, 3))
    assert game.result(state) == {
        "final": True,
        "deals_played": 18,
        "totals": [5, 5, -10],
        "places": [1, 1, 3],
        "winners": [0, 1],
    }
    assert game.turn(state).kind == "over"
    assert game.view(state, None)["result"] == {
        "totals": [5, 5, -10],
        "places": [1, 1, 3],
        "winners": [0, 1],
    }
    assert reason(state, PlayCard(0, cards("2C")[0])) == "GAME_OVER"
    assert reason(state, game.DealCards(bytes(32))) == "GAME_OVER"
    with pytest.raises(RuleError, match="GAME_OVER"):
        game.default_command(state, 0)
    with pytest.raises(RuleError, match="GAME_OVER"):
        game.chance_command(state, bytes(32))
    assert game.legal_commands(state, 0) == []


def test_result_before_the_end_is_provisional() -> None:
    state = fold(history((Contract.SPADES, (2, -1, -1))))
    assert game.result(state) == {
        "final": False,
        "deals_played": 1,
        "totals": [2, -1, -1],
        "places": [1, 2, 2],
        "winners": [0],
    }
