"""`kozyr play`: its options, checked, and the app started (Textual is imported only
when the command runs, so the other commands start as fast as before)."""

from __future__ import annotations

import os
from typing import Annotated

import typer

from kozyr.cli.problems import CliError
from kozyr.games.catalogue import game_words
from kozyr.texts import Lang, parse_lang

Target = Annotated[
    str | None, typer.Option(help="host:port (default: KOZYR_*_TARGET, else make run's).")
]


def play(
    game: Annotated[str, typer.Option("--game", help=f"{game_words()}.")] = "358",
    computers: Annotated[
        str,
        typer.Option(
            "--computers",
            help="easy, normal, hard or auto (suits your rating): the computers of a private"
            " table; none: the queue seats people only (else it fills free seats after a wait).",
        ),
    ] = "auto",
    private: Annotated[
        bool,
        typer.Option("--private", help="A table of your own now, computers in the free seats."),
    ] = False,
    party: Annotated[
        bool,
        typer.Option("--party", help="Host a party: friends join with its code, Enter starts."),
    ] = False,
    join: Annotated[
        str | None, typer.Option("--join", help="Join a friend's party by its code.")
    ] = None,
    table: Annotated[
        str | None, typer.Option("--table", help="Go back to a table you are seated at.")
    ] = None,
    lang: Annotated[
        Lang | None, typer.Option("--lang", help="en, ro or it (default: from $LANG).")
    ] = None,
    player: Annotated[
        str | None,
        typer.Option("--player", help="Play as this player id (a dev token is minted)."),
    ] = None,
    token: Annotated[
        str | None, typer.Option("--token", help="Your bearer token (default: KOZYR_TOKEN).")
    ] = None,
    client_seed: Annotated[
        str | None,
        typer.Option(
            "--client-seed",
            help="Your own part of every deal's seed, 1 to 64 ASCII characters "
            "(default: a random one per deal; docs/fair-deal.md §9).",
        ),
    ] = None,
    table_target: Target = None,
    matchmaking_target: Target = None,
    bots_target: Target = None,
    clock_target: Target = None,
) -> None:
    """Play 3-5-8 or Khözör in the terminal, against computers or friends (docs/play.md)."""
    from kozyr.cli.play.app import PlayApp
    from kozyr.cli.play.endpoints import find_endpoints
    from kozyr.cli.play.lobby import make_plan
    from kozyr.table.domain.seeding import is_client_seed

    try:
        plan = make_plan(
            game, table_id=table, join=join, party=party, private=private, computers=computers
        )
    except ValueError as err:
        raise CliError(str(err)) from None
    endpoints = find_endpoints(
        table=table_target,
        matchmaking=matchmaking_target,
        bots=bots_target,
        clock=clock_target,
        token=token,
        player=player,
    )
    if client_seed is not None and not is_client_seed(client_seed):
        raise CliError("--client-seed: 1 to 64 printable ASCII characters")
    language = lang or parse_lang(os.environ.get("LANG"))
    PlayApp(endpoints, plan, language, client_seed=client_seed).run()
