"""Which public `TurnStarted` the bots' player acts on: a computer's turn of the game,
never the table's `client_seed` turn (the first deal waiting for the players' client
seeds), where no seat has a move — not even a covered one."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from kozyr.api.common.v1 import seats_pb2
from kozyr.api.table.v1 import events_pb2
from kozyr.bots.levels import Level
from kozyr.bots.player import Player
from kozyr.games.decider import CLIENT_SEED

COMPUTER = seats_pb2.SEAT_CONTROL_COMPUTER


@dataclass
class Message:
    """What the player reads of a NATS message."""

    data: bytes
    subject: str = "kozyr.public.table.t-1.TurnStarted"
    headers: dict[str, str] | None = None


class RecordingPlayer(Player):
    """The real player, its move recorded instead of sent: this test is about which
    turns it takes, not how it plays them."""

    def __init__(self) -> None:
        super().__init__(tables=None, level=Level.EASY, think_seconds=0)  # type: ignore[arg-type]
        self.played: list[tuple[str, int, int]] = []

    async def play(self, table_id: str, turn: int, seat: int) -> bool:
        self.played.append((table_id, turn, seat))
        return True


def turn_started(kind: str, controls: dict[int, seats_pb2.SeatControl.ValueType]) -> Any:
    seats = [events_pb2.PublicSeat(seat=s, control=c) for s, c in controls.items()]
    started = events_pb2.TurnStarted(number=2, kind=kind, seats=seats)
    return Message(
        events_pb2.PublicTableEvent(table_id="t-1", turn_started=started).SerializeToString()
    )


async def test_a_computers_turn_is_played_and_a_client_seed_turn_never() -> None:
    player = RecordingPlayer()
    await player.public_event(turn_started("contract", {1: COMPUTER}))
    assert player.played == [("t-1", 2, 1)]
    covered = {0: seats_pb2.SEAT_CONTROL_PERSON, 1: COMPUTER}
    await player.public_event(turn_started(CLIENT_SEED, covered))
    assert player.played == [("t-1", 2, 1)], "no move for the first deal's seed window"
