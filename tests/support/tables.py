"""Helpers shared by the table service tests: tokens, scripted players, legal moves.

Scripted clients play only from what their own view shows: the view lists the seat's
legal actions, so a client needs no rules of its own (DESIGN.md §6).
"""

from __future__ import annotations

import functools
import random
from collections.abc import AsyncIterator, Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

import grpc

from kozyr.api.table.v1 import actions_pb2, views_pb2
from kozyr.api.table.v1 import table_service_pb2_grpc as pb_grpc
from kozyr.client import TableClient
from kozyr.client.channel import channel_options
from kozyr.eventstore import InMemoryEventStore
from kozyr.games import khozor_teams
from kozyr.runtime.auth import Role, mint_token
from kozyr.table.app import Actor, TableApp
from kozyr.table.domain.model import Table

JWT_KEY = "kozyr-test-secret-kozyr-test-secret-0123456789"


def token(subject: str, role: Role = Role.PLAYER) -> str:
    return mint_token(subject, role, key=JWT_KEY)


OWN_CONNECTION = ("grpc.use_local_subchannel_pool", 1)
"""A channel option: this channel opens its own TCP connection. Without it gRPC shares
one connection between all the channels of a process that have the same options."""


class PlayerClient(TableClient):
    """A TableClient on a connection of its own, like a player on his own device.

    Many clients of one test or bench process otherwise share a single HTTP/2
    connection, which a service with several workers on one port (SO_REUSEPORT spreads
    connections, not calls) would see as one client. Plain channel, same retry policy.
    """

    def __init__(self, target: str, token: str | None) -> None:
        super().__init__(target, token)
        self._shared = self._channel
        options = [*channel_options(services=(self.SERVICE,)), OWN_CONNECTION]
        self._channel = grpc.aio.insecure_channel(target, options=options)
        self.stub = pb_grpc.TableServiceStub(self._channel)

    async def connect(self) -> None:
        """Open this client's connection now (gRPC would open it on the first call)."""
        await self._channel.channel_ready()

    async def close(self) -> None:
        await self._shared.close()
        await super().close()


@dataclass
class Seat:
    """A scripted player: picks one of the legal actions its view offers."""

    seat: int
    player_id: str
    rng: random.Random

    def choose(self, view: views_pb2.TableView) -> actions_pb2.Action | None:
        if self.seat not in view.turn.seats or not view.legal_actions:
            return None
        playable = [a for a in view.legal_actions if a.WhichOneof("action") != "toggle_signal"]
        return self.rng.choice(playable or list(view.legal_actions))


async def play_to_the_end(
    target: str, table_id: str, players: Sequence[str], moves: int = 1_000
) -> views_pb2.TableView:
    """Each seat's player plays the first move his view lists, turn after turn, until
    the game is over (at most `moves`: meant for a short game, tests/support/higher_card);
    returns the final view. No refusal is expected: a presence or control change the
    clock records meanwhile does not make a pinned move stale (`Table.is_fresh`)."""
    clients = {player: TableClient(target, token(player)) for player in set(players)}
    try:
        for _ in range(moves):
            view = await clients[players[0]].get_table(table_id)
            if view.finished:
                return view
            mover = clients[players[view.turn.seats[0]]]
            mine = await mover.get_table(table_id)
            await mover.submit(table_id, mine.legal_actions[0], expected_version=mine.version)
    finally:
        for client in clients.values():
            await client.close()
    raise AssertionError(f"table {table_id} not over after {moves} moves")


KHOZOR_PLAYERS = tuple(f"p{i}" for i in range(8))


def signal_taps(table: Table, seat: int) -> list[khozor_teams.ToggleSignal]:
    """The signal taps `seat` may make now (a set its hand holds, or a clear)."""
    return [
        c
        for c in table.game.legal_commands(table.state, seat)
        if isinstance(c, khozor_teams.ToggleSignal)
    ]


async def khozor_tables(
    clock: Callable[[], datetime] = lambda: datetime.now(UTC), **app_options: Any
) -> AsyncIterator[tuple[TableApp, Table]]:
    """Fresh Khözör tables, each in an in-memory store of its own, dealt from seeds 0, 1,
    2, ... (the same deals every run): a test takes the first that deals what it needs.

    Which seat holds a set depends on the deal, so a test about a seat's signals looks
    for a deal that gives that seat one rather than taking whichever seat a random deal
    gives (which would test seat 0 only now and then). `clock` is the store's and the
    application's (the log's recorded times and the tap limit's "now").
    """
    seed = 0
    while True:
        app = TableApp(
            InMemoryEventStore(clock=clock),
            clock=clock,
            new_seed=functools.partial(random.Random(seed).randbytes, 32),
            **app_options,
        )
        created = await app.create(
            request_id=f"khozor-{seed}",
            game_id=khozor_teams.GAME_ID,
            options={},
            seats=KHOZOR_PLAYERS,
            actor=Actor("matchmaking", "service"),
        )
        yield app, created.table
        seed += 1


def moves_back(moves: Sequence[int], delay: int, live: int) -> int:
    """The log version an open-hand view may show at `live` (docs/open-hand.md), the
    tests' own statement of it: right before the move `delay` moves back among the log
    positions `moves`, 1 (nothing dealt) before the table has had that many."""
    made = [m for m in moves if m <= live]
    return made[-delay] - 1 if len(made) >= delay else 1
