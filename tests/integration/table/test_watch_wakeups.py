"""Watchers' wake-ups without NATS, and what idle watchers cost (issue 8, defects 2 and 3).

A service started while NATS is down must serve at once (play needs only PostgreSQL),
wake its watchers through the watch poller, and publish the whole backlog once NATS
comes. Idle watchers must cost one batched version read per poll, never a replay.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from kozyr.api.common.v1 import games_pb2
from kozyr.client import TableClient
from kozyr.eventstore import PostgresEventStore, RecordedEvent, migrate
from kozyr.infra import EmbeddedNats, free_port
from kozyr.runtime.auth import Role
from kozyr.table.app import Actor, Outcome, TableApp
from tests.e2e.published import published_events, wait_until_relayed
from tests.integration.table.conftest import RunningTableService, running_table_service
from tests.support.logs import every_log
from tests.support.tables import token

pytestmark = pytest.mark.integration

PLAYERS = ["ana", "bogdan", "chiara"]


def running(
    database_url: str, nats_url: str, subject_root: str
) -> AbstractAsyncContextManager[RunningTableService]:
    """A table service that polls its watched tables every 0.2 s."""
    return running_table_service(database_url, nats_url, subject_root, watch_poll_seconds=0.2)


async def open_clients(
    stack: contextlib.AsyncExitStack, target: str
) -> tuple[TableClient, dict[str, TableClient]]:
    """The matchmaker's client and each player's, closed with `stack`."""
    mm = await stack.enter_async_context(TableClient(target, token("mm", Role.SERVICE)))
    players = {p: await stack.enter_async_context(TableClient(target, token(p))) for p in PLAYERS}
    return mm, players


def counting_reads(store: PostgresEventStore) -> list[str]:
    """The streams `store` reads from now on (its `read` wrapped), in order."""
    reads: list[str] = []
    real_read = store.read

    async def counted_read(stream: str, *args: Any, **kwargs: Any) -> list[RecordedEvent]:
        reads.append(stream)
        events: list[RecordedEvent] = await real_read(stream, *args, **kwargs)
        return events

    store.read = counted_read  # type: ignore[method-assign]
    return reads


async def first_move(client: TableClient, players: dict[str, TableClient], table_id: str) -> int:
    """Play the first legal move of whoever must act; returns the new version."""
    view = await client.get_table(table_id)
    mover = players[PLAYERS[view.turn.seats[0]]]
    mine = await mover.get_table(table_id)
    reply = await mover.submit(table_id, mine.legal_actions[0], expected_version=mine.version)
    return reply.view.version


async def test_the_service_serves_without_nats_and_publishes_once_it_comes(
    database_url: str, subject_root: str, tmp_path: Path
) -> None:
    nats_port = free_port()
    with every_log() as logs:
        async with (
            running(database_url, f"nats://127.0.0.1:{nats_port}", subject_root) as service,
            contextlib.AsyncExitStack() as stack,
        ):
            mm, players = await open_clients(stack, service.target)
            table_id = (await mm.create_table(games_pb2.GAME_THREE_FIVE_EIGHT, PLAYERS)).table_id
            version = await first_move(mm, players, table_id)
            await asyncio.sleep(2.5)  # a few NATS reconnect attempts while it is down
            server = EmbeddedNats(tmp_path / "nats", port=nats_port)
            server.start()
            try:
                await wait_until_relayed(database_url)
                published = await published_events(server.url, subject_root, table_id)
                during = list(logs)  # before NATS stops again at the end
            finally:
                server.stop()
    assert [p.event.position for p in published] == list(range(1, version + 1))
    outage = [e for e in during if "unreachable" in e["event"]]
    assert outage, "the outage is reported"
    assert len(outage) <= 2, f"one warning per component and state change, got {outage}"
    assert all(e["log_level"] == "warning" for e in outage)
    assert any("reachable again" in e["event"] for e in during), "and so is the recovery"


async def test_a_watcher_hears_another_replicas_move_through_the_poll(
    database_url: str, subject_root: str
) -> None:
    """No NATS at all: the move of another process reaches the watcher by the poll alone."""
    async with running(database_url, f"nats://127.0.0.1:{free_port()}", subject_root) as service:
        other_store = await PostgresEventStore(database_url).open()
        other = TableApp(other_store)
        try:
            async with TableClient(service.target, token("mm", Role.SERVICE)) as mm:
                created = await mm.create_table(games_pb2.GAME_THREE_FIVE_EIGHT, PLAYERS)
                async with TableClient(service.target, token("mod", Role.ADMIN)) as mod:
                    stream = mod.watch(created.table_id)
                    first = await anext(stream)
                    table = await other.load(created.table_id)
                    seat = table.game.turn(table.state).seats[0]
                    await other.submit(
                        created.table_id,
                        table.game.default_command(table.state, seat),
                        request_id="elsewhere",
                        actor=Actor(PLAYERS[seat], "player"),
                    )
                    async with asyncio.timeout(30):
                        second = await anext(stream)
                    await stream.aclose()
        finally:
            await other_store.close()
    assert second.version > first.version


async def test_idle_watchers_replay_nothing(
    database_url: str, nats_url: str, subject_root: str
) -> None:
    """Sixty idle watch streams over tables the cache has evicted: a poll reads no event."""
    tables = 60
    async with running(database_url, nats_url, subject_root) as service:
        service.service.app.tables._cache_size = 5  # most watched tables are evicted, as at scale
        reads: list[str] = []
        real_read = service.service.store.read

        async def counted_read(stream: str, *args: Any, **kwargs: Any) -> list[RecordedEvent]:
            reads.append(stream)
            events: list[RecordedEvent] = await real_read(stream, *args, **kwargs)
            return events

        async with contextlib.AsyncExitStack() as stack:
            mm = await stack.enter_async_context(
                TableClient(service.target, token("mm", Role.SERVICE))
            )
            mod = await stack.enter_async_context(
                TableClient(service.target, token("mod", Role.ADMIN))
            )
            ids = [
                (await mm.create_table(games_pb2.GAME_THREE_FIVE_EIGHT, PLAYERS)).table_id
                for _ in range(tables)
            ]
            streams = [mod.watch(t) for t in ids]
            for stream in streams:
                await anext(stream)  # each watcher has its first view and is now idle
            service.service.store.read = counted_read  # type: ignore[method-assign]
            try:
                for _ in range(3):
                    assert await service.service.poller.poll() == tables
                await asyncio.sleep(1.0)  # and a few of the service's own polls
            finally:
                service.service.store.read = real_read  # type: ignore[method-assign]
                for stream in streams:
                    await stream.aclose()
    assert reads == [], f"idle polls replayed {len(reads)} streams"


@dataclass
class TwoReplicas:
    """Two table apps on one database, each with a store of its own; a table opened and
    moved on `elsewhere`, loaded (then left behind) by `here`."""

    here: TableApp
    here_store: PostgresEventStore
    elsewhere: TableApp
    table_id: str

    async def move_elsewhere(self, request_id: str) -> Outcome:
        """The default move of whoever must act, made on the other replica."""
        table = await self.elsewhere.load(self.table_id)
        seat = table.game.turn(table.state).seats[0]
        return await self.elsewhere.submit(
            self.table_id,
            table.game.default_command(table.state, seat),
            request_id=request_id,
            actor=Actor(PLAYERS[seat], "player"),
        )


@contextlib.asynccontextmanager
async def two_replicas(database_url: str) -> AsyncIterator[TwoReplicas]:
    await migrate(database_url)
    stores = [await PostgresEventStore(database_url).open() for _ in range(2)]
    try:
        here, elsewhere = TableApp(stores[0]), TableApp(stores[1])
        created = await elsewhere.create(
            request_id="create",
            game_id="three_five_eight",
            options={},
            seats=PLAYERS,
            actor=Actor("mm", "service"),
        )
        await here.load(created.table.table_id)
        yield TwoReplicas(here, stores[0], elsewhere, created.table.table_id)
    finally:
        for store in stores:
            await store.close()


async def test_watchers_woken_together_share_one_catch_up_read(database_url: str) -> None:
    """Eight watchers of a table on a replica that did not make the move (its cache is
    behind the log) catch up with one read of the log, not one each; and the table they
    get is the log's."""
    async with two_replicas(database_url) as replicas:
        moved = await replicas.move_elsewhere("elsewhere")
        reads = counting_reads(replicas.here_store)
        tables, version = replicas.here.tables, moved.table.version
        caught = await asyncio.gather(
            *(tables.at_least(replicas.table_id, version) for _ in range(8))
        )
        assert len(reads) == 1, reads
        assert {t.version for t in caught} == {version}
        assert caught[0].state == moved.table.state
        again = await tables.at_least(replicas.table_id, version)
        assert again is caught[0], "now cached: no read"
        assert len(reads) == 1


