"""3-5-8's computer players on neutral data (its `GameInfo.levels`): from one seat's
view — the game's view as a dict and the moves it lists as (field, fields),
`kozyr.games.info` — the `easy` default and the `normal` rules of thumb. Pure: the bots
service calls them, knowing no game.

The rules of thumb are written on cards (`kozyr.games.cards.Card`), not on messages, so
that the `hard` level's playouts (`kozyr.games.three_five_eight.hard`) play the
same `normal` game on engine states that a `normal` seat plays from its view.

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
from collections.abc import Mapping, Sequence
from typing import Any

from kozyr.games.cards import Card, Rank, Suit, parse_card
from kozyr.games.info import Move
from kozyr.games.three_five_eight.model import Contract
from kozyr.games.three_five_eight.ranking import low_key, strength, trick_winner_offset

ACE = strength(parse_card("AS"))
KING = ACE - 1
QUEEN = ACE - 2
JACK = ACE - 3
LOW = strength(parse_card("9S"))
"""A card of this rank or lower is "low" for MT."""
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

CONTRACT_PREFIX = "CONTRACT_"
"""`kozyr.table.v1.Contract` names each contract CONTRACT_<Contract member name>."""


def move_card(move: Move) -> Card:
    """The card of a `give_card` or `play_card` move."""
    return parse_card(move[1]["card"]["code"])


def contract_of(move: Move) -> Contract:
    """The contract of a `choose_contract` move."""
    return Contract[str(move[1]["contract"]).removeprefix(CONTRACT_PREFIX)]


def contract_move(contract: Contract) -> Move:
    return "choose_contract", {"contract": CONTRACT_PREFIX + contract.name}


def discard_move(cards: Sequence[Card]) -> Move:
    return "discard", {"cards": [{"code": str(c)} for c in cards]}


def easy(view: Mapping[str, Any], moves: Sequence[Move]) -> Move:
    """The timeout's move: the lowest listed card, else the first listed move."""
    if moves[0][0] in ("play_card", "give_card"):
        return min(moves, key=lambda m: low_key(move_card(m)))
    return moves[0]


def dead_suits(view: Mapping[str, Any]) -> frozenset[Suit]:
    """Suits whose give came back unchanged to this seat in this deal's exchange."""
    seat = view.get("seat")
    return frozenset(
        parse_card(s["given"]).suit  # type: ignore[misc]
        for s in view.get("exchange", {}).get("steps", ())
        if s.get("giver") == seat and "given" in s and s["given"] == s.get("returned")
    )


def normal(view: Mapping[str, Any], moves: Sequence[Move]) -> Move:
    """The `normal` move of the seat whose view this is: one of the listed `moves`, or
    on the discard (a turn too wide to list) the cards it chooses."""
    kind = moves[0][0]
    hand = [parse_card(code) for code in view.get("hand", ())]
    if kind == "choose_contract":
        unused = [contract_of(m) for m in moves]
        return contract_move(choose_contract(unused, hand))
    contract = Contract(view.get("contract", ""))
    if kind == "give_card":
        by_card = {move_card(m): m for m in moves}
        return by_card[give_card(list(by_card), hand, dead_suits(view))]
    if kind == "discard":
        return discard_move(discard_cards(hand, contract))
    if kind == "play_card":
        by_card = {move_card(m): m for m in moves}
        trick = [parse_card(t["card"]) for t in view.get("trick", ())]
        return by_card[play_card(list(by_card), hand, trick, contract)]
    return moves[0]
