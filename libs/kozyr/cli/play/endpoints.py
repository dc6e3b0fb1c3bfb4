"""Where the services are and who the player is, for `kozyr play`.

One function decides it, so that it can later read the dev stack's own file instead:
an option wins, then the `KOZYR_*` variable the services themselves use for the same
target, then the ports `make run` listens on. The token is `--token` / KOZYR_TOKEN, or
a development token minted for `--player` (KOZYR_PLAYER, else the login name) with the
key of the stack on this machine (`kozyr.cli.tokens.mint`).
"""

from __future__ import annotations

import getpass
import os
from dataclasses import dataclass

from kozyr.cli.problems import CliError
from kozyr.runtime.auth import Role

DEFAULT_TARGETS = {
    "table": "127.0.0.1:50051",
    "matchmaking": "127.0.0.1:50052",
    "bots": "127.0.0.1:50053",
    "clock": "127.0.0.1:50054",
}
"""`make run`'s ports (kozyr.devstack.SERVICES)."""

NO_CLOCK = "none"
"""`--clock-target none`: send no heartbeats (no clock service to tell)."""

TOKEN_HOURS = 12.0


@dataclass(frozen=True)
class Endpoints:
    """The services' `host:port`s and the player's bearer token."""

    table: str
    matchmaking: str
    bots: str
    clock: str | None
    """None: no heartbeats (the player shows offline to the others)."""
    token: str


def find_endpoints(
    *,
    table: str | None = None,
    matchmaking: str | None = None,
    bots: str | None = None,
    clock: str | None = None,
    token: str | None = None,
    player: str | None = None,
) -> Endpoints:
    """The options given, else KOZYR_<SERVICE>_TARGET, else `make run`'s ports; the token
    given, else KOZYR_TOKEN, else one minted for the player. A clock target "none"
    sends no heartbeats."""
    given = {"table": table, "matchmaking": matchmaking, "bots": bots, "clock": clock}
    targets = {
        name: value or os.environ.get(f"KOZYR_{name.upper()}_TARGET") or DEFAULT_TARGETS[name]
        for name, value in given.items()
    }
    return Endpoints(
        table=targets["table"],
        matchmaking=targets["matchmaking"],
        bots=targets["bots"],
        clock=None if targets["clock"] == NO_CLOCK else targets["clock"],
        token=token or os.environ.get("KOZYR_TOKEN") or _dev_token(player),
    )


def _dev_token(player: str | None) -> str:
    from kozyr.cli.tokens import mint

    subject = player or os.environ.get("KOZYR_PLAYER") or getpass.getuser()
    if not subject.strip():
        raise CliError("who plays? give --player NAME or --token TOKEN")
    return mint(subject, Role.PLAYER, TOKEN_HOURS)
