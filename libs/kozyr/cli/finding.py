"""`kozyr tables`: find tables by player, creation date and state (the admin's ListTables).

It calls the table service at KOZYR_TABLE_TARGET (in a checkout running `make run`, its
table service: `kozyr.stackfile`; else 127.0.0.1:50051) with an admin token signed like
`kozyr token` signs (KOZYR_JWT_KEY, else the dev key),
walks the pages up to `--limit` tables, and prints one line per table (or JSON).
"""

from __future__ import annotations

import asyncio
import os
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

import grpc

from kozyr.api.table.v1 import table_service_pb2 as pb
from kozyr.cli.problems import CliError
from kozyr.cli.tokens import mint
from kozyr.client import TableClient
from kozyr.games.catalogue import UnknownGame, game_by_code
from kozyr.runtime.auth import Role
from kozyr.runtime.errors import error_details

DEFAULT_TARGET = "127.0.0.1:50051"
STATES = {"open": pb.TABLE_STATE_OPEN, "finished": pb.TABLE_STATE_FINISHED}
CALLER = "kozyr-cli"
"""The subject of the admin token the command calls with (the service logs it)."""


@dataclass(frozen=True, slots=True)
class Search:
    """What `kozyr tables` was asked for."""

    player: str = ""
    since: datetime | None = None
    state: str | None = None
    limit: int = 50


def table_target() -> str:
    """The table service: KOZYR_TABLE_TARGET (set from the stack file when unset), else
    the default port."""
    return os.environ.get("KOZYR_TABLE_TARGET") or DEFAULT_TARGET


def parse_since(text: str) -> datetime:
    """A date (2026-11-30) or an ISO 8601 moment; without a time zone: UTC."""
    try:
        moment = datetime.fromisoformat(text.strip())
    except ValueError:
        raise CliError(
            f"--since {text!r} is not a date: write 2026-11-30 or 2026-11-30T18:00:00+01:00"
        ) from None
    return moment if moment.tzinfo is not None else moment.replace(tzinfo=UTC)


def find(search: Search, target: str | None = None) -> list[dict[str, Any]]:
    """The tables found, newest first, as plain data; CliError when the call fails."""
    where = target or table_target()
    admin = mint(CALLER, Role.ADMIN, ttl_hours=0.25)
    return asyncio.run(_find(search, where, admin))


async def _find(search: Search, target: str, token: str) -> list[dict[str, Any]]:
    found: list[dict[str, Any]] = []
    page_token = ""
    async with TableClient(target, token, retry=False) as client:
        while len(found) < search.limit:
            try:
                page = await client.list_tables(
                    player_id=search.player,
                    created_since=search.since,
                    state=STATES[search.state] if search.state else pb.TABLE_STATE_UNSPECIFIED,
                    page_size=min(search.limit - len(found), 500),
                    page_token=page_token,
                )
            except grpc.aio.AioRpcError as err:
                raise CliError(_refusal(err, target)) from None
            found += [_plain(t) for t in page.tables]
            page_token = page.next_page_token
            if not page_token:
                break
    return found


def to_text(tables: list[dict[str, Any]]) -> str:
    """One line per table: id, game, created, state, seats ("-" a computer seat)."""
    if not tables:
        return "no table found\n"
    rows = [("TABLE", "GAME", "CREATED (UTC)", "STATE", "SEATS")]
    for t in tables:
        seats = ", ".join(p or "-" for p in t["seats"])
        created = t["created_at"][:19].replace("T", " ")
        rows.append((t["table_id"], t["game"], created, t["state"], seats))
    return "".join(f"{a:<36}  {b:<16}  {c:<19}  {d:<8}  {e}\n" for a, b, c, d, e in rows)


def _plain(table: pb.ListedTable) -> dict[str, Any]:
    finished = table.state == pb.TABLE_STATE_FINISHED
    return {
        "table_id": table.table_id,
        "game": _game_name(table.game),
        "created_at": table.created_at.ToDatetime(tzinfo=UTC).isoformat(),
        "state": "finished" if finished else "open",
        "finished_at": table.finished_at.ToDatetime(tzinfo=UTC).isoformat()
        if table.HasField("finished_at")
        else None,
        "seats": list(table.seat_player_ids),
    }


def _game_name(code: int) -> str:
    """The game's id (the number for a game this client lacks)."""
    try:
        return game_by_code(code).id
    except UnknownGame:
        return str(code)


def _refusal(err: grpc.aio.AioRpcError, target: str) -> str:
    if err.code() in (grpc.StatusCode.UNAVAILABLE, grpc.StatusCode.DEADLINE_EXCEEDED):
        return (
            f"cannot reach the table service at {target} ({err.code().name}): is `make run`"
            " going? Otherwise set KOZYR_TABLE_TARGET"
        )
    details = error_details(err)
    return f"the table service refused ({details.reason or err.code().name}): {err.details()}"
