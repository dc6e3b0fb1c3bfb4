"""Khözör's computer players on neutral data (its `GameInfo.levels` and `announce`):
from one seat's view — the game's view as a dict and the moves it lists as (field,
fields), `kozyr.games.info` — the `normal` rules of thumb (`easy` is the first listed
move, which the engine makes the timeout's default) and the team signals every
computer player sets. Pure: the bots service calls them, knowing no game.

The rules of thumb are written on cards, so that the `hard` level's playouts
(`kozyr.games.khozor_teams.hard`) play the same `normal` game on engine states.

`normal`, honestly (docs/bots.md):
- opener: the seat of the opening team with the fewest cards (ties: the lowest seat).
- lead: shed weak cards and keep trumps and jokers — the lead of the most cards that
  holds no trump and no joker (the weakest such, by its strongest card), else the
  weakest single card.
- defence: the cheapest beat (the engine lists the weakest first); a pickup instead
  when that beat would spend a joker while the reserve still has cards, or a high trump
  (king or better) on a single card while the reserve still has cards.
- signals: a computer player announces its true sets (`true_signal_moves`); its play never
  reads its teammates' signals (RULES.md: "their play is not changed by signals").
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from kozyr.games.cards import Card, Suit, parse_card
from kozyr.games.info import Move
from kozyr.games.khozor_teams.beating import power
from kozyr.games.khozor_teams.model import SignalKind
from kozyr.games.khozor_teams.signals import true_signals

ORDINARY_TOP = power(parse_card("AC"), Suit.SPADES)
"""The highest power of a card that is neither trump nor joker (an ace off trump)."""
HIGH_TRUMP = power(parse_card("KS"), Suit.SPADES)
"""A trump this strong or stronger is kept rather than spent on a single card early."""


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

SIGNAL_PREFIX = "SIGNAL_"
"""`kozyr.table.v1.Signal` names each signal SIGNAL_<SignalKind member name>."""


def move_cards(fields: Mapping[str, Any]) -> tuple[Card, ...]:
    """The cards of a lead or a beat (`{"cards": [{"code": "7H"}, …]}`)."""
    return tuple(parse_card(card["code"]) for card in fields.get("cards", ()))


def normal(view: Mapping[str, Any], moves: Sequence[Move]) -> Move:
    """The `normal` move of the seat whose view this is, among the listed `moves` (its
    signal toggles aside: those are `true_signal_moves`', never the turn's move)."""
    moves = [m for m in moves if m[0] != "toggle_signal"] or list(moves)
    kind = moves[0][0]
    if kind == "confirm_opener":
        counts = view["hand_counts"]
        return min(moves, key=lambda m: (counts[m[1]["opener_seat"]], m[1]["opener_seat"]))
    if view.get("trump") is None:
        return moves[0]
    trump = Suit(view["trump"])
    if kind == "lead":
        by_cards = {move_cards(m[1]): m for m in moves}
        return by_cards[choose_lead(list(by_cards), trump)]
    beats = [m for m in moves if m[0] == "beat"]
    pickup = next((m for m in moves if m[0] == "pick_up"), None)
    if not beats:
        return pickup or moves[0]
    cheapest = beats[0]
    if pickup is not None and pick_up_instead(
        move_cards(cheapest[1]), view["reserve_count"], trump
    ):
        return pickup
    return cheapest


def true_signal_moves(view: Mapping[str, Any], moves: Sequence[Move]) -> list[Move]:
    """The listed signal toggles that make the seat's signals its hand's truth.

    RULES.md: computer players set their own true signals. A set the hand no longer
    holds is cleared by the engine after the move that breaks it; a set gained (a
    refill, a pickup) is announced here. Empty for a spectator, or when every signal
    already tells the truth.
    """
    seat = view.get("viewer_seat")
    if seat is None:
        return []
    truth = true_signals([parse_card(c) for c in view.get("hand", ())])
    mine = next((row for row in view.get("signals", ()) if row.get("seat") == seat), None)
    shown = {
        SignalKind.THREE_SET: bool(mine and mine.get("three_set")),
        SignalKind.FIVE_SET: bool(mine and mine.get("five_set")),
    }
    wanted = {SIGNAL_PREFIX + kind.name for kind in SignalKind if (kind in truth) != shown[kind]}
    return [m for m in moves if m[0] == "toggle_signal" and m[1].get("signal") in wanted]
