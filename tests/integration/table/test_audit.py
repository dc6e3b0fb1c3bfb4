"""Moderator tooling against real PostgreSQL: whole games played through TableApp on the
PostgreSQL event store, replayed and verified by `kozyr.table.audit` and by the `kozyr`
command line (a subprocess), then tampered with in plain SQL as a rogue superuser would
(docs/eventstore.md, "Tamper evidence") — with and without re-hashing the chain."""

from __future__ import annotations

import asyncio
import dataclasses
import json
import os
import random
import subprocess
import sys
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import asyncpg
import pytest

from kozyr.eventstore import PostgresEventStore, RecordedEvent, VerifyReport, migrate
from kozyr.eventstore.urls import asyncpg_dsn
from kozyr.games import khozor_teams, three_five_eight
from kozyr.table import audit
from kozyr.table.adapters.repository import stream_of
from kozyr.table.app import Actor, TableApp
from kozyr.table.domain.model import Table
from tests.unit.table.test_audit_games import PLAYERS, cards_named, play_to_the_end, rehashed
from tests.unit.table.test_audit_redaction import played_cards, private_358_cards

pytestmark = pytest.mark.integration

ROOT = Path(__file__).resolve().parents[3]


@dataclass
class Database:
    """A migrated test database with a superuser connection for sabotage."""

    url: str
    store: PostgresEventStore
    admin: asyncpg.Connection

    async def stream(self, table_id: str) -> tuple[list[RecordedEvent], VerifyReport]:
        stream = stream_of(table_id)
        return await self.store.read(stream), await self.store.verify(stream)

    async def report(self, table_id: str) -> audit.AuditReport:
        return audit.verify(*await self.stream(table_id))

    async def rewrite(
        self,
        table_id: str,
        position: int,
        change: Callable[[dict[str, Any]], None],
        *,
        rehash: bool,
    ) -> None:
        """Change one event's data in place (triggers off), optionally re-hashing the chain."""
        events, _ = await self.stream(table_id)
        change(events[position - 1].data)
        await self.write(events if not rehash else rehashed(events)[0], position)

    async def write(self, events: list[RecordedEvent], position: int) -> None:
        """Store `events[position-1]`'s data and every hash from there on, and the head."""
        stream = events[0].stream
        await self.admin.execute("SET session_replication_role = replica")
        try:
            await self.admin.execute(
                "UPDATE events SET data = $1::jsonb WHERE stream = $2 AND position = $3",
                json.dumps(events[position - 1].data),
                stream,
                position,
            )
            for e in events[position - 1 :]:
                await self.admin.execute(
                    "UPDATE events SET hash = $1 WHERE stream = $2 AND position = $3",
                    bytes.fromhex(e.hash),
                    stream,
                    e.position,
                )
            await self.admin.execute(
                "UPDATE streams SET head_hash = $1 WHERE id = $2",
                bytes.fromhex(events[-1].hash),
                stream,
            )
        finally:
            await self.admin.execute("RESET session_replication_role")


@pytest.fixture
async def db(database_url: str) -> AsyncIterator[Database]:
    await migrate(database_url)
    store = PostgresEventStore(database_url)
    admin = await asyncpg.connect(asyncpg_dsn(database_url))
    yield Database(database_url, store, admin)
    await admin.close()
    await store.close()


async def play(db: Database, game_id: str, seed: int) -> Table:
    """A whole game through TableApp on PostgreSQL (the service's own fresh seeds)."""
    return await play_to_the_end(TableApp(db.store), game_id, random.Random(seed))


