"""3-5-8 from one seat's view: the `easy` default and the `normal` rules of thumb.

`normal`, honestly (docs/bots.md):
- contract: each unused contract is scored from the six cards seen — a trump suit by
  its length and honours, NT by aces and kings, MT by low cards — and the best is
  taken (ties: the listed order ♠ ♥ ♦ ♣ NT MT). The whole 6-contract schedule is not
  planned yet.
- exchange: give the lowest card of a suit in which the seat holds no ace (the forced
  return is the receiver's highest of that suit, often an honour), else the lowest card.
- discard: the low cards of the shortest non-trump suits (making voids), aces kept.
- play: under a trump or NT contract every trick counts, so win the trick with the
  cheapest card that takes it (lead the highest card of the longest suit), else play
  the lowest; under MT take no trick: follow with the highest card that still loses,
  lead the lowest.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

from kozyr.api.common.v1 import cards_pb2
from kozyr.api.table.v1 import actions_pb2, views_pb2
from kozyr.games.cards import Card, Rank, Suit, parse_card
from kozyr.games.three_five_eight.ranking import low_key, strength

ACE = strength(parse_card("AS"))
KING = ACE - 1
JACK = ACE - 3
LOW = strength(parse_card("9S"))
"""A card of this rank or lower is "low" for MT."""
SUIT_CONTRACTS = {
    actions_pb2.CONTRACT_SPADES: Suit.SPADES,
    actions_pb2.CONTRACT_HEARTS: Suit.HEARTS,
    actions_pb2.CONTRACT_DIAMONDS: Suit.DIAMONDS,
    actions_pb2.CONTRACT_CLUBS: Suit.CLUBS,
}


def _card(action: actions_pb2.Action) -> Card:
    given = action.WhichOneof("action") == "give_card"
    return parse_card((action.give_card if given else action.play_card).card.code)


def easy(moves: Sequence[actions_pb2.Action]) -> actions_pb2.Action:
    """The timeout's move: the lowest listed card, else the first listed move."""
    if moves[0].WhichOneof("action") in ("play_card", "give_card"):
        return min(moves, key=lambda a: low_key(_card(a)))
    return moves[0]


def normal(
    view: views_pb2.ThreeFiveEightView, moves: Sequence[actions_pb2.Action]
) -> actions_pb2.Action:
    kind = moves[0].WhichOneof("action")
    hand = [parse_card(code) for code in view.hand]
    if kind == "choose_contract":
        return max(moves, key=lambda a: _contract_score(a.choose_contract.contract, hand))
    if kind == "give_card":
        return _give(moves, hand)
    if kind == "discard":
        trump = Suit(view.trump) if view.HasField("trump") else None
        return _discard(hand, trump)
    if kind == "play_card":
        return _play(view, moves)
    return moves[0]


def _contract_score(contract: actions_pb2.Contract.ValueType, hand: Sequence[Card]) -> float:
    ranks = [strength(c) for c in hand]
    if contract in SUIT_CONTRACTS:
        suit = SUIT_CONTRACTS[contract]
        trumps = [strength(c) for c in hand if c.suit is suit]
        aces_elsewhere = sum(1 for c in hand if c.suit is not suit and strength(c) == ACE)
        return 2 * len(trumps) + sum(1 for r in trumps if r >= JACK) + aces_elsewhere
    if contract == actions_pb2.CONTRACT_NO_TRUMP:
        return 2.5 * sum(1 for r in ranks if r == ACE) + sum(1 for r in ranks if r == KING)
    return 1.5 * sum(1 for r in ranks if r <= LOW) - 2 * sum(1 for r in ranks if r >= KING)


def _give(moves: Sequence[actions_pb2.Action], hand: Sequence[Card]) -> actions_pb2.Action:
    with_ace = {c.suit for c in hand if c.rank is Rank.ACE}
    return min(moves, key=lambda a: (_card(a).suit in with_ace, low_key(_card(a))))


def _discard(hand: Sequence[Card], trump: Suit | None) -> actions_pb2.Action:
    lengths = Counter(c.suit for c in hand)
    candidates = sorted(
        (c for c in hand if c.suit is not trump and c.rank is not Rank.ACE),
        key=lambda c: (lengths[c.suit], low_key(c)),
    )
    rest = sorted((c for c in hand if c not in candidates), key=low_key)
    chosen = [*candidates, *rest][:4]
    return actions_pb2.Action(
        discard=actions_pb2.Discard(cards=[cards_pb2.Card(code=str(c)) for c in chosen])
    )


def _play(
    view: views_pb2.ThreeFiveEightView, moves: Sequence[actions_pb2.Action]
) -> actions_pb2.Action:
    trump = Suit(view.trump) if view.HasField("trump") else None
    cards = sorted((_card(a) for a in moves), key=low_key)
    by_card = {str(_card(a)): a for a in moves}
    avoid = view.contract == "MT"
    played = [parse_card(t.card) for t in view.trick]
    if not played:
        if avoid:
            return by_card[str(cards[0])]
        lengths = Counter(c.suit for c in cards)
        return by_card[str(max(cards, key=lambda c: (strength(c), lengths[c.suit])))]
    best = _winner(played, trump)
    winning = [c for c in cards if _beats(c, best, trump)]
    if avoid:
        losing = [c for c in cards if c not in winning]
        return by_card[str(losing[-1] if losing else winning[0])]
    return by_card[str(winning[0] if winning else cards[0])]


def _beats(card: Card, best: Card, trump: Suit | None) -> bool:
    """Whether `card` takes the trick from `best` (the card winning it so far)."""
    if card.suit is best.suit:
        return strength(card) > strength(best)
    return trump is not None and card.suit is trump


def _winner(played: Sequence[Card], trump: Suit | None) -> Card:
    best = played[0]
    for card in played[1:]:
        if _beats(card, best, trump):
            best = card
    return best
