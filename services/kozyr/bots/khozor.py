"""Khözör from one seat's view: the `normal` rules of thumb (`easy` is the first listed
move, which the engine makes the timeout's default) and the team signals every
computer player sets.

The rules of thumb are written on cards, so that the `hard` level's playouts
(`kozyr.bots.search_khozor`) play the same `normal` game on engine states.

`normal`, honestly (docs/bots.md):
- opener: the seat of the opening team with the fewest cards (ties: the lowest seat).
- lead: shed weak cards and keep trumps and jokers — the lead of the most cards that
  holds no trump and no joker (the weakest such, by its strongest card), else the
  weakest single card.
- defence: the cheapest beat (the engine lists the weakest first); a pickup instead
  when that beat would spend a joker while the reserve still has cards, or a high trump
  (king or better) on a single card while the reserve still has cards.
- signals: a computer player announces its true sets (`signal_toggles`); its play never
  reads its teammates' signals (RULES.md: "their play is not changed by signals").
"""

from __future__ import annotations

from collections.abc import Sequence

from kozyr.api.common.v1 import cards_pb2
from kozyr.api.table.v1 import actions_pb2, views_pb2
from kozyr.games.cards import Card, Suit, parse_card
from kozyr.games.khozor_teams.beating import power
from kozyr.games.khozor_teams.model import SignalKind
from kozyr.games.khozor_teams.signals import true_signals

ORDINARY_TOP = power(parse_card("AC"), Suit.SPADES)
"""The highest power of a card that is neither trump nor joker (an ace off trump)."""
HIGH_TRUMP = power(parse_card("KS"), Suit.SPADES)
"""A trump this strong or stronger is kept rather than spent on a single card early."""
SIGNAL_CODES = {
    SignalKind.THREE_SET: actions_pb2.SIGNAL_THREE_SET,
    SignalKind.FIVE_SET: actions_pb2.SIGNAL_FIVE_SET,
}


# ------------------------------------------------------------- rules on cards


def choose_lead(leads: Sequence[tuple[Card, ...]], trump: Suit) -> tuple[Card, ...]:
    """Of the legal leads (single cards weakest first, then sets), the one to play."""

    def weak(cards: tuple[Card, ...]) -> bool:
        return all(power(c, trump) <= ORDINARY_TOP for c in cards)

    sheds = [cards for cards in leads if weak(cards)]
    if not sheds:
        return leads[0]
    return min(sheds, key=lambda cards: (-len(cards), max(power(c, trump) for c in cards)))


def pick_up_instead(cheapest: tuple[Card, ...], reserve_count: int, trump: Suit) -> bool:
    """Whether taking the pile beats spending `cheapest` (the cheapest legal beat)."""
    if reserve_count == 0:
        return False
    if any(c.is_joker for c in cheapest):
        return True
    return len(cheapest) == 1 and power(cheapest[0], trump) >= HIGH_TRUMP


# ---------------------------------------------------------------- from a view


def _cards(cards: Sequence[cards_pb2.Card]) -> tuple[Card, ...]:
    return tuple(parse_card(c.code) for c in cards)


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
        by_cards = {_cards(a.lead.cards): a for a in moves}
        return by_cards[choose_lead(list(by_cards), trump)]
    beats = [a for a in moves if a.WhichOneof("action") == "beat"]
    pickup = next((a for a in moves if a.WhichOneof("action") == "pick_up"), None)
    if not beats:
        return pickup or moves[0]
    cheapest = beats[0]
    if pickup is not None and pick_up_instead(
        _cards(cheapest.beat.cards), view.reserve_count, trump
    ):
        return pickup
    return cheapest


def signal_toggles(view: views_pb2.TableView) -> list[actions_pb2.Action]:
    """The listed signal toggles that make the seat's signals its hand's truth.

    RULES.md: computer players set their own true signals. A set the hand no longer
    holds is cleared by the engine after the move that breaks it; a set gained (a
    refill, a pickup) is announced here. Empty for a 3-5-8 view, a spectator, or when
    every signal already tells the truth.
    """
    if view.WhichOneof("game_view") != "khozor_teams" or not view.HasField("seat"):
        return []
    game = view.khozor_teams
    truth = true_signals([parse_card(c) for c in game.hand])
    mine = next((row for row in game.signals if row.seat == view.seat), None)
    shown = {
        SignalKind.THREE_SET: bool(mine and mine.three_set),
        SignalKind.FIVE_SET: bool(mine and mine.five_set),
    }
    wanted = {SIGNAL_CODES[kind] for kind in SignalKind if (kind in truth) != shown[kind]}
    return [
        a
        for a in view.legal_actions
        if a.WhichOneof("action") == "toggle_signal" and a.toggle_signal.signal in wanted
    ]
