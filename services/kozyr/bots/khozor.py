"""Khözör from one seat's view: the `normal` rules of thumb (`easy` is the first listed
move, which the engine makes the timeout's default).

`normal`, honestly (docs/bots.md):
- opener: the seat of the opening team with the fewest cards (ties: the lowest seat).
- lead: shed weak cards and keep trumps and jokers — the listed lead of the most cards
  that holds no trump and no joker (the weakest such, by its strongest card), else the
  weakest single card.
- defence: the cheapest listed beat (the engine lists the weakest first); a pickup
  instead when that beat would spend a joker while the reserve still has cards.
Signals are neither set nor read yet.
"""

from __future__ import annotations

from collections.abc import Sequence

from kozyr.api.common.v1 import cards_pb2
from kozyr.api.table.v1 import actions_pb2, views_pb2
from kozyr.games.cards import Card, Suit, parse_card
from kozyr.games.khozor_teams.beating import power

ORDINARY_TOP = power(parse_card("AC"), Suit.SPADES)
"""The highest power of a card that is neither trump nor joker (an ace off trump)."""


def normal(
    view: views_pb2.KhozorTeamsView, moves: Sequence[actions_pb2.Action]
) -> actions_pb2.Action:
    kind = moves[0].WhichOneof("action")
    if kind == "confirm_opener":
        counts = view.hand_counts
        return min(
            moves,
            key=lambda a: (counts[a.confirm_opener.opener_seat], a.confirm_opener.opener_seat),
        )
    if not view.HasField("trump"):
        return moves[0]
    trump = Suit(view.trump)
    if kind == "lead":
        return _lead(moves, trump)
    return _defend(view, moves, trump)


def _cards(cards: Sequence[cards_pb2.Card]) -> list[Card]:
    return [parse_card(c.code) for c in cards]


def _lead(moves: Sequence[actions_pb2.Action], trump: Suit) -> actions_pb2.Action:
    def weak(action: actions_pb2.Action) -> bool:
        return all(power(c, trump) <= ORDINARY_TOP for c in _cards(action.lead.cards))

    sheds = [a for a in moves if weak(a)]
    if not sheds:
        return moves[0]
    return min(
        sheds,
        key=lambda a: (
            -len(a.lead.cards),
            max(power(c, trump) for c in _cards(a.lead.cards)),
        ),
    )


def _defend(
    view: views_pb2.KhozorTeamsView, moves: Sequence[actions_pb2.Action], trump: Suit
) -> actions_pb2.Action:
    beats = [a for a in moves if a.WhichOneof("action") == "beat"]
    pickup = next((a for a in moves if a.WhichOneof("action") == "pick_up"), None)
    if not beats:
        return pickup or moves[0]
    cheapest = beats[0]
    spends_joker = any(c.is_joker for c in _cards(cheapest.beat.cards))
    if spends_joker and view.reserve_count > 0 and pickup is not None:
        return pickup
    return cheapest
