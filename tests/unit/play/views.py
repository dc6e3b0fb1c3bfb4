"""Views for the pure tests of `kozyr play`, built as the table service sends them."""

from __future__ import annotations

from collections.abc import Sequence

from kozyr.api.common.v1 import cards_pb2, games_pb2, seats_pb2
from kozyr.api.table.v1 import actions_pb2, views_pb2

PERSON = seats_pb2.SEAT_CONTROL_PERSON
COMPUTER = seats_pb2.SEAT_CONTROL_COMPUTER


def play(card: str) -> actions_pb2.Action:
    return actions_pb2.Action(play_card=actions_pb2.PlayCard(card=cards_pb2.Card(code=card)))


def cards_action(kind: str, cards: Sequence[str]) -> actions_pb2.Action:
    action = actions_pb2.Action()
    getattr(action, kind).cards.extend(cards_pb2.Card(code=c) for c in cards)
    return action


def contract(value: actions_pb2.Contract.ValueType) -> actions_pb2.Action:
    return actions_pb2.Action(choose_contract=actions_pb2.ChooseContract(contract=value))


def tfe_view(
    *,
    kind: str = "play",
    seats: Sequence[int] = (0,),
    hand: Sequence[str] = ("7C", "QS", "AS", "10H"),
    legal: Sequence[actions_pb2.Action] = (),
    turn: int = 5,
    seat: int = 0,
) -> views_pb2.TableView:
    """A 3-5-8 view of `seat`: ana at 0, computers at 1 and 2."""
    view = views_pb2.TableView(
        table_id="t-1",
        game=games_pb2.GAME_THREE_FIVE_EIGHT,
        version=40,
        seat=seat,
        seats=[
            views_pb2.SeatInfo(seat=0, player_id="ana", control=PERSON, online=True),
            views_pb2.SeatInfo(
                seat=1, control=COMPUTER, online=True, level=seats_pb2.COMPUTER_LEVEL_EASY
            ),
            views_pb2.SeatInfo(seat=2, player_id="bob", control=PERSON, online=False),
        ],
        turn=views_pb2.TurnInfo(number=turn, kind=kind, seats=list(seats)),
        legal_actions=list(legal),
    )
    game = view.three_five_eight
    game.phase = {"exchange_give": "exchange"}.get(kind, kind)
    game.deal_number, game.deals_total = 3, 18
    game.hand.extend(hand)
    game.hand_counts.extend([len(hand), 16, 16])
    game.totals.extend([4, -1, -3])
    game.roles.extend(["dealer", "declarer", "third"])
    game.targets.extend([3, 8, 5])
    game.tricks.extend([1, 2, 0])
    for used in (["S"], ["H", "NT"], []):
        game.contracts_used.add().contracts.extend(used)
    return view


def khozor_view(
    *,
    kind: str = "lead",
    seats: Sequence[int] = (0,),
    hand: Sequence[str] = ("7C", "7D", "QS", "QH", "JK-red"),
    legal: Sequence[actions_pb2.Action] = (),
) -> views_pb2.TableView:
    """A Khözör view of seat 0 (team A): ana at 0, computers elsewhere."""
    view = views_pb2.TableView(
        table_id="t-2",
        game=games_pb2.GAME_KHOZOR_TEAMS,
        version=12,
        seat=0,
        seats=[
            views_pb2.SeatInfo(
                seat=s,
                player_id="ana" if s == 0 else "",
                control=PERSON if s == 0 else COMPUTER,
                online=True,
            )
            for s in range(8)
        ],
        turn=views_pb2.TurnInfo(number=9, kind=kind, seats=list(seats)),
        legal_actions=list(legal),
    )
    game = view.khozor_teams
    game.viewer_seat, game.viewer_team = 0, "A"
    game.phase, game.round, game.trump = "play", 2, "H"
    game.wins["A"], game.wins["B"] = 1, 0
    game.opening_team, game.opener = "A", 0
    game.hand.extend(hand)
    game.hand_counts.extend([len(hand), 5, 5, 5, 5, 5, 5, 5])
    game.reserve_count, game.sleeping_count = 20, 4
    for s in (0, 2, 4, 6):
        game.signals.add(seat=s, three_set=s == 2)
    return view
