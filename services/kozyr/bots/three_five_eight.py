"""3-5-8 from one seat's view: the `easy` default and the `normal` rules of thumb.

The rules of thumb are written on cards (`kozyr.games.cards.Card`), not on messages, so
that the `hard` level's playouts (`kozyr.bots.search358`) play the same `normal` game
on engine states that a `normal` seat plays from its view.

`normal`, honestly (docs/bots.md):
- contract: the 6-contract schedule is planned — each unused contract is scored by how
  much better the six cards seen suit it than an average six cards would (`FIT_MEAN`),
  so a contract the hand is merely average for is kept for a later deal that may suit
  it better; the best surplus is taken (ties: ♠ ♥ ♦ ♣ NT MT).
- exchange: give the lowest card of a suit in which the seat holds the fewest honours
  (the forced return is the receiver's highest card of that suit, often an honour),
  never again into a suit that came back unchanged (the receiver has nothing higher).
- discard: under a trump or NT contract the low cards of the shortest non-trump suits
  (voids to trump, losers gone), aces kept; under MT the highest cards (the ones that
  would take tricks).
- play: under a trump or NT contract every trick counts — lead an ace, else (trump
  contract with five trumps or more) a high trump, else a low card of the shortest side
  suit (to ruff it later); following, take the trick with the cheapest sure-enough card
  (the last to play: the cheapest winner; second: a winner of jack or better), ruff
  with the lowest trump, else throw the lowest card of the shortest side suit. Under MT
  take nothing: follow with the highest card that still loses (forced to win: the
  highest card when last, else the lowest), throw the highest card when void, lead the
  lowest.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

from kozyr.api.common.v1 import cards_pb2
from kozyr.api.table.v1 import actions_pb2, views_pb2
from kozyr.games.cards import Card, Rank, Suit, parse_card
from kozyr.games.three_five_eight.model import Contract
from kozyr.games.three_five_eight.ranking import low_key, strength, trick_winner_offset

ACE = strength(parse_card("AS"))
KING = ACE - 1
QUEEN = ACE - 2
JACK = ACE - 3
LOW = strength(parse_card("9S"))
"""A card of this rank or lower is "low" for MT."""
CONTRACT_CODES = {
    actions_pb2.CONTRACT_SPADES: Contract.SPADES,
    actions_pb2.CONTRACT_HEARTS: Contract.HEARTS,
    actions_pb2.CONTRACT_DIAMONDS: Contract.DIAMONDS,
    actions_pb2.CONTRACT_CLUBS: Contract.CLUBS,
    actions_pb2.CONTRACT_NO_TRUMP: Contract.NO_TRUMP,
    actions_pb2.CONTRACT_MINIMUM_TRICKS: Contract.MINIMUM_TRICKS,
}
_SIX = 6 / 52
FIT_MEAN = {
    **dict.fromkeys(
        (Contract.SPADES, Contract.HEARTS, Contract.DIAMONDS, Contract.CLUBS),
        2 * 13 * _SIX + 4 * _SIX + 3 * _SIX,
    ),
    Contract.NO_TRUMP: 2.5 * 4 * _SIX + 4 * _SIX,
    Contract.MINIMUM_TRICKS: 1.5 * 32 * _SIX - 2 * 8 * _SIX,
}
"""The expected `contract_fit` of six random cards (each card is one of the 52 with
probability 6/52): what an average later hand offers each contract."""


# ------------------------------------------------------------- rules on cards


def contract_fit(contract: Contract, hand: Sequence[Card]) -> float:
    """How well six cards suit a contract: a trump suit by its length, its honours and
    the aces elsewhere; NT by aces and kings; MT by low cards minus kings and aces."""
    ranks = [strength(c) for c in hand]
    trump = contract.trump
    if trump is not None:
        trumps = [strength(c) for c in hand if c.suit is trump]
        aces_elsewhere = sum(1 for c in hand if c.suit is not trump and strength(c) == ACE)
        return 2 * len(trumps) + sum(1 for r in trumps if r >= JACK) + aces_elsewhere
    if contract is Contract.NO_TRUMP:
        return 2.5 * sum(1 for r in ranks if r == ACE) + sum(1 for r in ranks if r == KING)
    return 1.5 * sum(1 for r in ranks if r <= LOW) - 2 * sum(1 for r in ranks if r >= KING)


def choose_contract(unused: Sequence[Contract], hand: Sequence[Card]) -> Contract:
    """The unused contract these cards suit best compared with an average hand."""
    return max(unused, key=lambda c: contract_fit(c, hand) - FIT_MEAN[c])


def give_card(
    giveable: Sequence[Card], hand: Sequence[Card], dead_suits: frozenset[Suit] = frozenset()
) -> Card:
    """The card to give: low, in a suit where the receiver holds the honours we lack;
    `dead_suits` came back unchanged before (the receiver holds nothing higher)."""
    honours = Counter(c.suit for c in hand if strength(c) >= QUEEN)
    return min(giveable, key=lambda c: (c.suit in dead_suits, honours[c.suit], low_key(c)))


def discard_cards(hand: Sequence[Card], contract: Contract) -> tuple[Card, ...]:
    """Four cards to discard: high ones under MT, else the low cards of short side suits."""
    if contract is Contract.MINIMUM_TRICKS:
        return tuple(sorted(hand, key=low_key, reverse=True)[:4])
    trump = contract.trump
    lengths = Counter(c.suit for c in hand)
    candidates = sorted(
        (c for c in hand if c.suit is not trump and c.rank is not Rank.ACE),
        key=lambda c: (lengths[c.suit], low_key(c)),
    )
    rest = sorted((c for c in hand if c not in candidates), key=low_key)
    return tuple([*candidates, *rest][:4])


def play_card(
    playable: Sequence[Card],
    hand: Sequence[Card],
    trick: Sequence[Card],
    contract: Contract,
) -> Card:
    """The card to play from `playable` (the legal ones) onto `trick` (cards so far)."""
    trump = contract.trump
    if contract is Contract.MINIMUM_TRICKS:
        return _duck(playable, trick)
    if not trick:
        return _lead(playable, trump)
    best = trick[trick_winner_offset(tuple(trick), trump)]
    winning = [c for c in playable if _beats(c, best, trump)]
    if winning:
        cheapest = min(winning, key=low_key)
        last = len(trick) == 2
        if last or strength(cheapest) >= JACK or cheapest.suit is not trick[0].suit:
            return cheapest
        high = [c for c in winning if strength(c) >= JACK]
        return min(high, key=low_key) if high else min(playable, key=low_key)
    return _throw(playable, hand, trump)


def _beats(card: Card, best: Card, trump: Suit | None) -> bool:
    """Whether `card` takes the trick from `best`, the card winning it so far."""
    if card.suit is best.suit:
        return strength(card) > strength(best)
    return trump is not None and card.suit is trump


def _lengths(cards: Sequence[Card]) -> dict[Suit | None, int]:
    """Cards per suit (a plain dict: this runs at every card of every playout)."""
    lengths: dict[Suit | None, int] = {}
    for c in cards:
        lengths[c.suit] = lengths.get(c.suit, 0) + 1
    return lengths


def _lead(playable: Sequence[Card], trump: Suit | None) -> Card:
    aces = [c for c in playable if strength(c) == ACE]
    if aces:
        return min(aces, key=lambda c: (c.suit is trump, low_key(c)))
    trumps = [c for c in playable if c.suit is trump]
    if trump is not None and len(trumps) >= 5:
        return max(trumps, key=low_key)
    lengths = _lengths(playable)
    side = [c for c in playable if c.suit is not trump] or list(playable)
    if trump is None:  # NT: from the longest suit, its highest card
        return max(side, key=lambda c: (lengths[c.suit], low_key(c)))
    return min(side, key=lambda c: (lengths[c.suit], low_key(c)))


def _throw(playable: Sequence[Card], hand: Sequence[Card], trump: Suit | None) -> Card:
    lengths = _lengths(hand)
    side = [c for c in playable if c.suit is not trump] or list(playable)
    return min(side, key=lambda c: (strength(c) >= KING, lengths[c.suit], low_key(c)))


def _duck(playable: Sequence[Card], trick: Sequence[Card]) -> Card:
    if not trick:
        return min(playable, key=low_key)
    best = trick[trick_winner_offset(tuple(trick), None)]
    losing = [c for c in playable if not _beats(c, best, None)]
    if losing:
        return max(losing, key=low_key)
    return max(playable, key=low_key) if len(trick) == 2 else min(playable, key=low_key)


# ---------------------------------------------------------------- from a view


def _card(action: actions_pb2.Action) -> Card:
    given = action.WhichOneof("action") == "give_card"
    return parse_card((action.give_card if given else action.play_card).card.code)


def easy(moves: Sequence[actions_pb2.Action]) -> actions_pb2.Action:
    """The timeout's move: the lowest listed card, else the first listed move."""
    if moves[0].WhichOneof("action") in ("play_card", "give_card"):
        return min(moves, key=lambda a: low_key(_card(a)))
    return moves[0]


