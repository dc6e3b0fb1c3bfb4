"""ListTables over real gRPC and PostgreSQL: an admin finds tables by player, creation
date and state, newest first, page by page; bad filters are refused in three languages;
players and services are refused; and a lost directory is rebuilt from the log."""

from __future__ import annotations

import asyncio
import json
import os
import sys
from asyncio.subprocess import PIPE
from datetime import timedelta

import asyncpg
import grpc
import pytest

from kozyr.api.common.v1 import games_pb2
from kozyr.api.table.v1 import table_service_pb2 as pb
from kozyr.client import TableClient
from kozyr.eventstore.urls import asyncpg_dsn
from kozyr.runtime.auth import Role
from kozyr.runtime.errors import error_details
from tests.integration.table.conftest import RunningTableService, running_table_service
from tests.support.higher_card import CODE
from tests.support.tables import JWT_KEY, token

pytestmark = pytest.mark.integration

OPEN, FINISHED = pb.TABLE_STATE_OPEN, pb.TABLE_STATE_FINISHED


async def _finish(client: TableClient, table_id: str) -> int:
    """Play a higher-card table to its end with the clock's default moves; the number of
    the turn whose expiry ended it."""
    view = await client.get_table(table_id)
    while not view.finished:
        last = view.turn.number
        await client.expire_turn(table_id, last)
        view = await client.get_table(table_id)
    return last


async def _tables(client: TableClient) -> dict[str, str]:
    """Three tables: ana's finished one, then chiara's, then ana's open one (by name)."""
    finished = await client.create_table(CODE, ["ana", "bogdan"])  # type: ignore[arg-type]
    await _finish(client, finished.table_id)
    other = await client.create_table(CODE, ["bogdan", "chiara"])  # type: ignore[arg-type]
    open_ = await client.create_table(games_pb2.GAME_THREE_FIVE_EIGHT, ["ana", None, None])
    return {"finished": finished.table_id, "other": other.table_id, "open": open_.table_id}


def _ids(response: pb.ListTablesResponse) -> list[str]:
    return [t.table_id for t in response.tables]


async def _refusal(call: object, code: grpc.StatusCode) -> tuple[str, dict[str, str]]:
    with pytest.raises(grpc.aio.AioRpcError) as caught:
        await call  # type: ignore[misc]
    details = error_details(caught.value)
    assert details.code is code, caught.value.details()
    return str(details.reason), dict(details.messages)


async def test_an_admin_finds_tables_by_player_date_and_state(
    table_service: RunningTableService,
) -> None:
    target = table_service.target
    async with (
        TableClient(target, token("mm", Role.SERVICE)) as service,
        TableClient(target, token("moderator", Role.ADMIN)) as admin,
    ):
        made = await _tables(service)
        everything = await admin.list_tables()
        assert _ids(everything) == [made["open"], made["other"], made["finished"]]
        assert not everything.next_page_token

        anas = await admin.list_tables(player_id="ana")
        assert _ids(anas) == [made["open"], made["finished"]]
        open_, finished = anas.tables
        assert (open_.game, open_.state) == (games_pb2.GAME_THREE_FIVE_EIGHT, OPEN)
        assert list(open_.seat_player_ids) == ["ana", "", ""]
        assert not open_.HasField("finished_at")
        assert (finished.game, finished.state) == (CODE, FINISHED)
        assert list(finished.seat_player_ids) == ["ana", "bogdan"]
        assert finished.finished_at.ToDatetime() >= finished.created_at.ToDatetime()

        assert _ids(await admin.list_tables(player_id="ana", state=OPEN)) == [made["open"]]
        assert _ids(await admin.list_tables(state=FINISHED)) == [made["finished"]]
        assert _ids(await admin.list_tables(player_id="nobody")) == []

        after_first = finished.created_at.ToDatetime() + timedelta(microseconds=1)
        since = await admin.list_tables(created_since=after_first.replace(tzinfo=None))
        assert _ids(since) == [made["open"], made["other"]]


