"""The outbox relay against real PostgreSQL and NATS JetStream: order, exactly-once
storage through outages and crashes, leadership among replicas, graceful stop."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager

import asyncpg
import nats
import pytest
from nats.aio.client import Client as NatsClient
from nats.js import JetStreamContext
from nats.js.errors import NotFoundError

from kozyr.bus.codec import MSG_ID_HEADER
from kozyr.bus.consumers import Delivery, DurableConsumer, EventSubscription
from kozyr.bus.relay import Backoff, OutboxRelay, outbox_backlog
from kozyr.bus.streams import TABLE_CATEGORIES, jetstream_name
from kozyr.bus.subjects import category_filter, public_filter
from kozyr.eventstore import NewEvent, NewMessage, PostgresEventStore, RecordedEvent, migrate
from kozyr.eventstore.urls import asyncpg_dsn
from kozyr.infra import EmbeddedNats

pytestmark = pytest.mark.integration

FAST = Backoff(initial=0.05, maximum=0.5)


@pytest.fixture
async def migrated_url(database_url: str) -> str:
    await migrate(database_url)
    return database_url


@pytest.fixture
async def store(migrated_url: str) -> AsyncIterator[PostgresEventStore]:
    async with PostgresEventStore(migrated_url) as opened:
        yield opened


@pytest.fixture
async def admin(migrated_url: str) -> AsyncIterator[asyncpg.Connection]:
    connection = await asyncpg.connect(asyncpg_dsn(migrated_url))
    yield connection
    await connection.close()


@asynccontextmanager
async def jetstream(url: str) -> AsyncIterator[JetStreamContext]:
    client: NatsClient = await nats.connect(url)
    try:
        yield client.jetstream()
    finally:
        await client.close()


@asynccontextmanager
async def running(relay: OutboxRelay) -> AsyncIterator[OutboxRelay]:
    task = asyncio.create_task(relay.run())
    try:
        yield relay
    finally:
        relay.stop()
        await asyncio.wait_for(task, timeout=60)


async def wait_until(check: Callable[[], Awaitable[bool]], what: str, limit: float = 60) -> None:
    """Poll `check` until true; fail after `limit` seconds (a bound, not a speed claim)."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + limit
    while not await check():
        if loop.time() > deadline:
            raise AssertionError(f"gave up waiting: {what}")
        await asyncio.sleep(0.05)


async def stored_messages(js: JetStreamContext, root: str) -> int:
    try:
        return int((await js.stream_info(jetstream_name("table", root))).state.messages)
    except NotFoundError:
        return 0


def outbox_empty(store: PostgresEventStore) -> Callable[[], Awaitable[bool]]:
    async def check() -> bool:
        return (await outbox_backlog(store))[0] == 0

    return check


async def receive_all(js: JetStreamContext, root: str, expected: int) -> list[Delivery]:
    """Every message of the root's table stream through a fresh durable consumer."""
    spec = DurableConsumer(
        stream=jetstream_name("table", root),
        durable=f"check-{uuid.uuid4().hex[:8]}",
        filter_subjects=(category_filter("table", root),),
    )
    subscription = await EventSubscription.bind(js, spec)
    received: list[Delivery] = []
    for _ in range(200):
        if len(received) >= expected:
            break
        for delivery in await subscription.fetch(64, max_wait=0.5):
            await delivery.ack()
            received.append(delivery)
    leftovers = await subscription.fetch(64, max_wait=0.5)
    await subscription.unsubscribe()
    return received + leftovers


def assert_exactly_once_in_order(received: list[Delivery], appended: list[RecordedEvent]) -> None:
    assert sorted(d.event.event_id for d in received) == sorted(e.event_id for e in appended)
    for delivery in received:
        headers = delivery.message.headers or {}
        assert headers.get(MSG_ID_HEADER) == str(delivery.event.event_id)
    by_stream: dict[str, list[int]] = {}
    for delivery in received:
        by_stream.setdefault(delivery.event.stream, []).append(delivery.event.position)
    for stream, positions in by_stream.items():
        assert positions == sorted(positions), stream
    as_stored = {e.event_id: e for e in appended}
    assert all(d.event == as_stored[d.event.event_id] for d in received)


