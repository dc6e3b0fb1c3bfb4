"""The Textual app of `kozyr play`: the lobby's progress, then the table as the seat
sees it, driven by keys. Everything it shows comes from the pure `render*` modules and
everything it sends from `controls`; the network is `lobby` and `session`'s."""

from __future__ import annotations

import asyncio
import functools
import importlib
from collections.abc import Callable
from datetime import UTC, datetime
from typing import ClassVar

import grpc
from rich.text import Text
from textual.app import App, ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import VerticalScroll
from textual.css.query import NoMatches
from textual.widgets import Static

from kozyr.api.table.v1 import actions_pb2, views_pb2
from kozyr.cli.play import controls, render, render_any
from kozyr.cli.play.endpoints import Endpoints
from kozyr.cli.play.lobby import LobbyError, Plan, find_table
from kozyr.cli.play.session import TableSession
from kozyr.cli.play.texts import back_command, label
from kozyr.client import BotsClient, ClockClient, MatchmakingClient, TableClient
from kozyr.client.games import plugin_of
from kozyr.games.catalogue import UnknownGame, game_by_code
from kozyr.texts import Lang

SIGNALS = {"three": actions_pb2.SIGNAL_THREE_SET, "five": actions_pb2.SIGNAL_FIVE_SET}

Renderer = Callable[[views_pb2.TableView, Lang], list[Text]]
"""A drawing of a game's table: the view in, the lines of the table out."""
KEYED_MOVES = frozenset({"pick_up", "toggle_signal"})
"""Moves of their own keys (p, t, f): their help is shown for a game that has them."""


