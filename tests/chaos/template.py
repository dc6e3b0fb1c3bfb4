"""The chaos suite's starting point: tables near their end, in a PostgreSQL and a NATS store.

A 3-5-8 game is ~950 moves and a Khözör match ~500-800: six of them played whole over
gRPC take minutes on a small machine, and each scenario must stay within 60 s. So the
session plays most of every game once, in-process through `TableApp` (the service's own
write path, the same events and metadata), lets the outbox relay publish all of it,
and stops both servers. Each scenario copies the two data directories and starts its
own servers on them: its tables are a few deals (or a round or two) from the end, its
JetStream already holds what its events table holds, and the live part of every game
is played by scripted clients through the faults.
"""

from __future__ import annotations

import asyncio
import random
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from kozyr.bus.relay import OutboxRelay
from kozyr.bus.streams import TABLE_CATEGORIES
from kozyr.eventstore import PostgresEventStore, migrate
from kozyr.games import khozor_teams, three_five_eight
from kozyr.games.khozor_teams.messages import ToggleSignal
from kozyr.games.khozor_teams.model import Team
from kozyr.infra import EmbeddedNats, EmbeddedPostgres
from kozyr.runtime.auth import Role
from kozyr.table.app import Actor, TableApp
from kozyr.table.domain.model import Table
from tests.e2e.published import wait_until_relayed

SUBJECT_ROOT = "chaos"
PREFILL_REQUEST = "prefill-"
"""Request ids of the template's moves (the scenarios' own requests are checked apart)."""

THREE_FIVE_EIGHT_TABLES = 3
KHOZOR_TABLES = 3
DEALS_LEFT = 6
"""A 3-5-8 table is left with its last 6 of 18 deals (~300 moves) to play live."""
KHOZOR_WINS_PLAYED = 3
"""A Khözör match is left once a team has 3 of the 5 round wins (two rounds or more)."""


@dataclass(frozen=True)
class TableSetup:
    """One table of the template: who sits where."""

    table_id: str
    game_id: str
    players: tuple[str, ...]


@dataclass(frozen=True)
class Template:
    """Stopped servers' data directories, to be copied by every scenario."""

    postgres_dir: Path
    nats_dir: Path
    tables: tuple[TableSetup, ...]


def _three_five_eight_near_end(table: Table) -> bool:
    deals_scored: int = len(table.state.records)
    return deals_scored >= 18 - DEALS_LEFT


def _khozor_near_end(table: Table) -> bool:
    wins: int = max(table.state.wins(team) for team in Team)
    return wins >= KHOZOR_WINS_PLAYED


NEAR_END: dict[str, Callable[[Table], bool]] = {
    three_five_eight.GAME_ID: _three_five_eight_near_end,
    khozor_teams.GAME_ID: _khozor_near_end,
}


async def build_template(root: Path) -> Template:
    """Play every table to near its end and relay it all; leave both servers stopped."""
    postgres = EmbeddedPostgres(root / "postgres", durable=False)
    nats_server = EmbeddedNats(root / "nats")
    await asyncio.to_thread(postgres.start)
    try:
        await asyncio.to_thread(nats_server.start)
        try:
            tables = await _prefill(postgres.url())
            await _relay_everything(postgres.url(), nats_server.url)
        finally:
            nats_server.stop()
    finally:
        postgres.stop()
    return Template(postgres.data_dir, nats_server.data_dir, tables)


async def _prefill(database_url: str) -> tuple[TableSetup, ...]:
    await migrate(database_url)
    store = PostgresEventStore(database_url, max_pool_size=4)
    await store.open()
    try:
        app = TableApp(store)
        games = [three_five_eight.GAME_ID] * THREE_FIVE_EIGHT_TABLES
        games += [khozor_teams.GAME_ID] * KHOZOR_TABLES
        return tuple(
            await asyncio.gather(*(_play_near_end(app, g, n) for n, g in enumerate(games)))
        )
    finally:
        await store.close()


async def _play_near_end(app: TableApp, game_id: str, number: int) -> TableSetup:
    """Create table `number` and play random legal moves until it is near its end."""
    seats = 3 if game_id == three_five_eight.GAME_ID else 8
    players = tuple(f"c{number}-s{seat}" for seat in range(seats))
    created = await app.create(
        request_id=f"{PREFILL_REQUEST}create-{number}",
        game_id=game_id,
        options={},
        seats=players,
        actor=Actor("matchmaker", Role.SERVICE.value),
    )
    table, rng = created.table, random.Random(number)
    while not NEAR_END[game_id](table):
        seat = table.game.turn(table.state).seats[0]
        command = rng.choice(_moves(table, seat))
        outcome = await app.submit(
            table.table_id,
            command,
            request_id=f"{PREFILL_REQUEST}{table.version}",
            actor=Actor(players[seat], Role.PLAYER.value),
            expected_version=table.version,
        )
        table = outcome.table
    return TableSetup(table.table_id, game_id, players)


def _moves(table: Table, seat: int) -> list[Any]:
    """The seat's legal commands, signals left out (they never end a turn)."""
    legal = table.game.legal_commands(table.state, seat)
    return [c for c in legal if not isinstance(c, ToggleSignal)] or legal


async def _relay_everything(database_url: str, nats_url: str) -> None:
    """The service's relay, in-process, until the outbox is empty: JetStream = events."""
    async with PostgresEventStore(database_url) as store:
        relay = OutboxRelay(store, nats_url, categories=TABLE_CATEGORIES, subject_root=SUBJECT_ROOT)
        task = asyncio.create_task(relay.run())
        try:
            await wait_until_relayed(database_url)
        finally:
            relay.stop()
            await task
