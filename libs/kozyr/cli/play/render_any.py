"""Any game's table, for a game with no renderer of its own in `kozyr play`: drawn from
its plugin (`GameInfo.name`) and its own view as neutral data (`kozyr.client.games`):
the game's name, every seat's player and state, then each field of the game's view —
cards by their names in the player's language. Pure: a view in, `rich.text.Text` out.

A game added as one package is playable in the terminal at once; a drawing of a game's
own (`GameInfo.play_ui`, `app.renderer_of`) is only a nicer drawing of the same view."""

from __future__ import annotations

from typing import Any

from rich.text import Text

from kozyr.api.table.v1 import views_pb2
from kozyr.cli.play.render import card_label, seat_name, seat_state
from kozyr.cli.play.texts import label
from kozyr.client.games import UnknownGame, neutral_view, plugin_of
from kozyr.games.cards import CardParseError, parse_card
from kozyr.texts import Lang

OWN_FIELDS = frozenset({"game_id", "seat", "hand"})
"""Fields of a game's view drawn elsewhere: the viewer's seat, the hand row."""


def header(view: views_pb2.TableView, lang: Lang) -> Text:
    """The game's name in the player's language (its number for a game this client lacks)."""
    try:
        name = plugin_of(view).info.name[lang]
    except UnknownGame:
        name = str(view.game)
    return Text(name, style="bold")


def seat_lines(view: views_pb2.TableView, lang: Lang) -> list[Text]:
    return [
        Text.assemble(
            (f"{label('seat', lang)} {info.seat} {seat_name(view, info.seat, lang)}", "bold"),
            " [",
            seat_state(info, lang),
            "]",
        )
        for info in view.seats
    ]


def shown(value: Any, lang: Lang) -> str:
    """A field's value for a player: a card by its name, a list item by item, a nested
    message as its fields; "-" for nothing."""
    if isinstance(value, str):
        try:
            parse_card(value)
        except CardParseError:
            return value
        return card_label(value, lang)
    if isinstance(value, list):
        return " ".join(shown(item, lang) for item in value) if value else "-"
    if isinstance(value, dict):
        return " ".join(f"{k} {shown(v, lang)}" for k, v in value.items())
    if value is None:
        return "-"
    return str(value).lower() if isinstance(value, bool) else str(value)


def field_lines(view: views_pb2.TableView, lang: Lang) -> list[Text]:
    """Every field of the game's view but those drawn elsewhere, in the message's order."""
    if view.WhichOneof("game_view") is None:
        return []
    data = neutral_view(view)
    return [
        Text(f"{name.replace('_', ' ')}: {shown(value, lang)}")
        for name, value in data.items()
        if name not in OWN_FIELDS
    ]


def table_lines(view: views_pb2.TableView, lang: Lang) -> list[Text]:
    """The whole table, top to bottom (the hand is drawn by the screen's hand row)."""
    lines = [header(view, lang), *seat_lines(view, lang), *field_lines(view, lang)]
    if view.finished:
        lines.append(Text(label("game_over", lang), style="bold reverse"))
    return lines
