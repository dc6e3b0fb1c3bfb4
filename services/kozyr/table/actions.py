"""Moves on the wire ↔ the games' commands: `Action` (proto) to and from decider commands.

Malformed input (an empty oneof, an unknown card text, a move of the other game, an
unspecified enum) is refused here with INVALID_ARGUMENT before any rule runs; whether a
well-formed move is legal is the decider's business (FAILED_PRECONDITION).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from kozyr.api.common.v1 import cards_pb2
from kozyr.api.table.v1 import actions_pb2
from kozyr.games import khozor_teams as kz
from kozyr.games import three_five_eight as t58
from kozyr.games.cards import Card, CardParseError, parse_card
from kozyr.runtime.errors import InvalidArgument

MAX_CARDS = 5
"""No move of either game names more than five cards."""

CONTRACTS: dict[actions_pb2.Contract.ValueType, t58.Contract] = {
    actions_pb2.CONTRACT_SPADES: t58.Contract.SPADES,
    actions_pb2.CONTRACT_HEARTS: t58.Contract.HEARTS,
    actions_pb2.CONTRACT_DIAMONDS: t58.Contract.DIAMONDS,
    actions_pb2.CONTRACT_CLUBS: t58.Contract.CLUBS,
    actions_pb2.CONTRACT_NO_TRUMP: t58.Contract.NO_TRUMP,
    actions_pb2.CONTRACT_MINIMUM_TRICKS: t58.Contract.MINIMUM_TRICKS,
}
SIGNALS: dict[actions_pb2.Signal.ValueType, kz.SignalKind] = {
    actions_pb2.SIGNAL_THREE_SET: kz.SignalKind.THREE_SET,
    actions_pb2.SIGNAL_FIVE_SET: kz.SignalKind.FIVE_SET,
}
_CONTRACT_CODES = {v: k for k, v in CONTRACTS.items()}
_SIGNAL_CODES = {v: k for k, v in SIGNALS.items()}


def malformed(reason: str, message: str) -> InvalidArgument:
    return InvalidArgument(reason, message)


def card_of(message: cards_pb2.Card) -> Card:
    try:
        return parse_card(message.code)
    except CardParseError:
        shown = message.code if len(message.code) <= 8 else f"{message.code[:8]}…"
        raise malformed("INVALID_CARD", f"{shown!r} is not a card") from None


def cards_of(messages: Sequence[cards_pb2.Card]) -> tuple[Card, ...]:
    if not messages or len(messages) > MAX_CARDS:
        raise malformed("INVALID_CARD_COUNT", f"a move names 1 to {MAX_CARDS} cards")
    return tuple(card_of(m) for m in messages)


def _contract(code: actions_pb2.Contract.ValueType) -> t58.Contract:
    if code not in CONTRACTS:
        raise malformed("INVALID_CONTRACT", "choose one of the six contracts")
    return CONTRACTS[code]


def _signal(code: actions_pb2.Signal.ValueType) -> kz.SignalKind:
    if code not in SIGNALS:
        raise malformed("INVALID_SIGNAL", "the signal must be THREE_SET or FIVE_SET")
    return SIGNALS[code]


def _opener(seat: int) -> int:
    if not 0 <= seat < kz.SEATS:
        raise malformed("INVALID_SEAT", f"there is no seat {seat} at a Khözör table")
    return seat


_Builder = Callable[[int, Any], Any]
_BUILDERS: dict[str, dict[str, _Builder]] = {
    t58.GAME_ID: {
        "choose_contract": lambda seat, a: t58.ChooseContract(seat, _contract(a.contract)),
        "give_card": lambda seat, a: t58.GiveCard(seat, card_of(a.card)),
        "discard": lambda seat, a: t58.Discard(seat, cards_of(a.cards)),
        "play_card": lambda seat, a: t58.PlayCard(seat, card_of(a.card)),
    },
    kz.GAME_ID: {
        "confirm_opener": lambda seat, a: kz.ConfirmOpener(seat, _opener(a.opener_seat)),
        "lead": lambda seat, a: kz.Lead(seat, cards_of(a.cards)),
        "beat": lambda seat, a: kz.Beat(seat, cards_of(a.cards)),
        "pick_up": lambda seat, a: kz.PickUp(seat),
        "toggle_signal": lambda seat, a: kz.ToggleSignal(seat, _signal(a.signal)),
    },
}


def command_from_action(game_id: str, seat: int, action: actions_pb2.Action) -> Any:
    """The decider command for `action` played by `seat` at a `game_id` table."""
    kind = action.WhichOneof("action")
    if kind is None:
        raise malformed("EMPTY_ACTION", "the action names no move")
    builder = _BUILDERS[game_id].get(kind)
    if builder is None:
        raise malformed("WRONG_GAME_ACTION", f"{kind} is not a move of {game_id}")
    return builder(seat, getattr(action, kind))


def _pb_cards(cards: Sequence[Card]) -> list[cards_pb2.Card]:
    return [cards_pb2.Card(code=str(c)) for c in cards]


def action_from_command(command: Any) -> actions_pb2.Action:
    """The wire form of a player command (views list the legal moves this way)."""
    match command:
        case t58.ChooseContract(contract=contract):
            move = actions_pb2.ChooseContract(contract=_CONTRACT_CODES[contract])
            return actions_pb2.Action(choose_contract=move)
        case t58.GiveCard(card=card):
            return actions_pb2.Action(give_card=actions_pb2.GiveCard(card=_pb_cards([card])[0]))
        case t58.Discard(cards=cards):
            return actions_pb2.Action(discard=actions_pb2.Discard(cards=_pb_cards(cards)))
        case t58.PlayCard(card=card):
            return actions_pb2.Action(play_card=actions_pb2.PlayCard(card=_pb_cards([card])[0]))
        case kz.ConfirmOpener(opener=opener):
            move_o = actions_pb2.ConfirmOpener(opener_seat=opener)
            return actions_pb2.Action(confirm_opener=move_o)
        case kz.Lead(cards=cards):
            return actions_pb2.Action(lead=actions_pb2.Lead(cards=_pb_cards(cards)))
        case kz.Beat(cards=cards):
            return actions_pb2.Action(beat=actions_pb2.Beat(cards=_pb_cards(cards)))
        case kz.PickUp():
            return actions_pb2.Action(pick_up=actions_pb2.PickUp())
        case kz.ToggleSignal(kind=kind):
            move_s = actions_pb2.ToggleSignal(signal=_SIGNAL_CODES[kind])
            return actions_pb2.Action(toggle_signal=move_s)
    raise ValueError(f"not a player command: {command!r}")