async def test_pages_list_every_table_once_newest_first(
    table_service: RunningTableService,
) -> None:
    target = table_service.target
    async with (
        TableClient(target, token("mm", Role.SERVICE)) as service,
        TableClient(target, token("moderator", Role.ADMIN)) as admin,
    ):
        made = [
            (await service.create_table(CODE, ["ana", f"p{i}"])).table_id  # type: ignore[arg-type]
            for i in range(5)
        ]
        seen: list[str] = []
        token_ = ""
        while True:
            page = await admin.list_tables(player_id="ana", page_size=2, page_token=token_)
            assert len(page.tables) <= 2
            seen += _ids(page)
            token_ = page.next_page_token
            if not token_:
                break
            # a table opened meanwhile is newer than every page: it moves nothing
            await service.create_table(CODE, ["ana", "late"])  # type: ignore[arg-type]
        assert seen == made[::-1]

        other_filters = admin.list_tables(player_id="bogdan", page_size=2, page_token=token_ or "x")
        reason, _ = await _refusal(other_filters, grpc.StatusCode.INVALID_ARGUMENT)
        assert reason == "INVALID_PAGE_TOKEN"
        first = await admin.list_tables(player_id="ana", page_size=1)
        reason, _ = await _refusal(
            admin.list_tables(player_id="bogdan", page_token=first.next_page_token),
            grpc.StatusCode.INVALID_ARGUMENT,
        )
        assert reason == "INVALID_PAGE_TOKEN", "a token is bound to its filters"
        # ... the state among them (every filter, every pair: tests/unit/table/test_listing.py)
        open_page = await admin.list_tables(player_id="ana", state=OPEN, page_size=1)
        for state in (FINISHED, pb.TABLE_STATE_UNSPECIFIED):
            reason, messages = await _refusal(
                admin.list_tables(
                    player_id="ana", state=state, page_token=open_page.next_page_token
                ),
                grpc.StatusCode.INVALID_ARGUMENT,
            )
            assert reason == "INVALID_PAGE_TOKEN", state
            assert set(messages) == {"en", "ro", "it"}
        more = await admin.list_tables(
            player_id="ana", state=OPEN, page_size=1, page_token=open_page.next_page_token
        )
        assert _ids(more) == _ids(await admin.list_tables(player_id="ana", page_size=2))[1:]


async def test_bad_filters_are_refused_in_three_languages(
    table_service: RunningTableService,
) -> None:
    async with TableClient(
        table_service.target, token("moderator", Role.ADMIN), language="it"
    ) as admin:
        stub, metadata = admin.stub, admin.metadata
        bad = {
            "INVALID_PAGE_SIZE": [
                pb.ListTablesRequest(page_size=-1),
                pb.ListTablesRequest(page_size=501),
            ],
            "INVALID_TABLE_STATE": [pb.ListTablesRequest(state=7)],  # type: ignore[arg-type]
            "INVALID_PLAYER_ID": [pb.ListTablesRequest(player_id="  ")],
            "INVALID_PAGE_TOKEN": [pb.ListTablesRequest(page_token="not-a-token")],
        }
        ancient = pb.ListTablesRequest()
        ancient.created_since.FromSeconds(0)  # 1970: seconds taken for milliseconds?
        odd = pb.ListTablesRequest()
        odd.created_since.nanos = -5
        beyond = pb.ListTablesRequest()
        beyond.created_since.seconds = 10**13
        bad["INVALID_CREATED_SINCE"] = [ancient, odd, beyond]
        for reason, requests in bad.items():
            for request in requests:
                got, messages = await _refusal(
                    stub.ListTables(request, metadata=metadata), grpc.StatusCode.INVALID_ARGUMENT
                )
                assert got == reason, request
                assert set(messages) == {"en", "ro", "it"}
                assert next(iter(messages)) == "it"


async def test_players_and_services_may_not_list_tables(
    table_service: RunningTableService,
) -> None:
    for caller in (token("ana"), token("mm", Role.SERVICE)):
        async with TableClient(table_service.target, caller) as client:
            await _refusal(client.list_tables(), grpc.StatusCode.PERMISSION_DENIED)


async def test_a_note_lost_after_its_append_is_written_by_the_retry(
    table_service: RunningTableService, database_url: str
) -> None:
    """A process that dies between an append and its directory row leaves the row
    missing (or unfinished): the client's retry of the same request writes it."""
    target = table_service.target
    async with (
        TableClient(target, token("mm", Role.SERVICE)) as service,
        TableClient(target, token("moderator", Role.ADMIN)) as admin,
    ):
        created = await service.create_table(CODE, ["ana", "bogdan"], request_id="r-1")  # type: ignore[arg-type]
        last_turn = await _finish(service, created.table_id)
        await _directory_sql(database_url, "DELETE FROM table_directory")
        assert _ids(await admin.list_tables()) == []
        again = await service.create_table(CODE, ["ana", "bogdan"], request_id="r-1")  # type: ignore[arg-type]
        assert again.table_id == created.table_id
        [row] = (await admin.list_tables()).tables
        assert row.state == FINISHED, "the retry writes the row as the log has it now"
        await _directory_sql(database_url, "UPDATE table_directory SET finished_at = NULL")
        assert [t.state for t in (await admin.list_tables()).tables] == [OPEN]
        expired = await service.expire_turn(created.table_id, last_turn)
        assert not expired.applied
        [row] = (await admin.list_tables()).tables
        assert row.state == FINISHED, "the retried expiry that ended the game"


