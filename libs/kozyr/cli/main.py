"""`kozyr`: the command line of moderators and developers (docs/moderation.md).

    kozyr replay TABLE_ID [--seat N | --spectator [--open-hand]] [--json]   the game deal
                                                by deal, from the log
    kozyr replay TABLE_ID [--seat N | ...] --html FILE [--lang en|ro|it]   the dispute viewer
    kozyr verify TABLE_ID [--json]              hash chain, seeds, deals, rules, result
    kozyr tables [--player ID] [--since DATE] [--state open|finished] [--json]
    kozyr token SUBJECT [--role R] [--ttl-hours H]
    kozyr migrate                               event store schema of KOZYR_DATABASE_URL
    kozyr health [--target HOST:PORT]           gRPC health of a service (= python -m kozyr.health)
    kozyr republish [--after N]                 publish the event log to JetStream again
    kozyr play [--game GAME] [--private]        play in the terminal (docs/play.md)

Run inside the checkout while `make run` goes, every command finds the stack by itself
(`kozyr.stackfile`); KOZYR_* variables that are set always win.

Each command imports what it needs when it runs: `kozyr --help`, `kozyr token` and
`kozyr health` load neither SQLAlchemy nor the play TUI nor any service
(tests/unit/test_cli_imports.py).

Exit codes: 0 all holds, 1 a verification failed, 2 usage or configuration problems
(see `kozyr.cli.problems`). Errors are one clear sentence on stderr, never a traceback.
"""

from __future__ import annotations

import asyncio
import functools
import json
from collections.abc import Callable
from pathlib import Path
from typing import Annotated, Any, TypeVar

import typer

from kozyr.cli.play.command import play as play_command
from kozyr.cli.problems import CliError, ExitCode
from kozyr.runtime.roles import Role
from kozyr.texts import Lang