class PlayApp(App[None]):
    """One player at one table: `kozyr play`."""

    TITLE = "kozyr"
    CSS = """
    #turn { height: auto; min-height: 1; background: $boost; }
    #table { height: auto; }
    #board { height: 1fr; }
    #hand { height: auto; margin-top: 1; }
    #status { height: auto; min-height: 1; }
    #keys { height: auto; color: $text-muted; }
    """
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("left", "cursor(-1)", show=False),
        Binding("right", "cursor(1)", show=False),
        Binding("enter", "play", show=False),
        Binding("space", "mark", show=False),
        Binding("h", "hint", show=False),
        Binding("p", "pick_up", show=False),
        Binding("t", "signal('three')", show=False),
        Binding("f", "signal('five')", show=False),
        Binding("q", "quit", show=False),
        *(Binding(str(n), f"jump({n})", show=False) for n in range(10)),
    ]

    def __init__(
        self, endpoints: Endpoints, plan: Plan, lang: Lang, *, client_seed: str | None = None
    ) -> None:
        super().__init__()
        self.client_seed = client_seed
        self.endpoints = endpoints
        self.plan = plan
        self.lang = lang
        self.session: TableSession | None = None
        self.view: views_pb2.TableView | None = None
        self.selection = controls.Selection()
        self.started = asyncio.Event()
        """Set by Enter while a party's host waits for his friends."""

    def compose(self) -> ComposeResult:
        yield Static(label("connecting", self.lang), id="turn")
        with VerticalScroll(id="board"):
            yield Static("", id="table")
        yield Static("", id="hand")
        yield Static("", id="status")
        yield Static(self._keys(), id="keys")

    def _keys(self) -> str:
        """The keys of the game (the table's, once known), and the table's id (to come
        back to it)."""
        keys = label("keys", self.lang)
        code = self.view.game if self.view is not None else self.plan.game
        try:
            moves = set(game_by_code(code).commands)
        except UnknownGame:
            moves = set()
        if moves & KEYED_MOVES:
            keys += "\n" + label("keys_pick_up_signals", self.lang)
        if self.session is not None:
            keys += "\n" + label(
                "table_id",
                self.lang,
                table_id=self.session.table_id,
                back=back_command(self.session.table_id),
            )
        return keys

    def on_mount(self) -> None:
        self.run_worker(self._play(), name="play", exclusive=True)
        self.set_interval(1.0, self._draw_turn)

    async def _play(self) -> None:
        """Find the table, then watch it until the app closes."""
        ends = self.endpoints
        token = ends.token
        try:
            async with MatchmakingClient(ends.matchmaking, token, language=self.lang.value) as mm:
                table_id = await find_table(mm, self.plan, self.lang, self._say, self.started)
        except LobbyError as err:
            self.show_status(str(err), True)
            return
        self.started.set()
        clock = ClockClient(ends.clock, token) if ends.clock else None
        async with (
            TableClient(ends.table, token, language=self.lang.value) as table,
            BotsClient(ends.bots, token, language=self.lang.value) as bots,
        ):
            self.session = TableSession(
                table,
                table_id,
                self.lang,
                self.show_view,
                self.show_status,
                bots=bots,
                clock=clock,
                client_seed=self.client_seed,
            )
            self._show("keys", self._keys())
            try:
                await self.session.run()
            except grpc.aio.AioRpcError:
                pass  # refused for good (no such table, not allowed): the status says why
            finally:
                self.session = None  # its channels close: no more moves or hints
                if clock is not None:
                    await clock.close()

    # ------------------------------------------------------------------ drawing

    def _show(self, widget: str, content: str | Text) -> None:
        """Put `content` in a widget of the screen. A view or a line that arrives while
        the app shuts down finds the screen gone: it is dropped (it raised out of the
        session's worker, a traceback at quit and, in the pilot tests, an error in
        place of the test's own message)."""
        try:
            self.query_one(f"#{widget}", Static).update(content)
        except NoMatches:
            return

    def _say(self, text: str) -> None:
        self._show("turn", text)

    def show_status(self, text: str, error: bool) -> None:
        self._show("status", Text(text, style="bold red" if error else ""))

    def show_view(self, view: views_pb2.TableView) -> None:
        first = self.view is None
        self.view = view
        if first:
            self._show("keys", self._keys())
        self.selection = controls.follow(view, self.selection)
        self._draw()

    def _draw(self) -> None:
        view = self.view
        if view is None:
            return
        lines = renderer_of(view)(view, self.lang)
        self._show("table", Text("\n").join(lines))
        self._show("hand", self._hand(view))
        self._draw_turn()

    def _hand(self, view: views_pb2.TableView) -> Text:
        cards = controls.hand(view)
        heading = Text(f"{label('hand', self.lang)}: ", style="bold")
        if controls.choices(view):
            choices = render.choices_row(view, self.selection, self.lang)
            row = render.hand_row(cards, self.selection, (), self.lang, active=False)
            shown = Text.assemble(choices, "\n", heading, row)
        else:
            legal = controls.legal_cards(view)
            shown = Text.assemble(heading, render.hand_row(cards, self.selection, legal, self.lang))
        if self.selection.move is not None:  # the turn's default or a hint, untouched
            move = render.describe(view, self.selection.move, self.lang)
            shown.append("\n" + label("enter_plays", self.lang, move=move), style="italic")
        return shown

    def _draw_turn(self) -> None:
        if self.view is not None:
            line = render.turn_line(self.view, self.lang, datetime.now(UTC))
            self._show("turn", line)

    # ------------------------------------------------------------------ keys

    def action_cursor(self, step: int) -> None:
        if self.view is not None:
            self.selection = controls.move_cursor(self.view, self.selection, step)
            self._draw()

    def action_jump(self, number: int) -> None:
        if self.view is not None:
            self.selection = controls.jump(self.view, self.selection, number)
            self._draw()

    def action_mark(self) -> None:
        if self.view is not None:
            self.selection = controls.toggle_mark(self.view, self.selection)
            self._draw()

    def action_play(self) -> None:
        if not self.started.is_set():
            self.started.set()
            return
        if self.view is not None:
            self._send(controls.chosen_move(self.view, self.selection))

    def action_pick_up(self) -> None:
        self._send(controls.pick_up())

    def action_signal(self, which: str) -> None:
        self._send(controls.toggle_signal(SIGNALS[which]))

    def action_hint(self) -> None:
        if self.session is not None:
            self.run_worker(self._hint(), group="hints")

    def _send(self, move: actions_pb2.Action | None) -> None:
        if move is None or self.session is None or self.view is None:
            return
        described = render.describe(self.view, move, self.lang)
        self.show_status(label("sent", self.lang, move=described), False)
        self.run_worker(self.session.submit(move), group="moves")

    async def _hint(self) -> None:
        assert self.session is not None
        move = await self.session.hint()
        if move is None or self.view is None:
            return
        self.selection = controls.select(self.view, move)
        self._draw()
        described = render.describe(self.view, move, self.lang)
        self.show_status(label("hint_ready", self.lang, move=described), False)


def renderer_of(view: views_pb2.TableView) -> Renderer:
    """The drawing of the view's game: its own (`GameInfo.play_ui`), else — a game
    without one, or one this client lacks — `render_any`'s, from its plugin and view."""
    try:
        module = plugin_of(view).info.play_ui
    except UnknownGame:
        return render_any.table_lines
    return own_drawing(module) if module else render_any.table_lines


@functools.cache
def own_drawing(module: str) -> Renderer:
    """A game's own drawing, its module imported on first use (kozyr play only: the
    game's rules never import it)."""
    drawing: Renderer = importlib.import_module(module).table_lines
    return drawing
