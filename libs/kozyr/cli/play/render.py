"""Pure rendering shared by both games: cards, seats, the turn line with its clock, the
hand row and the choices row, and the words for a move. Text in, `rich.text.Text` out;
a game's own drawing (or `render_any`) draws the table itself."""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from datetime import UTC, datetime

from rich.text import Text

from kozyr.api.common.v1 import seats_pb2
from kozyr.api.table.v1 import actions_pb2, views_pb2
from kozyr.cli.play import controls
from kozyr.cli.play.texts import label
from kozyr.client.games import UnknownGame, move_of, plugin_of
from kozyr.games.cards import CardParseError, parse_card
from kozyr.games.decider import CLIENT_SEED
from kozyr.games.translations import card_name
from kozyr.texts import Lang, Texts, in_language

RED_SUITS = ("H", "D")
LEVELS = {
    seats_pb2.COMPUTER_LEVEL_EASY: "easy",
    seats_pb2.COMPUTER_LEVEL_NORMAL: "normal",
    seats_pb2.COMPUTER_LEVEL_HARD: "hard",
}


def card_label(code: str, lang: Lang) -> str:
    """A card as the player reads it ("D♠" for QS in Romanian); unknown text as it is."""
    try:
        return card_name(parse_card(code), lang)
    except CardParseError:
        return code


def card_text(code: str, lang: Lang, style: str = "") -> Text:
    """A card, red for hearts, diamonds and the red joker."""
    colour = "red" if code.upper().endswith(RED_SUITS) or code.lower() == "jk-red" else ""
    return Text(card_label(code, lang), style=f"{colour} {style}".strip())


def cards_text(codes: Sequence[str], lang: Lang) -> Text:
    return Text(" ").join(card_text(c, lang) for c in codes)


def seat_name(view: views_pb2.TableView, seat: int, lang: Lang) -> str:
    """The seat's player, or "computer 2"; "(you)" after the viewer's own seat."""
    info = view.seats[seat] if seat < len(view.seats) else None
    name = info.player_id if info and info.player_id else f"{label('computer', lang)} {seat}"
    if view.HasField("seat") and view.seat == seat:
        name += f" ({label('you', lang)})"
    return name


def seat_state(info: views_pb2.SeatInfo, lang: Lang) -> Text:
    """Who plays the seat now and whether its player is online: "person · online",
    "computer normal · online", "absent · offline", "person · not seen yet" (no
    presence recorded yet: the clock has seen no heartbeat and no cover deadline)."""
    control = {
        seats_pb2.SEAT_CONTROL_PERSON: label("person", lang),
        seats_pb2.SEAT_CONTROL_COMPUTER: label("computer", lang),
        seats_pb2.SEAT_CONTROL_ABSENT: label("absent", lang),
    }.get(info.control, "?")
    if info.control == seats_pb2.SEAT_CONTROL_COMPUTER and info.level in LEVELS:
        control += " " + label(f"level_{LEVELS[info.level]}", lang)
    if info.presence == seats_pb2.PRESENCE_UNKNOWN:
        return Text.assemble(control, " · ", (label("presence_unknown", lang), "yellow"))
    presence = label("online" if info.online else "offline", lang)
    return Text.assemble(control, " · ", (presence, "green" if info.online else "red"))


def seconds_left(deadline: datetime | None, now: datetime) -> int | None:
    """Whole seconds until the turn's deadline (0 once passed); None without one."""
    if deadline is None:
        return None
    return max(0, int((deadline - now).total_seconds() + 0.999))


def deadline_of(view: views_pb2.TableView) -> datetime | None:
    if not view.turn.HasField("deadline"):
        return None
    return view.turn.deadline.ToDatetime(tzinfo=UTC)


def catalogue_name(catalogue: Mapping[str, Texts], key: str, lang: Lang) -> str:
    """A game's name for `key` (a phase, a turn kind, a signal) in `lang`; the key itself
    when the catalogue has none."""
    texts = catalogue.get(key)
    return in_language(texts, lang) if texts else key


def turn_kind_name(view: views_pb2.TableView, lang: Lang) -> str:
    """The turn's kind by the game's name for it (`GameInfo.turn_names`); the table's
    own `client_seed` turn (the first deal waits for the players' seeds) by the CLI's."""
    if view.turn.kind == CLIENT_SEED:
        return label("client_seed", lang)
    try:
        return plugin_of(view).info.turn_name(view.turn.kind, lang)
    except UnknownGame:
        return view.turn.kind


def turn_line(view: views_pb2.TableView, lang: Lang, now: datetime) -> Text:
    """Whose turn, what decision, and the clock: "YOUR TURN · Play a card · 23 s"."""
    if view.finished:
        return Text(label("game_over", lang), style="bold")
    kind = turn_kind_name(view, lang)
    left = seconds_left(deadline_of(view), now)
    clock = f" · {label('seconds_left', lang, seconds=left)}" if left is not None else ""
    number = f" · {label('turn', lang)} {view.turn.number}"
    if controls.is_mine(view):
        return Text.assemble(
            (label("your_turn", lang), "bold reverse"), f" · {kind}{clock}{number}"
        )
    names = ", ".join(seat_name(view, s, lang) for s in view.turn.seats)
    return Text(f"{label('waiting_for', lang)} {names} · {kind}{clock}{number}")


def hand_row(
    codes: Sequence[str],
    selection: controls.Selection,
    legal: Collection[str],
    lang: Lang,
    *,
    active: bool = True,
) -> Text:
    """The hand, numbered: the cursor's card reversed, marked cards underlined with a
    `*`, cards no listed move plays dimmed (they can still be sent: the server says why
    not)."""
    parts = []
    for index, code in enumerate(codes):
        style = ""
        if legal and code not in legal:
            style += " dim"
        if index in selection.marked:
            style += " underline bold"
        if active and index == selection.cursor:
            style += " reverse"
        mark = "*" if index in selection.marked else ""
        number = f"{(index + 1) % 10}:" if index < 10 else ""
        parts.append(Text.assemble(number, card_text(code, lang, style.strip()), mark))
    return Text("  ").join(parts)


def choices_row(view: views_pb2.TableView, selection: controls.Selection, lang: Lang) -> Text:
    """The choices of a decision that is not about cards; the illegal ones dimmed."""
    legal = controls.turn_moves(view)
    parts = []
    for index, choice in enumerate(controls.choices(view)):
        style = "" if not legal or choice in legal else "dim"
        if index == selection.cursor:
            style += " reverse"
        parts.append(
            Text(f"{(index + 1) % 10}:{describe(view, choice, lang)}", style=style.strip())
        )
    return Text("  ").join(parts)


def describe(view: views_pb2.TableView, action: actions_pb2.Action, lang: Lang) -> str:
    """A move in words: "10♥", "♠ trump", "pick up", "3-set", "opener: ana" — a value the
    move carries by the game's name for it (`GameInfo.choice_names`), else its cards."""
    kind = action.WhichOneof("action")
    if kind == "confirm_opener":
        name = seat_name(view, action.confirm_opener.opener_seat, lang)
        return label("confirm_opener", lang, name=name)
    if kind == "pick_up":
        return label("pick_up", lang)
    named = choice_names(view)
    if kind is not None and named:
        _, fields = move_of(action)
        for value in fields.values():
            if isinstance(value, str) and value in named:
                return named[value][lang]
    return " ".join(card_label(c, lang) for c in controls.action_cards(action))


def choice_names(view: views_pb2.TableView) -> Mapping[str, Texts]:
    try:
        return plugin_of(view).info.choice_names
    except UnknownGame:
        return {}
