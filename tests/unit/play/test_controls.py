"""The selection model of `kozyr play`'s table screen: each turn starts on a legal move,
keys move, mark and jump, and Enter's move is the one shown (legal or not: the table
service explains an illegal one)."""

from __future__ import annotations

from kozyr.api.common.v1 import cards_pb2
from kozyr.api.table.v1 import actions_pb2
from kozyr.cli.play import controls
from kozyr.cli.play.controls import Selection
from tests.unit.play.views import cards_action, contract, khozor_view, play, tfe_view


def test_a_new_turn_starts_on_the_first_legal_card() -> None:
    view = tfe_view(legal=[play("AS"), play("QS")])
    selection = controls.follow(view, Selection())
    assert selection == Selection(cursor=2, turn=5, move=play("AS"))
    assert controls.chosen_move(view, selection) == play("AS")


def test_the_same_turn_keeps_the_selection_and_a_new_one_resets_it() -> None:
    view = tfe_view(legal=[play("AS")])
    moved = controls.move_cursor(view, controls.follow(view, Selection()), 1)
    assert controls.follow(view, moved) == moved
    assert moved.move is None  # moved by hand: Enter plays what the cursor is on
    later = tfe_view(legal=[play("7C")], turn=8)
    assert controls.follow(later, moved) == Selection(cursor=0, turn=8, move=play("7C"))


def test_a_shorter_hand_clamps_the_cursor_and_drops_marks_past_its_end() -> None:
    view = tfe_view(hand=["7C", "QS"], kind="discard")
    kept = controls.follow(view, Selection(cursor=3, marked=frozenset({0, 3}), turn=5))
    assert kept == Selection(cursor=1, marked=frozenset({0}), turn=5)


def test_arrows_wrap_and_number_keys_jump() -> None:
    view = tfe_view()
    start = Selection(turn=5)
    assert controls.move_cursor(view, start, -1).cursor == 3
    assert controls.jump(view, start, 3).cursor == 2
    assert controls.jump(view, start, 0) == start  # the tenth card: this hand has four


def test_an_illegal_card_can_still_be_sent() -> None:
    """The server refuses it with its reason in the player's language."""
    view = tfe_view(legal=[play("AS")])
    selection = controls.jump(view, controls.follow(view, Selection()), 1)
    assert controls.chosen_move(view, selection) == play("7C")
    assert controls.legal_cards(view) == {"AS"}


def test_the_exchange_gives_the_card_under_the_cursor() -> None:
    give = actions_pb2.Action(give_card=actions_pb2.GiveCard(card=cards_pb2.Card(code="7C")))
    view = tfe_view(kind="exchange_give", legal=[give])
    assert controls.chosen_move(view, controls.follow(view, Selection())) == give


def test_the_discard_starts_with_the_default_four_marked() -> None:
    default = cards_action("discard", ["7C", "QS", "AS", "10H"])
    view = tfe_view(kind="discard", legal=[default], hand=["7C", "QS", "AS", "10H", "2D"])
    selection = controls.follow(view, Selection())
    assert selection.marked == {0, 1, 2, 3}
    assert controls.legal_cards(view) == {"7C", "QS", "AS", "10H", "2D"}
    swapped = controls.toggle_mark(view, controls.jump(view, selection, 5))
    swapped = controls.toggle_mark(view, controls.jump(view, swapped, 1))
    assert controls.chosen_move(view, swapped) == cards_action("discard", ["QS", "AS", "10H", "2D"])


def test_the_contract_row_holds_all_six_contracts_the_used_ones_too() -> None:
    legal = [contract(actions_pb2.CONTRACT_HEARTS), contract(actions_pb2.CONTRACT_CLUBS)]
    view = tfe_view(kind="contract", legal=legal)
    assert len(controls.choices(view)) == 6
    selection = controls.follow(view, Selection())
    assert selection.cursor == 1
    assert controls.chosen_move(view, selection) == legal[0]
    used = controls.jump(view, selection, 1)
    assert controls.chosen_move(view, used) == contract(actions_pb2.CONTRACT_SPADES)
    assert controls.toggle_mark(view, used) == used  # no cards to mark in this row


def test_out_of_turn_nothing_is_preselected_but_enter_still_sends_a_move_of_the_turn() -> None:
    view = tfe_view(seats=[1])
    selection = controls.follow(view, Selection())
    assert selection == Selection(turn=5)
    assert not controls.is_mine(view)
    assert controls.chosen_move(view, selection) == play("7C")


def test_a_khozor_lead_plays_the_marked_cards_else_the_cursor_card() -> None:
    view = khozor_view(legal=[cards_action("lead", ["7C"])])
    selection = controls.follow(view, Selection())
    assert controls.chosen_move(view, selection) == cards_action("lead", ["7C"])
    pair = controls.toggle_mark(view, controls.jump(view, selection, 3))
    pair = controls.toggle_mark(view, controls.jump(view, pair, 4))
    pair = controls.toggle_mark(view, controls.jump(view, pair, 1))
    assert controls.chosen_move(view, pair) == cards_action("lead", ["7C", "QS", "QH"])


def test_a_hint_of_several_cards_is_shown_marked() -> None:
    view = khozor_view(
        kind="defend", legal=[cards_action("beat", ["QS", "QH"]), controls.pick_up()]
    )
    hint = cards_action("beat", ["QH", "QS"])
    selection = controls.select(view, hint)
    assert selection == Selection(cursor=3, marked=frozenset({2, 3}), turn=9, move=hint)
    assert controls.chosen_move(view, selection) == hint
    unmarked = controls.toggle_mark(view, selection)
    assert controls.chosen_move(view, unmarked) == cards_action("beat", ["QS"])


def test_a_defence_that_can_only_pick_up_picks_up_on_enter() -> None:
    """No selection of cards shows a pick-up: the untouched selection carries it."""
    view = khozor_view(kind="defend", legal=[controls.pick_up()])
    selection = controls.follow(view, Selection())
    assert selection.marked == set()
    assert controls.chosen_move(view, selection) == controls.pick_up()
    assert controls.chosen_move(view, controls.move_cursor(view, selection, 1)) == (
        cards_action("beat", ["7D"])
    )


def test_signals_are_no_turn_moves() -> None:
    signal = controls.toggle_signal(actions_pb2.SIGNAL_THREE_SET)
    view = khozor_view(legal=[signal, cards_action("lead", ["7D"])])
    assert controls.turn_moves(view) == [cards_action("lead", ["7D"])]
    assert controls.follow(view, Selection()).cursor == 1
    assert controls.action_cards(signal) == []
