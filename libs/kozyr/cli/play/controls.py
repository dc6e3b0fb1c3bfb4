"""The selection model of the table screen, pure: what the cursor is on, which cards are
marked, and the move Enter sends.

The row the cursor moves along is the hand, or — when the decision is not about cards
(3-5-8's contract, Khözör's opener) — the choices. Every card and every contract can be
selected, the illegal ones too: the table service refuses an illegal move with its
reason in the player's language, which is how the client explains it (no rules here).
At each new turn the selection starts on the view's first legal move, so Enter alone
always plays a legal move.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, replace

from kozyr.api.common.v1 import cards_pb2
from kozyr.api.table.v1 import actions_pb2, views_pb2
from kozyr.client.games import UnknownGame, action_of, game_view, plugin_of
from kozyr.games.decider import CLIENT_SEED

CARD_MOVES = {
    "play": "play_card",
    "exchange_give": "give_card",
    "discard": "discard",
    "lead": "lead",
    "defend": "beat",
}
"""Turn kind → the action field a card move of that turn fills."""

MULTI_CARD = frozenset({"discard", "lead", "beat"})
"""Action fields that take several cards (the others take one)."""


@dataclass(frozen=True)
class Selection:
    """Where the cursor is (an index into `row`), the marked card indexes, the turn
    number they were chosen for (a new turn starts a new selection), and the move they
    show while nobody has moved them: the turn's default or a hint, which Enter sends
    as it is (also a move no selection shows: Khözör's pick-up)."""

    cursor: int = 0
    marked: frozenset[int] = field(default_factory=frozenset)
    turn: int = -1
    move: actions_pb2.Action | None = None


def hand(view: views_pb2.TableView) -> list[str]:
    """The seat's cards: the `hand` of the game's own view (none for a game without)."""
    if view.WhichOneof("game_view") is None:
        return []
    return list(getattr(game_view(view), "hand", ()))


def is_mine(view: views_pb2.TableView) -> bool:
    """Whether the view's seat is one of the seats to act now. Never for the first
    deal's `client_seed` turn: the session sends the seat's seed by itself, so the
    player has nothing to do but wait for the deal."""
    return (
        view.HasField("seat")
        and view.seat in view.turn.seats
        and view.turn.kind != CLIENT_SEED
        and not view.finished
    )


def turn_moves(view: views_pb2.TableView) -> list[actions_pb2.Action]:
    """The legal moves of the turn, signals left out (those may be sent at any time)."""
    return [a for a in view.legal_actions if a.WhichOneof("action") != "toggle_signal"]


def choices(view: views_pb2.TableView) -> list[actions_pb2.Action]:
    """The row of a decision that is not about cards, or [] when the hand is the row: the
    choices the game shows for the turn (`GameInfo.choices`), the illegal ones too
    (3-5-8's six contracts, used ones included), or the listed moves where the game
    offers them (Khözör's opener seats on offer)."""
    try:
        offered = plugin_of(view).info.choices.get(view.turn.kind)
    except UnknownGame:
        offered = None
    if offered is None:
        return []
    if not offered:
        return turn_moves(view)
    return [action_of(move) for move in offered]


def row_length(view: views_pb2.TableView) -> int:
    return len(choices(view)) or len(hand(view))


def action_cards(action: actions_pb2.Action) -> list[str]:
    """The card texts a move plays (none for a contract, a pick-up, a signal)."""
    kind = action.WhichOneof("action")
    if kind is None:
        return []
    body = getattr(action, kind)
    if hasattr(body, "cards"):
        return [c.code for c in body.cards]
    if hasattr(body, "card"):
        return [body.card.code]
    return []


def legal_cards(view: views_pb2.TableView) -> set[str]:
    """Cards that some listed legal move plays (3-5-8's discard: any card of the hand)."""
    if view.turn.kind == "discard" and is_mine(view):
        return set(hand(view))
    return {card for action in turn_moves(view) for card in action_cards(action)}


def select(view: views_pb2.TableView, action: actions_pb2.Action | None) -> Selection:
    """A selection showing `action` (the turn's default or a hint): the cursor on its
    choice or first card, its cards marked when the move takes several."""
    turn = view.turn.number
    if action is None:
        return Selection(turn=turn)
    row = choices(view)
    if row:
        index = next((i for i, choice in enumerate(row) if choice == action), 0)
        return Selection(cursor=index, turn=turn, move=action)
    cards = hand(view)
    indexes = [cards.index(c) for c in action_cards(action) if c in cards]
    if not indexes:
        return Selection(turn=turn, move=action)
    multi = action.WhichOneof("action") in MULTI_CARD and len(indexes) > 1
    marked = frozenset(indexes if multi else ())
    return Selection(cursor=indexes[0], marked=marked, turn=turn, move=action)


def follow(view: views_pb2.TableView, selection: Selection) -> Selection:
    """The selection for a fresh view: a new turn starts at its first legal move; the
    same turn keeps the selection, clamped to the row."""
    if selection.turn != view.turn.number:
        moves = turn_moves(view) if is_mine(view) else []
        return select(view, moves[0] if moves else None)
    length = row_length(view)
    cursor = min(selection.cursor, max(length - 1, 0))
    return replace(
        selection, cursor=cursor, marked=frozenset(m for m in selection.marked if m < length)
    )


def move_cursor(view: views_pb2.TableView, selection: Selection, step: int) -> Selection:
    length = row_length(view)
    if not length:
        return selection
    return replace(selection, cursor=(selection.cursor + step) % length, move=None)


def jump(view: views_pb2.TableView, selection: Selection, number: int) -> Selection:
    """Number key `number` (1-9, 0 for 10): the cursor on that item of the row."""
    index = 9 if number == 0 else number - 1
    if index >= row_length(view):
        return selection
    return replace(selection, cursor=index, move=None)


def toggle_mark(view: views_pb2.TableView, selection: Selection) -> Selection:
    """Mark or unmark the card under the cursor (moves of several cards)."""
    if choices(view) or not hand(view):
        return selection
    return replace(selection, marked=selection.marked ^ {selection.cursor}, move=None)


def chosen_move(view: views_pb2.TableView, selection: Selection) -> actions_pb2.Action | None:
    """The move Enter sends: the selection's own move while untouched; else the choice
    under the cursor; else a card move of the turn's kind with the marked cards
    (several) or the card under the cursor."""
    if selection.move is not None:
        return selection.move
    row = choices(view)
    if row:
        return row[selection.cursor] if selection.cursor < len(row) else None
    field_name = CARD_MOVES.get(view.turn.kind)
    cards = hand(view)
    if field_name is None or not cards:
        return None
    cursor_card = cards[min(selection.cursor, len(cards) - 1)]
    if field_name not in MULTI_CARD:
        return _card_action(field_name, [cursor_card])
    picked = [cards[i] for i in sorted(selection.marked)] or [cursor_card]
    return _card_action(field_name, picked)


def _card_action(field_name: str, codes: Sequence[str]) -> actions_pb2.Action:
    action = actions_pb2.Action()
    body = getattr(action, field_name)
    if field_name in MULTI_CARD:
        body.cards.extend(cards_pb2.Card(code=c) for c in codes)
    else:
        body.card.code = codes[0]
    return action


def pick_up() -> actions_pb2.Action:
    return actions_pb2.Action(pick_up=actions_pb2.PickUp())


def toggle_signal(signal: actions_pb2.Signal.ValueType) -> actions_pb2.Action:
    return actions_pb2.Action(toggle_signal=actions_pb2.ToggleSignal(signal=signal))