async def append_rounds(
    store: PostgresEventStore, streams: list[str], rounds: int, offset: int = 0
) -> list[RecordedEvent]:
    """Interleave appends to several streams (two events per append)."""
    appended: list[RecordedEvent] = []
    for round_ in range(offset, offset + rounds):
        for stream in streams:
            events = [NewEvent("CardPlayed", {"n": round_}), NewEvent("TurnPassed", {"n": round_})]
            result = await store.append(stream, 2 * round_, events, request_id=f"r{round_}")
            appended.extend(result.events)
    return appended


def new_streams(count: int) -> list[str]:
    return [f"table-{uuid.uuid4().hex[:10]}" for _ in range(count)]


async def test_the_relay_publishes_every_event_once_in_stream_order(
    migrated_url: str, nats_url: str, subject_root: str, store: PostgresEventStore
) -> None:
    appended = await append_rounds(store, new_streams(3), rounds=4)
    relay = OutboxRelay(
        store, nats_url, categories=TABLE_CATEGORIES, subject_root=subject_root, backoff=FAST
    )
    async with running(relay), jetstream(nats_url) as js:
        await wait_until(outbox_empty(store), "the outbox drains")
        assert await stored_messages(js, subject_root) == len(appended)
        received = await receive_all(js, subject_root, len(appended))
    assert_exactly_once_in_order(received, appended)
    assert relay.stats.published == len(appended)


async def test_events_appended_while_nats_is_down_are_published_after_it_returns(
    migrated_url: str,
    subject_root: str,
    store: PostgresEventStore,
    nats_factory: Callable[[], EmbeddedNats],
) -> None:
    server = nats_factory()
    url = server.url
    streams = new_streams(2)
    relay = OutboxRelay(
        store,
        url,
        categories=TABLE_CATEGORIES,
        subject_root=subject_root,
        backoff=FAST,
        publish_timeout=1.0,
    )
    async with running(relay):
        before = await append_rounds(store, streams, rounds=2)
        await wait_until(outbox_empty(store), "the first events are published")
        server.stop()
        during = await append_rounds(store, streams, rounds=3, offset=2)
        await asyncio.sleep(1.5)  # let the relay fail against the stopped server
        assert (await outbox_backlog(store))[0] == len(during)
        server.start()
        await wait_until(outbox_empty(store), "the backlog drains after the restart")
    async with jetstream(url) as js:
        appended = before + during
        assert await stored_messages(js, subject_root) == len(appended)
        received = await receive_all(js, subject_root, len(appended))
    assert_exactly_once_in_order(received, appended)
    assert relay.stats.failures >= 1


async def test_a_relay_killed_between_publish_and_delete_causes_no_duplicate(
    migrated_url: str,
    nats_url: str,
    subject_root: str,
    store: PostgresEventStore,
    admin: asyncpg.Connection,
) -> None:
    """Block the relay's DELETE with row locks, wait until JetStream has acknowledged
    everything, kill the relay's database connection, and let it start over."""
    appended = await append_rounds(store, new_streams(2), rounds=3)
    blocker = await asyncpg.connect(asyncpg_dsn(migrated_url))
    holding = blocker.transaction()
    await holding.start()
    await blocker.fetch("SELECT global_position FROM outbox FOR UPDATE")
    relay = OutboxRelay(
        store,
        nats_url,
        categories=TABLE_CATEGORIES,
        subject_root=subject_root,
        backoff=FAST,
        idle_interval=0.2,
        application_name="relay-under-test",
    )
    try:
        async with running(relay), jetstream(nats_url) as js:

            async def all_acknowledged() -> bool:
                return await stored_messages(js, subject_root) == len(appended)

            await wait_until(all_acknowledged, "JetStream stores the first publication")
            pid = await wait_for_lock_wait(admin, "relay-under-test")
            await admin.execute("SELECT pg_terminate_backend($1)", pid)
            await holding.rollback()
            await wait_until(outbox_empty(store), "the restarted relay drains the outbox")
            assert await stored_messages(js, subject_root) == len(appended)
            received = await receive_all(js, subject_root, len(appended))
    finally:
        await blocker.close()
    assert_exactly_once_in_order(received, appended)
    assert relay.stats.sessions >= 2
    assert relay.stats.duplicates == len(appended)  # republished, and dropped by JetStream


async def wait_for_lock_wait(admin: asyncpg.Connection, application_name: str) -> int:
    pid: int | None = None

    async def waiting() -> bool:
        nonlocal pid
        pid = await admin.fetchval(
            "SELECT pid FROM pg_stat_activity "
            "WHERE application_name = $1 AND wait_event_type = 'Lock'",
            application_name,
        )
        return pid is not None

    await wait_until(waiting, f"{application_name} waits for a lock")
    assert pid is not None
    return pid


