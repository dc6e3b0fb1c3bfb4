"""`kozyr play`'s screens driven by Textual's pilot against the real stack (table,
matchmaking and bots processes on real PostgreSQL and NATS): the table as the seat sees
it, moves by keys, illegal moves explained in the player's language, hints, Khözör's
signals, and a move sent while the table service is down, delivered once after it is
back."""

from __future__ import annotations

import uuid
from collections.abc import Callable

import pytest

from kozyr.api.common.v1 import games_pb2
from kozyr.api.table.v1 import actions_pb2, views_pb2
from kozyr.cli.play import controls, render
from kozyr.cli.play.app import PlayApp
from kozyr.cli.play.lobby import make_plan
from kozyr.client import TableClient
from kozyr.games.errors import COMMON_TEXTS
from kozyr.games.khozor_teams.texts import ERRORS as KHOZOR_TEXTS
from kozyr.games.three_five_eight.texts import ERRORS as TFE_TEXTS
from kozyr.texts import Lang
from tests.e2e.play.conftest import SCREEN, PlayStack, screen_text, until
from tests.e2e.published import stored_events
from tests.support.tables import token

pytestmark = pytest.mark.e2e


def _mine(app: PlayApp) -> bool:
    return app.view is not None and controls.is_mine(app.view)


async def test_a_private_table_against_computers_is_drawn_and_played_by_keys(
    play_stack: PlayStack,
) -> None:
    plan = make_plan("358", private=True, computers="easy")
    app = PlayApp(play_stack.endpoints("ana"), plan, Lang.EN)
    async with app.run_test(size=SCREEN) as pilot:
        await until(pilot, lambda: _mine(app))
        table = screen_text(app, "table")
        assert "Deal 1/18" in table
        assert "ana (you) [person · not seen yet]" in table  # no clock: never recorded
        assert table.count("[computer easy · online]") == 2
        assert "contracts left: ♠ ♥ ♦ ♣ NT MT" in table
        turn = screen_text(app, "turn")
        assert turn.startswith("YOUR TURN")
        assert " s · Turn " in turn
        assert app.view is not None
        before = app.view
        expected = controls.chosen_move(app.view, app.selection)
        assert expected in controls.turn_moves(app.view)  # the selection starts legal
        await pilot.press("enter")
        await until(pilot, _moved_on(app, before))
        await until(pilot, lambda: app.session is not None and app.session.pending is None)
        assert "Sent:" in screen_text(app, "status")


async def _to_act(stack: PlayStack, table_id: str) -> tuple[int, list[int]]:
    """The table's turn number and the seats it waits for (a spectator's view)."""
    async with TableClient(stack.mm.table.target, token("spectator")) as spectator:
        view = await spectator.get_table(table_id)
    return view.turn.number, list(view.turn.seats)


async def test_a_move_out_of_turn_is_explained_in_the_players_language(
    play_stack: PlayStack,
) -> None:
    players = ["ana", "bob", "carol"]
    table_id = await play_stack.open_table(players)
    _, seats = await _to_act(play_stack, table_id)
    idle = next(p for seat, p in enumerate(players) if seat not in seats)
    app = PlayApp(play_stack.endpoints(idle), make_plan("358", table_id=table_id), Lang.RO)
    async with app.run_test(size=SCREEN) as pilot:
        await until(pilot, lambda: app.view is not None)
        assert "Alegerea jocului" in screen_text(app, "turn")
        assert "1:Atu ♠  2:Atu ♥" in screen_text(app, "hand")  # the contract row
        await pilot.press("enter")
        not_your_turn = COMMON_TEXTS["NOT_YOUR_TURN"][Lang.RO]
        await until(pilot, lambda: screen_text(app, "status") == not_your_turn)
        assert app.session is not None
        assert app.session.pending is None  # refused: not sent again


async def test_h_asks_for_a_hint_which_enter_then_plays(play_stack: PlayStack) -> None:
    table_id = await play_stack.open_table(["ana", None, None])
    app = PlayApp(play_stack.endpoints("ana"), make_plan("358", table_id=table_id), Lang.EN)
    async with app.run_test(size=SCREEN) as pilot:
        await until(pilot, lambda: _mine(app))
        await pilot.press("h")
        await until(pilot, lambda: screen_text(app, "status").startswith("Hint: "))
        assert app.view is not None
        shown = controls.chosen_move(app.view, app.selection)
        assert shown in controls.turn_moves(app.view)
        described = render.describe(app.view, shown, Lang.EN)
        assert screen_text(app, "status") == f"Hint: {described} — Enter plays it"
        before = app.view
        await pilot.press("enter")
        await until(pilot, _moved_on(app, before))
    events = await stored_events(play_stack.mm.table.database_url, table_id)
    person = [e for e in events if not str(e.metadata.get("request_id", "")).startswith("bots:")]
    assert any(e.type in ("ContractChosen", "CardPlayed") for e in person)