async def _directory_sql(database_url: str, statement: str) -> None:
    connection = await asyncpg.connect(asyncpg_dsn(database_url))
    try:
        await connection.execute(statement)
    finally:
        await connection.close()


async def test_a_lost_directory_is_rebuilt_from_the_log(
    database_url: str, nats_url: str, subject_root: str
) -> None:
    async with running_table_service(database_url, nats_url, subject_root) as first:
        service = TableClient(first.target, token("mm", Role.SERVICE))
        admin = TableClient(first.target, token("moderator", Role.ADMIN))
        async with service, admin:
            await _tables(service)
            before = await admin.list_tables()
    await _directory_sql(database_url, "DROP TABLE table_directory")
    async with running_table_service(database_url, nats_url, subject_root) as second:
        admin = TableClient(second.target, token("moderator", Role.ADMIN))
        async with admin:
            await admin.list_tables()  # the first use finds no directory: rebuilt from the log
            assert await second.service.directory.rebuilt() == len(before.tables)
            assert await admin.list_tables() == before


async def _kozyr(
    *args: str, target: str, env: dict[str, str] | None = None
) -> tuple[int, str, str]:
    """`kozyr ARGS` in its own process, configured by the environment alone."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("KOZYR_")} | (env or {})
    env |= {"KOZYR_TABLE_TARGET": target, "KOZYR_JWT_KEY": JWT_KEY}
    process = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "kozyr.cli.main", *args, env=env, stdout=PIPE, stderr=PIPE
    )
    out, err = await process.communicate()
    assert process.returncode is not None
    return process.returncode, out.decode(), err.decode()


async def test_kozyr_tables_prints_what_list_tables_finds(
    table_service: RunningTableService,
) -> None:
    target = table_service.target
    async with TableClient(target, token("mm", Role.SERVICE)) as service:
        made = await _tables(service)
    code, out, err = await _kozyr("tables", "--player", "ana", target=target)
    assert code == 0, err
    header, *lines = out.splitlines()
    assert header.split()[:3] == ["TABLE", "GAME", "CREATED"]
    assert [line.split()[0] for line in lines] == [made["open"], made["finished"]]
    assert lines[0].split()[1:2] == ["three_five_eight"]
    assert lines[0].endswith("open      ana, -, -")

    code, out, err = await _kozyr("tables", "--state", "finished", "--json", target=target)
    assert code == 0, err
    [finished] = json.loads(out)
    assert finished["table_id"] == made["finished"]
    assert (finished["state"], finished["seats"]) == ("finished", ["ana", "bogdan"])
    assert finished["finished_at"] >= finished["created_at"]

    code, out, err = await _kozyr("tables", "--since", "yesterday", target=target)
    assert code == 2
    assert "--since 'yesterday' is not a date" in err
    code, out, err = await _kozyr("tables", "--state", "closed", target=target)
    assert (code, err.strip()) == (2, "kozyr: --state must be open or finished, not 'closed'")


async def test_kozyr_migrate_makes_the_directory_from_the_log(
    table_service: RunningTableService, database_url: str
) -> None:
    async with TableClient(table_service.target, token("mm", Role.SERVICE)) as service:
        await _tables(service)
    await _directory_sql(database_url, "DROP TABLE table_directory")
    env = {"KOZYR_DATABASE_URL": database_url}
    code, out, err = await _kozyr("migrate", target=table_service.target, env=env)
    assert code == 0, err
    assert out.strip().endswith("the table directory was made from the log (3 tables).")
    code, out, err = await _kozyr("migrate", target=table_service.target, env=env)
    assert code == 0, err
    assert out.strip().endswith("and so is its table directory.")
    async with TableClient(table_service.target, token("moderator", Role.ADMIN)) as admin:
        assert len((await admin.list_tables()).tables) == 3