async def test_replicas_elect_one_leader_and_hand_over_when_it_stops(
    migrated_url: str, nats_url: str, subject_root: str, store: PostgresEventStore
) -> None:
    streams = new_streams(3)
    relays = [
        OutboxRelay(
            store,
            nats_url,
            categories=TABLE_CATEGORIES,
            subject_root=subject_root,
            backoff=FAST,
            idle_interval=0.1,
            application_name=f"relay-{index}",
        )
        for index in range(2)
    ]
    tasks = [asyncio.create_task(relay.run()) for relay in relays]
    try:

        async def one_leader() -> bool:
            return sum(relay.stats.leader for relay in relays) == 1 and all(
                relay.stats.sessions for relay in relays
            )

        await wait_until(one_leader, "one relay leads, the other stands by")
        first = await append_rounds(store, streams, rounds=3)
        await wait_until(outbox_empty(store), "the leader publishes")
        leader = next(relay for relay in relays if relay.stats.leader)
        other = next(relay for relay in relays if relay is not leader)
        assert other.stats.published == 0
        leader.stop()
        await asyncio.wait_for(tasks[relays.index(leader)], timeout=60)
        second = await append_rounds(store, streams, rounds=3, offset=3)
        await wait_until(outbox_empty(store), "the other replica takes over")
        assert other.stats.leader
        async with jetstream(nats_url) as js:
            received = await receive_all(js, subject_root, len(first) + len(second))
    finally:
        for relay in relays:
            relay.stop()
        await asyncio.wait_for(asyncio.gather(*tasks), timeout=60)
    assert_exactly_once_in_order(received, first + second)
    assert other.stats.published == len(second)


async def test_an_append_in_the_leaders_own_process_wakes_it(
    migrated_url: str, nats_url: str, subject_root: str, store: PostgresEventStore
) -> None:
    """With a 10-minute poll interval, only the store's own wake-up explains prompt
    publishing (appends send no NOTIFY)."""
    relay = OutboxRelay(
        store, nats_url, categories=TABLE_CATEGORIES, subject_root=subject_root, idle_interval=600
    )
    async with running(relay), jetstream(nats_url) as js:

        async def leading() -> bool:
            return relay.stats.leader and relay.stats.batches == 0

        await wait_until(leading, "the relay leads")
        await asyncio.sleep(0.3)  # let it reach its idle wait
        appended = await append_rounds(store, new_streams(1), rounds=1)

        async def published() -> bool:
            return await stored_messages(js, subject_root) == len(appended)

        await wait_until(published, "the woken relay publishes", limit=60)


async def test_appends_one_at_a_time_cost_one_outbox_read_each(
    migrated_url: str, nats_url: str, subject_root: str, store: PostgresEventStore
) -> None:
    """A batch shorter than the batch size was everything queued before its read: the
    relay then waits for a wake-up instead of reading the outbox again to find it empty
    (a read a move, not two, at a player's pace); a full batch is followed at once by the
    next read. A read is counted as it starts and a published batch before the relay
    next yields, so the counts are exact whenever this test looks."""
    streams = new_streams(3)
    await append_rounds(store, streams, rounds=1)  # 6 entries before the relay starts
    relay = OutboxRelay(
        store,
        nats_url,
        categories=TABLE_CATEGORIES,
        subject_root=subject_root,
        batch_size=4,
        idle_interval=600,
    )
    async with running(relay):
        for round_ in range(3):
            expected = 6 + 2 * round_

            async def published(count: int = expected) -> bool:
                return relay.stats.published == count

            await wait_until(published, f"{expected} entries published", limit=20)
            assert relay.stats.reads == 2 + round_, "a full batch, then one read per wake-up"
            if round_ < 2:
                await append_rounds(store, streams[:1], rounds=1, offset=round_ + 1)
        assert relay.stats.batches == 4