def contract_action(contract: Contract) -> actions_pb2.Action:
    code = next(k for k, v in CONTRACT_CODES.items() if v is contract)
    return actions_pb2.Action(choose_contract=actions_pb2.ChooseContract(contract=code))


def discard_action(cards: Sequence[Card]) -> actions_pb2.Action:
    return actions_pb2.Action(
        discard=actions_pb2.Discard(cards=[cards_pb2.Card(code=str(c)) for c in cards])
    )


def dead_suits(view: views_pb2.ThreeFiveEightView) -> frozenset[Suit]:
    """Suits whose give came back unchanged to this seat in this deal's exchange."""
    seat = view.seat
    return frozenset(
        parse_card(s.given).suit  # type: ignore[misc]
        for s in view.exchange.steps
        if s.giver == seat and s.HasField("given") and s.given == s.returned
    )


def normal(
    view: views_pb2.ThreeFiveEightView, moves: Sequence[actions_pb2.Action]
) -> actions_pb2.Action:
    kind = moves[0].WhichOneof("action")
    hand = [parse_card(code) for code in view.hand]
    if kind == "choose_contract":
        unused = [CONTRACT_CODES[a.choose_contract.contract] for a in moves]
        return contract_action(choose_contract(unused, hand))
    contract = Contract(view.contract)
    if kind == "give_card":
        by_card = {_card(a): a for a in moves}
        return by_card[give_card(list(by_card), hand, dead_suits(view))]
    if kind == "discard":
        return discard_action(discard_cards(hand, contract))
    if kind == "play_card":
        by_card = {_card(a): a for a in moves}
        trick = [parse_card(t.card) for t in view.trick]
        return by_card[play_card(list(by_card), hand, trick, contract)]
    return moves[0]