async def test_a_watcher_joining_a_catch_up_read_from_before_its_version_reads_again(
    database_url: str,
) -> None:
    """A shared catch-up read that began before the version a watcher heard of was
    appended does not serve that watcher a table behind it."""
    async with two_replicas(database_url) as replicas:
        first = (await replicas.move_elsewhere("first")).table.version
        read_done, release = asyncio.Event(), asyncio.Event()
        real_read = replicas.here_store.read

        async def held_read(stream: str, *args: Any, **kwargs: Any) -> list[RecordedEvent]:
            events: list[RecordedEvent] = await real_read(stream, *args, **kwargs)
            if not read_done.is_set():  # the first read: held once it has its rows
                read_done.set()
                await release.wait()
            return events

        replicas.here_store.read = held_read  # type: ignore[method-assign]
        tables = replicas.here.tables
        early = asyncio.create_task(tables.at_least(replicas.table_id, first))
        await read_done.wait()
        second = (await replicas.move_elsewhere("second")).table.version
        late = asyncio.create_task(tables.at_least(replicas.table_id, second))
        await asyncio.sleep(0)  # the late watcher joins the read under way
        release.set()
        assert (await early).version >= first
        assert (await late).version == second


async def test_the_echo_of_its_own_move_costs_the_replica_no_read_and_no_view(
    database_url: str, nats_url: str, subject_root: str
) -> None:
    """The relay publishes a move; the replica that made it hears it back on NATS. It
    already woke its watchers and holds that version: the echo reads nothing and builds
    no view (each viewer's view of the version was built once, for the move)."""
    async with running(database_url, nats_url, subject_root) as service:
        app = service.service.app
        heard: list[tuple[str, int]] = []
        more_heard = asyncio.Event()
        real_notify = app.notifier.notify

        def recorded(table_id: str, version: int) -> None:
            heard.append((table_id, version))
            more_heard.set()
            real_notify(table_id, version)

        app.notifier.notify = recorded  # type: ignore[method-assign]
        async with contextlib.AsyncExitStack() as stack:
            mm, players = await open_clients(stack, service.target)
            table_id = (await mm.create_table(games_pb2.GAME_THREE_FIVE_EIGHT, PLAYERS)).table_id
            streams = [players[p].watch(table_id) for p in PLAYERS]
            first = [await anext(stream) for stream in streams]
            mover = first[0].turn.seats[0]
            reads = counting_reads(service.service.store)
            builds: list[int | None] = []
            views = service.service.servicer.views
            real_build = views._build

            def counted_build(table: Any, seat: int | None) -> Any:
                builds.append(seat)
                return real_build(table, seat)

            views._build = counted_build  # type: ignore[method-assign]
            heard.clear()
            mine = first[mover]
            reply = await players[PLAYERS[mover]].submit(
                table_id, mine.legal_actions[0], expected_version=mine.version
            )
            version = reply.view.version
            for stream in streams:
                async with asyncio.timeout(30):
                    assert (await anext(stream)).version == version
            async with asyncio.timeout(30):  # the move's own report, then its echo
                while heard.count((table_id, version)) < 2:
                    more_heard.clear()
                    await more_heard.wait()
            # the echoes of the table's opening may come late (the relay lags under load):
            # what counts is that the move is heard first from its own append
            since_the_move = [h for h in heard if h[1] >= version]
            assert since_the_move[:2] == [(table_id, version)] * 2
            await asyncio.sleep(0.2)  # whatever the echo would set off has run by now
            for stream in streams:
                await stream.aclose()
    assert reads == [], "no catch-up read for a version this replica holds"
    assert sorted(builds, key=str) == sorted([0, 1, 2], key=str), "one view per seat"