async def test_an_append_in_another_process_wakes_the_leader_through_that_process_relay(
    migrated_url: str, nats_url: str, subject_root: str, store: PostgresEventStore
) -> None:
    """Two processes, each with its store and relay, 10-minute polls: the standby relay
    hears its own process's append and NOTIFYs the leader, which publishes at once."""
    async with PostgresEventStore(migrated_url) as elsewhere:
        leader, standby = (
            OutboxRelay(
                each,
                nats_url,
                categories=TABLE_CATEGORIES,
                subject_root=subject_root,
                idle_interval=600,
                application_name=name,
            )
            for each, name in ((store, "relay-leader"), (elsewhere, "relay-standby"))
        )
        async with running(leader), jetstream(nats_url) as js:

            async def leading() -> bool:
                return leader.stats.leader

            await wait_until(leading, "the first relay leads")
            async with running(standby):

                async def standing_by() -> bool:
                    return standby.stats.sessions == 1

                await wait_until(standing_by, "the second relay stands by")
                await asyncio.sleep(0.3)  # both in their idle waits
                appended = await append_rounds(elsewhere, new_streams(2), rounds=2)

                async def published() -> bool:
                    return await stored_messages(js, subject_root) == len(appended)

                await wait_until(published, "the leader publishes the other process's events")
                assert standby.stats.published == 0
                assert not standby.stats.leader


async def test_stop_ends_a_relay_that_cannot_reach_nats(
    store: PostgresEventStore, subject_root: str
) -> None:
    relay = OutboxRelay(
        store,
        "nats://127.0.0.1:9",
        categories=TABLE_CATEGORIES,
        subject_root=subject_root,
        backoff=FAST,
        connect_timeout=1,
    )
    task = asyncio.create_task(relay.run())

    async def failed_once() -> bool:
        return relay.stats.failures >= 1

    await wait_until(failed_once, "the relay fails to connect")
    relay.stop()
    await asyncio.wait_for(task, timeout=30)
    assert relay.stats.last_error is not None


async def test_messages_queued_with_appends_follow_their_events_on_their_own_subjects(
    nats_url: str, subject_root: str, store: PostgresEventStore
) -> None:
    """The public table events travel like events: once, in append order, but on
    `<root>.public.table.<id>.<Type>` in a JetStream stream of their own."""
    stream = new_streams(1)[0]
    for round_ in range(3):
        await store.append(
            stream,
            round_,
            [NewEvent("CardPlayed", {"n": round_})],
            request_id=f"r{round_}",
            messages=[
                NewMessage("public", "TurnEnded", f"end {round_}".encode()),
                NewMessage("public", "TurnStarted", f"start {round_ + 1}".encode()),
            ],
        )
    relay = OutboxRelay(
        store, nats_url, categories=TABLE_CATEGORIES, subject_root=subject_root, backoff=FAST
    )
    async with running(relay), jetstream(nats_url) as js:
        await wait_until(outbox_empty(store), "the outbox drains")
        assert await stored_messages(js, subject_root) == 3  # the raw stream: events only
        subscription = await js.pull_subscribe(
            public_filter("table", subject_root),
            durable=f"check-{uuid.uuid4().hex[:8]}",
            stream=jetstream_name("public", subject_root),
        )
        messages = await subscription.fetch(6, timeout=10)
    table_id = stream.removeprefix("table-")
    assert [(m.subject, m.data) for m in messages] == [
        (f"{subject_root}.public.table.{table_id}.{kind}", f"{word} {n}".encode())
        for round_ in range(3)
        for kind, word, n in (("TurnEnded", "end", round_), ("TurnStarted", "start", round_ + 1))
    ]
    assert len({(m.headers or {})[MSG_ID_HEADER] for m in messages}) == 6


async def test_a_refused_publish_stops_its_stream_and_the_next_session_publishes_it(
    migrated_url: str, nats_url: str, subject_root: str, store: PostgresEventStore
) -> None:
    """A publish JetStream answers with "no responders" (its stream is gone) is a failure:
    nothing of that stream past it is published or deleted, and the next session (which
    makes the stream again) publishes the rest in order, each once."""
    streams = new_streams(2)
    first = await append_rounds(store, streams, rounds=1)
    relay = OutboxRelay(
        store, nats_url, categories=TABLE_CATEGORIES, subject_root=subject_root, backoff=FAST
    )
    async with running(relay), jetstream(nats_url) as js:
        await wait_until(outbox_empty(store), "the first round is published")
        await js.delete_stream(jetstream_name("table", subject_root))
        later = await append_rounds(store, streams, rounds=2, offset=1)

        async def refused() -> bool:
            return relay.stats.failures > 0

        await wait_until(refused, "the publish to the deleted stream fails")
        assert "NoStreamResponseError" in (relay.stats.last_error or "")
        await wait_until(outbox_empty(store), "the next session publishes the rest")
        received = await receive_all(js, subject_root, len(later))
    assert_exactly_once_in_order(received, later)
    assert relay.stats.published == len(first) + len(later)
