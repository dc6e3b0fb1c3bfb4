"""Opening a table and playing it to the end with one scripted client per seat."""

from __future__ import annotations

import random
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass

from kozyr.api.common.v1 import games_pb2
from kozyr.api.table.v1 import table_service_pb2 as pb
from kozyr.api.table.v1 import views_pb2
from kozyr.client import TableClient
from kozyr.runtime.auth import Role
from tests.e2e.conftest import Deployment
from tests.e2e.leaks import KHOZOR_TEAMS, THREE_FIVE_EIGHT, LoggedEvent, logged_events
from tests.e2e.players import Gate, ScriptedClient, SeatLog, chooser, play_table
from tests.support.tables import Seat, token

SEATS = {games_pb2.GAME_THREE_FIVE_EIGHT: 3, games_pb2.GAME_KHOZOR_TEAMS: 8}
GAME_IDS = {
    games_pb2.GAME_THREE_FIVE_EIGHT: THREE_FIVE_EIGHT,
    games_pb2.GAME_KHOZOR_TEAMS: KHOZOR_TEAMS,
}
SIGNAL_RATE = 0.15
"""How often a Khözör player taps one of its signals when it may (exercises signals)."""


def admin_client(target: str) -> TableClient:
    return TableClient(target, token("mod", Role.ADMIN))


@dataclass
class PlayedGame:
    """A table played to its end, and everything its clients received."""

    deployment: Deployment
    game: str
    table_id: str
    players: list[str]
    seats: list[SeatLog]
    spectator: SeatLog
    admin_history: list[LoggedEvent]
    admin_final: views_pb2.TableView
    seconds: float

    @property
    def clients(self) -> list[SeatLog]:
        return [*self.seats, self.spectator]


async def open_table(
    target: str, game: games_pb2.Game.ValueType, table: pb.TableOptions | None = None
) -> tuple[str, list[str]]:
    """A new table of `game` with freshly named players; (table id, players by seat);
    `table`: the table's own options."""
    tag = uuid.uuid4().hex[:8]
    players = [f"p{seat}-{tag}" for seat in range(SEATS[game])]
    async with TableClient(target, token("matchmaker", Role.SERVICE)) as matchmaker:
        created = await matchmaker.create_table(game, players, table=table)
    return created.table_id, players


def scripted_clients(
    deployment: Deployment,
    game: games_pb2.Game.ValueType,
    table_id: str,
    players: list[str],
    seed: int,
    gate: Gate | None = None,
) -> tuple[list[ScriptedClient], ScriptedClient]:
    """One client per seat (its own token and seeded choices) and one spectator."""
    target: Callable[[], str] = lambda: deployment.target  # noqa: E731 — the port may change
    signal_rate = SIGNAL_RATE if game == games_pb2.GAME_KHOZOR_TEAMS else 0.0
    seats = []
    for seat, player in enumerate(players):
        rng = random.Random(seed * 100 + seat)
        choose = chooser(Seat(seat, player, rng), rng, signal_rate)
        seats.append(ScriptedClient(target, table_id, player, seat, choose, gate))
    spectator = ScriptedClient(target, table_id, f"spectator-{table_id[:8]}", None, None, gate)
    return seats, spectator


async def collect(
    deployment: Deployment,
    game: games_pb2.Game.ValueType,
    table_id: str,
    players: list[str],
    seats: list[ScriptedClient],
    spectator: ScriptedClient,
    seconds: float,
) -> PlayedGame:
    """After the game: the admin's full history and final view with the clients' logs."""
    async with admin_client(deployment.target) as admin:
        history = logged_events(await admin.history(table_id))
        final = await admin.get_table(table_id)
    return PlayedGame(
        deployment,
        GAME_IDS[game],
        table_id,
        players,
        [c.log for c in seats],
        spectator.log,
        history,
        final,
        seconds,
    )


async def play_game(
    deployment: Deployment, game: games_pb2.Game.ValueType, seed: int, limit_seconds: float
) -> PlayedGame:
    """Open a table and play it to the end, every seat a concurrent scripted client."""
    table_id, players = await open_table(deployment.target, game)
    seats, spectator = scripted_clients(deployment, game, table_id, players, seed)
    started = time.perf_counter()
    await play_table([*seats, spectator], limit_seconds)
    seconds = time.perf_counter() - started
    return await collect(deployment, game, table_id, players, seats, spectator, seconds)
