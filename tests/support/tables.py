"""Helpers shared by the table service tests: tokens, scripted players, legal moves.

Scripted clients play only from what their own view shows: the view lists the seat's
legal actions, so a client needs no rules of its own (DESIGN.md §6).
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass

import grpc

from kozyr.api.table.v1 import actions_pb2, views_pb2
from kozyr.api.table.v1 import table_service_pb2_grpc as pb_grpc
from kozyr.client import TableClient
from kozyr.client.channel import channel_options
from kozyr.runtime.auth import Role, mint_token

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
    returns the final view."""
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
