"""Helpers shared by the table service tests: tokens, scripted players, legal moves.

Scripted clients play only from what their own view shows: the view lists the seat's
legal actions, so a client needs no rules of its own (DESIGN.md §6).
"""

from __future__ import annotations

import random
from dataclasses import dataclass

from kozyr.api.table.v1 import actions_pb2, views_pb2
from kozyr.runtime.auth import Role, mint_token

JWT_KEY = "kozyr-test-secret-kozyr-test-secret-0123456789"


def token(subject: str, role: Role = Role.PLAYER) -> str:
    return mint_token(subject, role, key=JWT_KEY)


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
