"""The services work under their NATS rights: table, clock, bots and matchmaking as
processes, each connected as its own user to a nats-server configured by
`kozyr.bus.rights` (no anonymous access). Computer seats play a whole game (bots: the
public events), turns nobody plays expire (clock: timers, public events), a player's
presence reaches his table's views (clock: presence and seat buckets), a ticket filled
with computers is matched to a table (matchmaking, on its own database: its relay
publishing its lobby, the public events) — so the rights are enough; the refusals
(the table's user on matchmaking's subjects too) are tests/integration/bus/test_bus_rights.py's."""

from __future__ import annotations

import asyncio
import secrets
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from kozyr.api.common.v1 import games_pb2, seats_pb2
from kozyr.api.matchmaking.v1 import matchmaking_service_pb2 as mm_pb
from kozyr.api.table.v1 import table_service_pb2 as pb
from kozyr.bus.rights import ADMIN_USER, SERVICES, nats_url_for, server_config
from kozyr.client import ClockClient, MatchmakingClient, TableClient
from kozyr.eventstore import migrate
from kozyr.infra import EmbeddedNats, free_port
from kozyr.runtime.auth import Role
from tests.e2e.bots.conftest import BotsServiceProcess
from tests.e2e.clock.conftest import ClockServiceProcess
from tests.e2e.conftest import TableServiceProcess, service_env
from tests.e2e.matchmaking.conftest import MatchmakingProcess
from tests.support.tables import token

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(300)]

TURN_SECONDS = 10
OFFSET = TURN_SECONDS - 0.3
"""The clock runs ahead: a turn nobody plays expires 0.3 s after it starts."""


@dataclass
class Stack:
    table: TableServiceProcess
    clock: ClockServiceProcess
    bots: BotsServiceProcess
    matchmaking: MatchmakingProcess


@pytest.fixture
def user_urls(tmp_path: Path) -> Iterator[dict[str, str]]:
    passwords = {name: secrets.token_urlsafe(12) for name in (*SERVICES, ADMIN_USER)}
    config = tmp_path / "nats.conf"
    config.write_text(server_config(passwords, "kozyr", anonymous_admin=False))
    server = EmbeddedNats(tmp_path / "nats", config=config)
    server.start()
    try:
        yield {name: nats_url_for(server.url, name, pw) for name, pw in passwords.items()}
    finally:
        server.stop()
    refused = [
        line for line in (tmp_path / "nats.log").read_text().splitlines() if "Violation" in line
    ]
    assert not refused, "a service lacks a right:\n" + "\n".join(refused[:5])


@pytest.fixture
async def stack(
    database_url: str, matchmaking_database_url: str, user_urls: dict[str, str], tmp_path: Path
) -> AsyncIterator[Stack]:
    await migrate(database_url)
    databases = {"matchmaking": matchmaking_database_url}  # its own; the others the table's

    def env(service: str, port: int) -> dict[str, str]:
        database = databases.get(service, database_url)
        values = service_env(database, user_urls[service], "kozyr", port)
        values["KOZYR_LOG_LEVEL"] = "INFO"
        return values

    table_port = free_port()
    table = TableServiceProcess(env("table", table_port), table_port, tmp_path / "table.log")
    await table.start()
    processes: list[TableServiceProcess] = [table]
    try:
        clock_port = free_port()
        clock_env = env("clock", clock_port) | {
            "KOZYR_TABLE_TARGET": table.target,
            "KOZYR_CLOCK_TIME_OFFSET_SECONDS": str(OFFSET),
            "KOZYR_CLOCK_OFFLINE_AFTER_SECONDS": "1",
        }
        clock = ClockServiceProcess(clock_env, clock_port, tmp_path / "clock.log")
        await clock.start()
        processes.append(clock)
        bots_port = free_port()
        bots_env = env("bots", bots_port) | {
            "KOZYR_TABLE_TARGET": table.target,
            "KOZYR_BOTS_THINK_SECONDS": "0",
        }
        bots = BotsServiceProcess(bots_env, bots_port, tmp_path / "bots.log")
        await bots.start()
        processes.append(bots)
        mm_port = free_port()
        mm_env = env("matchmaking", mm_port) | {"KOZYR_TABLE_TARGET": table.target}
        matchmaking = MatchmakingProcess(mm_env, mm_port, tmp_path / "matchmaking.log")
        await matchmaking.start()
        processes.append(matchmaking)
        yield Stack(table, clock, bots, matchmaking)
    finally:
        for process in reversed(processes):
            process.stop()
    for process in processes:
        assert "ermissions violation" not in process.log_path.read_text(), process.log_tail()


async def test_every_service_works_under_its_own_nats_user(stack: Stack) -> None:
    easy = pb.SeatAssignment(computer=True, level=seats_pb2.COMPUTER_LEVEL_EASY)
    async with TableClient(stack.table.target, token("mm", Role.SERVICE)) as mm:
        computers = await mm.create_table(games_pb2.GAME_THREE_FIVE_EIGHT, [easy] * 3)
        people = await mm.create_table(
            games_pb2.GAME_THREE_FIVE_EIGHT,
            ["ana", "bo", "cy"],
            three_five_eight=pb.ThreeFiveEightOptions(turn_seconds=TURN_SECONDS),
        )
        first_turn = (await mm.get_table(people.table_id)).turn.number

        async with ClockClient(stack.clock.target, token("ana")) as ana:
            assert (await ana.heartbeat()).came_online
        watch = mm.watch(people.table_id, seat=0)
        async with asyncio.timeout(60):
            async for view in watch:
                offline = view.seats[0].presence == seats_pb2.PRESENCE_OFFLINE
                if offline and view.turn.number >= first_turn + 3:
                    break  # ana went offline, and three turns expired
        await watch.aclose()

        async with MatchmakingClient(stack.matchmaking.target, token("dora")) as dora:
            ticket = await dora.enter_queue(
                games_pb2.GAME_THREE_FIVE_EIGHT, fill_with_computers=True
            )
            async with asyncio.timeout(60):
                async for state in dora.watch_ticket(ticket.ticket_id):
                    if state.state == mm_pb.TICKET_STATE_MATCHED:
                        break
        dora_view = await mm.get_table(state.table_id)
        assert sorted(s.player_id for s in dora_view.seats) == ["", "", "dora"]

        async with asyncio.timeout(200):
            async for view in mm.watch(computers.table_id):
                if view.finished:
                    break
    bot_moves = stack.bots.log_path.read_text().count('"bot moved"')
    assert bot_moves > 100, "the computers played the game"