app = typer.Typer(
    name="kozyr",
    help="Moderator and developer tools: replay and verify tables, mint dev tokens, migrate,"
    " check a service's health.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)

_F = TypeVar("_F", bound=Callable[..., None])

TableId = Annotated[str, typer.Argument(help="The table's id (UUID), or its stream table-<id>.")]
AsJson = Annotated[bool, typer.Option("--json", help="Print JSON instead of text.")]


@app.callback()
def _configure() -> None:
    """Every unset KOZYR_* variable comes from the running `make run` of this checkout
    (`.kozyr/stack.json`, found from the current folder up); the environment wins."""
    from kozyr.stackfile import defaults_from_stack

    defaults_from_stack()


def reports_errors(command: _F) -> _F:
    """Print a CliError as one line on stderr and exit with its code."""

    @functools.wraps(command)
    def run(*args: Any, **kwargs: Any) -> None:
        try:
            command(*args, **kwargs)
        except CliError as err:
            typer.echo(f"kozyr: {err.message}", err=True)
            raise typer.Exit(int(err.code)) from None

    return run  # type: ignore[return-value]


def _print_json(value: Any) -> None:
    typer.echo(json.dumps(value, indent=2, ensure_ascii=False))


@app.command()
@reports_errors
def replay(
    table_id: TableId,
    seat: Annotated[
        int | None,
        typer.Option("--seat", min=0, help="Only what this seat saw (default: everything)."),
    ] = None,
    spectator: Annotated[
        bool, typer.Option("--spectator", help="Only what a spectator saw.")
    ] = False,
    open_hand: Annotated[
        bool,
        typer.Option(
            "--open-hand",
            help="What an open-hand spectator may see now: cut at the table's delay, "
            "every hand there (docs/open-hand.md).",
        ),
    ] = False,
    as_json: AsJson = False,
    html: Annotated[
        Path | None,
        typer.Option(
            "--html",
            dir_okay=False,
            help="Write the dispute viewer, one self-contained HTML page, to this file.",
        ),
    ] = None,
    lang: Annotated[
        Lang, typer.Option("--lang", help="The language of the HTML page's labels.")
    ] = Lang.EN,
) -> None:
    """Replay a table from the event log, deal by deal (reads KOZYR_DATABASE_URL)."""
    from kozyr.cli.tables import database_url, parse_table_id, read_table, write_page
    from kozyr.table import audit

    if as_json and html is not None:
        raise CliError("--json and --html are two different outputs: choose one")
    if seat is not None and (spectator or open_hand):
        raise CliError("--seat and --spectator are two different viewers: choose one")
    spectator = spectator or open_hand
    wanted = parse_table_id(table_id)
    table = asyncio.run(read_table(database_url(), wanted))
    try:
        if open_hand:
            result = audit.open_hand_replay(table.events)
        else:
            result = audit.replay(table.events, seat, spectator=spectator)
        page = None
        if html is not None:
            page = audit.dispute_page(
                table.events, table.chain, seat, lang, spectator=spectator, open_hand=open_hand
            )
    except audit.NoSuchViewer as err:
        raise CliError(str(err)) from None
    except audit.AuditError as err:
        hint = "run `kozyr verify` to see what is wrong"
        raise CliError(f"{err} ({hint})", ExitCode.FAILED) from None
    if not table.chain.ok:
        typer.echo(
            f"kozyr: warning: the hash chain breaks at event #{table.chain.first_bad_position}"
            " (run `kozyr verify`)",
            err=True,
        )
    if html is not None and page is not None:
        typer.echo(write_page(html, page))
    elif as_json:
        _print_json(result.to_dict())
    else:
        typer.echo(result.to_text(), nl=False)


@app.command()
@reports_errors
def verify(table_id: TableId, as_json: AsJson = False) -> None:
    """Verify a table: hash chain, seeds and commitments, deals, every move, the result.

    Exit code 0 when everything holds, 1 naming the first bad event otherwise.
    """
    from kozyr.cli.tables import database_url, parse_table_id, read_table
    from kozyr.table import audit

    wanted = parse_table_id(table_id)
    table = asyncio.run(read_table(database_url(), wanted))
    report = audit.verify(table.events, table.chain)
    if as_json:
        _print_json(report.to_dict())
    else:
        typer.echo(report.to_text(), nl=False)
    if not report.ok:
        raise typer.Exit(int(ExitCode.FAILED))


@app.command()
@reports_errors
def tables(
    player: Annotated[
        str, typer.Option("--player", help="Only tables where this player has a seat.")
    ] = "",
    since: Annotated[
        str | None,
        typer.Option("--since", help="Only tables created from this date or moment (UTC)."),
    ] = None,
    state: Annotated[
        str | None, typer.Option("--state", help="open or finished (default: both).")
    ] = None,
    limit: Annotated[int, typer.Option("--limit", min=1, help="At most this many.")] = 50,
    as_json: AsJson = False,
) -> None:
    """Find tables, newest first (the table service's ListTables, with an admin token)."""
    from kozyr.cli.finding import STATES, Search, find, parse_since, to_text

    if state is not None and state not in STATES:
        raise CliError(f"--state must be open or finished, not {state!r}")
    search = Search(player, parse_since(since) if since else None, state, limit)
    found = find(search)
    if as_json:
        _print_json(found)
    else:
        typer.echo(to_text(found), nl=False)


@app.command()
@reports_errors
def token(
    subject: Annotated[str, typer.Argument(help="Player id or service name (the `sub`).")],
    role: Annotated[Role, typer.Option("--role", help="The token's role.")] = Role.PLAYER,
    ttl_hours: Annotated[
        float, typer.Option("--ttl-hours", min=0.01, help="Lifetime in hours.")
    ] = 1.0,
) -> None:
    """Mint a development token (KOZYR_JWT_KEY, else the dev secret of `make run`)."""
    from kozyr.cli.tokens import mint

    typer.echo(mint(subject, role, ttl_hours))


@app.command()
@reports_errors
def migrate() -> None:
    """Apply the event store migrations to KOZYR_DATABASE_URL (safe to repeat)."""
    from kozyr.cli.schema import apply_migrations

    typer.echo(apply_migrations())


@app.command()
@reports_errors
def republish(
    after: Annotated[
        int, typer.Option("--after", min=0, help="Only events after this global position.")
    ] = 0,
) -> None:
    """Publish the event log to JetStream again: a lost stream rebuilt (KOZYR_DATABASE_URL,
    KOZYR_NATS_URL with an admin's rights). Safe to repeat."""
    from kozyr.cli.bus import republish_log

    done = asyncio.run(republish_log(after))
    typer.echo(f"republished {done.events} events and {done.messages} public messages")


@app.command()
@reports_errors
def health(
    target: Annotated[
        str | None,
        typer.Option("--target", help="host:port (default: 127.0.0.1:$KOZYR_GRPC_PORT)."),
    ] = None,
    service: Annotated[
        str, typer.Option("--service", help="The gRPC service to ask about (default: all).")
    ] = "",
    timeout: Annotated[
        float, typer.Option("--timeout", min=0.1, help="Seconds to wait for the answer.")
    ] = 3.0,
) -> None:
    """Exit 0 if the service answers SERVING to a gRPC health check, else 1.

    The containers run the same check without the CLI: `python -m kozyr.health`.
    """
    from kozyr import health as probe

    try:
        typer.echo(probe.check(target or probe.default_target(), service, timeout))
    except probe.ProbeError as err:
        raise CliError(err.message, ExitCode(err.code)) from None


app.command(name="play")(reports_errors(play_command))


if __name__ == "__main__":
    app()