async def test_a_move_made_while_the_table_service_is_down_is_applied_once_when_it_is_back(
    play_stack: PlayStack,
) -> None:
    players = ["ana", "bob", "carol"]
    table_id = await play_stack.open_table(players)
    _, seats = await _to_act(play_stack, table_id)
    declarer = players[seats[0]]
    app = PlayApp(play_stack.endpoints(declarer), make_plan("358", table_id=table_id), Lang.EN)
    service = play_stack.mm.table.service
    async with app.run_test(size=SCREEN) as pilot:
        await until(pilot, lambda: _mine(app))
        assert app.session is not None
        session = app.session
        service.kill()
        await until(pilot, lambda: not session.connected)
        assert "reconnecting" in screen_text(app, "status")
        await pilot.press("enter")
        await until(pilot, lambda: session.pending is not None)
        sent = session.pending
        assert sent is not None
        # the move's call has failed (gRPC's own retries spent): only the resend can land it
        await until(pilot, lambda: all(w.is_finished for w in app.workers if w.group == "moves"))
        assert session.pending is sent
        await service.start()
        await until(pilot, lambda: session.pending is None and session.connected)
        await until(pilot, lambda: app.view is not None and app.view.turn.kind != "contract")
    events = await stored_events(play_stack.mm.table.database_url, table_id)
    chosen = [e for e in events if e.type == "ContractChosen"]
    assert [e.metadata.get("request_id") for e in chosen] == [sent.request_id]


async def test_khozor_shows_teams_and_pile_and_toggles_a_signal(play_stack: PlayStack) -> None:
    seats: list[str | None] = ["ana", *[None] * 7]
    table_id = await play_stack.open_table(seats, games_pb2.GAME_KHOZOR_TEAMS)
    app = PlayApp(play_stack.endpoints("ana"), make_plan("khozor", table_id=table_id), Lang.EN)
    async with app.run_test(size=SCREEN) as pilot:
        await until(pilot, lambda: _mine(app) and _kind(app) in ("lead", "defend"))
        view = app.view
        assert view is not None
        table = screen_text(app, "table")
        assert "Team A · ana (you) [person · not seen yet]" in table  # no clock here
        assert table.count("[computer normal · online]") == 7
        assert "Reserve: " in table
        assert "p pick up · t 3-set signal · f 5-set signal" in screen_text(app, "keys")
        three = controls.toggle_signal(actions_pb2.SIGNAL_THREE_SET)
        settable = three in view.legal_actions
        await pilot.press("t")
        if settable:
            await until(pilot, lambda: _own_signals(app) == "3-set")
        else:
            refused = KHOZOR_TEXTS["SIGNAL_NOT_TRUE"][Lang.EN]
            await until(pilot, lambda: screen_text(app, "status") == refused)
        assert app.view is not None
        before = app.view
        await pilot.press("enter")  # the turn's first legal move: a lead, a beat or a pick-up
        # the move is on the table's stream, and its answer came back (the stream's view
        # may come first: the move stays pending until the answer)
        await until(pilot, _moved_on(app, before))
        await until(pilot, lambda: app.session is not None and app.session.pending is None)


def _moved_on(app: PlayApp, before: views_pb2.TableView) -> Callable[[], bool]:
    """The game moved on from `before`: a newer version alone may be a seat event's
    (`kozyr play` sends each next deal's client seed on its own)."""
    return lambda: app.view is not None and _game_of(app.view) != _game_of(before)


def _kind(app: PlayApp) -> str:
    return app.view.turn.kind if app.view is not None else ""


def _own_signals(app: PlayApp) -> str:
    """The signals shown on the viewer's own seat line."""
    for line in screen_text(app, "table").splitlines():
        if "ana (you)" in line and "Signals: " in line:
            return line.split("Signals: ", 1)[1]
    return ""


async def test_a_table_that_does_not_exist_is_said_so_and_the_app_stays(
    play_stack: PlayStack,
) -> None:
    missing = str(uuid.uuid4())
    plan = make_plan("khozor", table_id=missing)
    app = PlayApp(play_stack.endpoints("ana"), plan, Lang.IT)
    async with app.run_test(size=SCREEN) as pilot:
        await until(pilot, lambda: screen_text(app, "status") == f"Non esiste il tavolo {missing}.")
        assert app.is_running
        assert "p raccogli · t segnale set da 3" in screen_text(app, "keys")
        await pilot.press("enter", "h", "t")  # nothing to act on: nothing breaks
        assert app.is_running


def _game_of(view: views_pb2.TableView) -> views_pb2.TableView:
    """The view without what seat events change (the version, the seats' presence and
    control, the next deal's client seeds: `kozyr play` sends one on its own): the
    game itself, which a refused move leaves as it was."""
    game = views_pb2.TableView()
    game.CopyFrom(view)
    for field in ("version", "seats", "next_deal"):
        game.ClearField(field)
    return game


async def test_an_off_suit_card_chosen_with_the_arrows_is_explained_in_italian(
    play_stack: PlayStack,
) -> None:
    table_id = await play_stack.open_table(["ana", None, None])
    app = PlayApp(play_stack.endpoints("ana"), make_plan("358", table_id=table_id), Lang.IT)
    async with app.run_test(size=SCREEN) as pilot:
        while True:  # Enter plays each turn's first legal move, until ana must follow suit
            await until(pilot, lambda: _mine(app))
            view = app.view
            assert view is not None
            hand = controls.hand(view)
            off_suit = [i for i, card in enumerate(hand) if card not in controls.legal_cards(view)]
            if view.turn.kind == "play" and off_suit:
                break
            await pilot.press("enter")
            await until(pilot, _moved_on(app, view))
        steps = (off_suit[0] - app.selection.cursor) % len(hand)
        await pilot.press(*["right"] * steps)
        assert app.selection.cursor == off_suit[0]
        await pilot.press("left", "right")
        assert app.selection.cursor == off_suit[0]
        await pilot.press("enter")
        template = TFE_TEXTS["MUST_FOLLOW_SUIT"][Lang.IT]
        prefix = template.split("{", 1)[0]
        await until(pilot, lambda: screen_text(app, "status").startswith(prefix))
        assert app.view is not None
        assert _game_of(app.view) == _game_of(view), "refused: nothing of the game changed"