async def kozyr(database_url: str, *args: str) -> subprocess.CompletedProcess[str]:
    """Run the `kozyr` command line as a separate process, on `database_url` only."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("KOZYR_")}
    env["KOZYR_DATABASE_URL"] = database_url
    command = [sys.executable, "-m", "kozyr.cli.main", *args]
    return await asyncio.to_thread(
        subprocess.run, command, env=env, cwd=ROOT, capture_output=True, text=True, timeout=120
    )


def assert_clean_failure(run: subprocess.CompletedProcess[str], code: int, *words: str) -> None:
    assert run.returncode == code, (run.stdout, run.stderr)
    assert "Traceback" not in run.stderr
    for word in words:
        assert word in run.stderr + run.stdout, (word, run.stdout, run.stderr)


# ------------------------------------------------------------------ 3-5-8


async def test_a_whole_358_game_verifies_and_replays(db: Database) -> None:
    table = await play(db, three_five_eight.GAME_ID, seed=358)
    events, chain = await db.stream(table.table_id)

    report = audit.verify(events, chain)
    assert report.ok, report.problem
    assert report.deals_rederived == three_five_eight.DEALS
    everything = audit.replay(events)
    assert everything.result == table.game.result(table.state)

    run = await kozyr(db.url, "verify", table.table_id)
    assert run.returncode == 0, run.stderr
    assert "OK: every check holds." in run.stdout

    run = await kozyr(db.url, "replay", f"table-{table.table_id}", "--json")
    assert run.returncode == 0, run.stderr
    assert json.loads(run.stdout)["result"] == table.game.result(table.state)

    run = await kozyr(db.url, "replay", table.table_id, "--seat", "2", "--json")
    assert run.returncode == 0, run.stderr
    seen = json.loads(run.stdout)
    assert seen == json.loads(json.dumps(audit.replay(events, 2).to_dict()))
    for full, mine in zip(everything.deals, seen["deals"], strict=True):
        assert cards_named(mine) <= private_358_cards(full, 2) | played_cards(full)
        assert not cards_named(mine["start"]) - set(full.start.data["hands"][2])

    run = await kozyr(db.url, "replay", table.table_id, "--spectator", "--json")
    assert run.returncode == 0, run.stderr
    watched = json.loads(run.stdout)
    assert watched == json.loads(json.dumps(audit.replay(events, spectator=True).to_dict()))
    assert watched["spectator"] is True
    for full, public in zip(everything.deals, watched["deals"], strict=True):
        assert cards_named(public) <= played_cards(full)

    run = await kozyr(db.url, "replay", table.table_id)
    assert run.returncode == 0, run.stderr
    assert "Deal 18 (" in run.stdout
    assert "Result: totals" in run.stdout


async def test_tampering_with_a_358_table_names_the_event(db: Database) -> None:
    table = await play(db, three_five_eight.GAME_ID, seed=853)
    events, _ = await db.stream(table.table_id)
    honest = [e.data for e in events], [e.hash for e in events]
    scored = [e for e in events if e.type == "DealScored"][3]
    dealt = [e for e in events if e.type == "CardsDealt"][1]
    ended = events[-1]
    assert ended.type == "GameEnded"

    async def restore(position: int) -> None:
        """Put the honest data and hashes back, and check the table verifies again."""
        fresh, _ = await db.stream(table.table_id)
        originals = [
            dataclasses.replace(e, data=data, hash=digest)
            for e, data, digest in zip(fresh, *honest, strict=True)
        ]
        await db.write(originals, position)
        assert (await db.report(table.table_id)).ok

    # (a) a row altered in SQL: the hash chain breaks at that very event.
    await db.rewrite(
        table.table_id, scored.position, lambda d: d.update(totals=[9, 9, 9]), rehash=False
    )
    run = await kozyr(db.url, "verify", table.table_id)
    assert_clean_failure(run, 1, f"FAILED at event #{scored.position} (DealScored)", "HASH_CHAIN")
    run = await kozyr(db.url, "replay", table.table_id, "--json")
    assert run.returncode == 0, run.stderr
    assert f"the hash chain breaks at event #{scored.position}" in run.stderr
    assert json.loads(run.stdout)["version"] == len(events)
    await restore(scored.position)

    # (b) a seed altered and the chain re-hashed: the commitment no longer holds.
    def new_seed(data: dict[str, Any]) -> None:
        data["seed"] = "00" * 32

    await db.rewrite(table.table_id, dealt.position, new_seed, rehash=True)
    report = await db.report(table.table_id)
    assert report.chain.ok
    assert report.problem is not None
    assert (report.problem.position, report.problem.check) == (
        dealt.position,
        audit.Check.SEED_COMMITMENT,
    )
    run = await kozyr(db.url, "verify", table.table_id, "--json")
    assert run.returncode == 1
    assert json.loads(run.stdout)["problem"]["position"] == dealt.position
    await restore(dealt.position)

    # (c) the recorded result altered: re-hashed, the replay disagrees; not, the chain.
    def other_places(data: dict[str, Any]) -> None:
        data["places"] = [3, 3, 3] if data["places"] != [3, 3, 3] else [1, 1, 1]

    await db.rewrite(table.table_id, ended.position, other_places, rehash=True)
    report = await db.report(table.table_id)
    assert report.problem is not None
    assert (report.problem.position, report.problem.check) == (
        ended.position,
        audit.Check.RESULT_MISMATCH,
    )
    await restore(ended.position)
    await db.rewrite(table.table_id, ended.position, other_places, rehash=False)
    report = await db.report(table.table_id)
    assert report.problem is not None
    assert (report.problem.position, report.problem.check) == (
        ended.position,
        audit.Check.HASH_CHAIN,
    )


# ------------------------------------------------------------------ Khözör


async def test_a_whole_khozor_match_verifies_replays_and_catches_a_forged_winner(
    db: Database,
) -> None:
    table = await play(db, khozor_teams.GAME_ID, seed=8)
    events, chain = await db.stream(table.table_id)
    assert audit.verify(events, chain).ok
    everything = audit.replay(events)
    assert everything.result == table.game.result(table.state)
    assert everything.seats == PLAYERS[khozor_teams.GAME_ID]
    assert cards_named(everything.to_dict())
    for seat in (1, 4):
        assert cards_named(audit.replay(events, seat).to_dict()) == set()

    run = await kozyr(db.url, "verify", table.table_id)
    assert run.returncode == 0, run.stderr

    final = events[-1]
    assert final.type == "MatchWon"
    loser = "A" if final.data["team"] == "B" else "B"
    await db.rewrite(table.table_id, final.position, lambda d: d.update(team=loser), rehash=True)
    run = await kozyr(db.url, "verify", table.table_id)
    assert_clean_failure(run, 1, f"FAILED at event #{final.position} (MatchWon)", "RESULT_MISMATCH")


# ------------------------------------------------------------------ the command line


async def test_the_command_line_explains_what_it_cannot_do(database_url: str) -> None:
    table_id = "5cf7ccbf-4359-5af3-99f0-274947348cd8"
    run = await kozyr(database_url, "verify", table_id)
    assert_clean_failure(run, 2, "kozyr migrate")

    run = await kozyr(database_url, "migrate")
    assert run.returncode == 0, run.stderr
    assert "up to date" in run.stdout

    run = await kozyr(database_url, "verify", table_id)
    assert_clean_failure(run, 2, f"there is no table {table_id}")

    store = PostgresEventStore(database_url)
    try:
        created = await TableApp(store).create(
            request_id="r",
            game_id=three_five_eight.GAME_ID,
            options={},
            seats=PLAYERS[three_five_eight.GAME_ID],
            actor=Actor("moderator-tests", "service"),
        )
    finally:
        await store.close()
    run = await kozyr(database_url, "replay", created.table.table_id, "--seat", "3")
    assert_clean_failure(run, 2, "no seat 3")
    run = await kozyr(database_url, "replay", created.table.table_id, "--open-hand")
    assert_clean_failure(run, 2, "no open-hand spectating")
    run = await kozyr(database_url, "replay", table_id, "--seat", "1", "--spectator")
    assert_clean_failure(run, 2, "two different viewers")

    missing = database_url.rsplit("/", 1)[0] + "/no_such_database"
    run = await kozyr(missing, "verify", table_id)
    assert_clean_failure(run, 2, "no_such_database", "refused", "does not exist")
    run = await kozyr(missing, "migrate")
    assert_clean_failure(run, 2, "cannot migrate", "no_such_database")
    run = await kozyr("postgresql://nobody@127.0.0.1:1/nothing", "verify", table_id)
    assert_clean_failure(run, 2, "cannot use the database at", "nobody@127.0.0.1:1/nothing")
