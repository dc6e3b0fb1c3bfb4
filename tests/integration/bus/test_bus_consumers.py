"""Durable pull consumers with explicit acks (kozyr.bus.consumers, and the workers of
kozyr.bus.work) on a real JetStream."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import AsyncIterator

import nats
import pytest
from nats.aio.msg import Msg
from nats.errors import DrainTimeoutError
from nats.js import JetStreamContext

from kozyr.bus.codec import encode_event, event_headers
from kozyr.bus.consumers import (
    DurableConsumer,
    EventSubscription,
    consume,
    ensure_consumer,
)
from kozyr.bus.streams import TABLE_CATEGORIES, ensure_event_streams, jetstream_name
from kozyr.bus.subjects import category_filter, event_type_filter, subject_for
from kozyr.bus.work import MessageWorker, more_pending
from kozyr.eventstore import InMemoryEventStore, NewEvent, RecordedEvent
from tests.integration.bus.test_bus_relay import wait_until

pytestmark = pytest.mark.integration


@pytest.fixture
async def js(nats_url: str, subject_root: str) -> AsyncIterator[JetStreamContext]:
    client = await nats.connect(nats_url)
    context = client.jetstream()
    await ensure_event_streams(context, subject_root, TABLE_CATEGORIES)
    yield context
    await client.close()


async def publish_events(js: JetStreamContext, root: str, types: list[str]) -> list[RecordedEvent]:
    """Events recorded by the in-memory store, published as the relay would publish them."""
    store = InMemoryEventStore()
    stream = f"table-{uuid.uuid4().hex[:8]}"
    result = await store.append(
        stream, 0, [NewEvent(t, {"i": i}) for i, t in enumerate(types)], request_id="r"
    )
    for event in result.events:
        await js.publish(
            subject_for(stream, event.type, root), encode_event(event), headers=event_headers(event)
        )
    return list(result.events)


def spec_for(root: str, durable: str = "service", ack_wait: float = 30.0) -> DurableConsumer:
    return DurableConsumer(
        stream=jetstream_name("table", root),
        durable=durable,
        filter_subjects=(category_filter("table", root),),
        ack_wait=ack_wait,
    )


async def test_fetched_events_are_decoded_and_acked_once(
    js: JetStreamContext, subject_root: str
) -> None:
    published = await publish_events(js, subject_root, ["Opened", "SeatTaken", "Dealt"])
    subscription = await EventSubscription.bind(js, spec_for(subject_root))

    deliveries = await subscription.fetch(10, max_wait=2)
    for delivery in deliveries:
        assert delivery.delivery_count == 1
        await delivery.ack()

    assert [d.event for d in deliveries] == published
    assert await subscription.fetch(10, max_wait=0.5) == []


async def test_a_nak_redelivers_and_an_unacked_event_comes_back(
    js: JetStreamContext, subject_root: str
) -> None:
    (event,) = await publish_events(js, subject_root, ["Opened"])
    subscription = await EventSubscription.bind(js, spec_for(subject_root, ack_wait=1.0))

    (first,) = await subscription.fetch(1, max_wait=2)
    await first.nak()
    (second,) = await subscription.fetch(1, max_wait=5)
    assert (second.event, second.delivery_count) == (event, 2)
    # not acked at all: redelivered after ack_wait
    (third,) = await subscription.fetch(1, max_wait=10)
    assert third.delivery_count == 3
    await third.ack()


async def test_replicas_sharing_a_durable_split_the_deliveries(
    js: JetStreamContext, subject_root: str
) -> None:
    published = await publish_events(js, subject_root, [f"E{i}" for i in range(10)])
    spec = spec_for(subject_root, durable="bots")
    replicas = [await EventSubscription.bind(js, spec) for _ in range(2)]

    seen = []
    for _ in range(20):
        for replica in replicas:
            for delivery in await replica.fetch(3, max_wait=0.3):
                await delivery.ack()
                seen.append(delivery.event.event_id)
        if len(seen) >= len(published):
            break
    assert sorted(seen) == sorted(e.event_id for e in published)


async def test_consume_acks_handled_events_and_retries_failed_ones(
    js: JetStreamContext, subject_root: str
) -> None:
    published = await publish_events(js, subject_root, ["Opened", "Dealt", "Closed"])
    subscription = await EventSubscription.bind(js, spec_for(subject_root))
    handled: list[RecordedEvent] = []
    failed_once: set[uuid.UUID] = set()
    stop = asyncio.Event()

    async def handler(event: RecordedEvent) -> None:
        if event.type == "Dealt" and event.event_id not in failed_once:
            failed_once.add(event.event_id)
            raise RuntimeError("transient")
        handled.append(event)
        if len(handled) == len(published):
            stop.set()

    await asyncio.wait_for(consume(subscription, handler, stop=stop, retry_delay=0.1), 60)

    assert sorted(e.event_id for e in handled) == sorted(e.event_id for e in published)
    assert len(failed_once) == 1
    assert await subscription.fetch(10, max_wait=0.5) == []


async def test_malformed_messages_are_terminated_not_delivered(
    js: JetStreamContext, subject_root: str
) -> None:
    await js.publish(f"{subject_root}.table.x1.Garbage", b"not an event")
    published = await publish_events(js, subject_root, ["Opened"])
    subscription = await EventSubscription.bind(js, spec_for(subject_root))

    deliveries = await subscription.fetch(10, max_wait=2)
    assert [d.event for d in deliveries] == published
    await deliveries[0].ack()
    assert await subscription.fetch(10, max_wait=1.5) == []


async def test_ensure_consumer_is_idempotent_and_filters_by_type(
    js: JetStreamContext, subject_root: str
) -> None:
    spec = DurableConsumer(
        stream=jetstream_name("table", subject_root),
        durable="finished",
        filter_subjects=(event_type_filter("table", "TableFinished", subject_root),),
    )
    await ensure_consumer(js, spec)
    info = await ensure_consumer(js, spec)
    assert info.config.durable_name == "finished"
    await publish_events(js, subject_root, ["CardPlayed", "TableFinished", "CardPlayed"])
    subscription = await EventSubscription.bind(js, spec)
    deliveries = await subscription.fetch(10, max_wait=2)
    assert [d.event.type for d in deliveries] == ["TableFinished"]


async def test_a_stopped_worker_lets_its_connection_drain_at_once(
    nats_url: str, subject_root: str
) -> None:
    """A service stops its workers, then drains its NATS connection (matchmaking, bots,
    clock). An idle worker's fetch times out on the client a moment before JetStream's
    "request timeout" reply comes; unread, that reply holds the subscription's drain —
    the service's stop — for nats-py's whole drain_timeout (30 s), past any shutdown
    grace. A stopped worker must let go of its subscription."""
    errors: list[Exception] = []

    async def note(error: Exception) -> None:
        errors.append(error)

    # nats-py reports a drain that ran out of time to error_cb (it swallows a deadline's
    # cancellation): a short drain_timeout and the reports tell.
    client = await nats.connect(nats_url, drain_timeout=5, error_cb=note)
    js = client.jetstream()
    await ensure_event_streams(js, subject_root, TABLE_CATEGORIES)

    async def handle(message: Msg) -> None:
        raise AssertionError("nothing was published")

    spec = spec_for(subject_root, durable="idle")
    worker = MessageWorker(js, spec, handle)
    await worker.start()
    async with asyncio.timeout(10):  # the worker's first fetch is waiting at the server
        while not (await js.consumer_info(spec.stream, spec.durable)).num_waiting:
            pass
    await worker.stop()  # waits the fetch out: it times out empty
    await client.drain()
    assert client.is_closed
    assert not [e for e in errors if isinstance(e, DrainTimeoutError)]


async def test_a_worker_scoops_only_when_jetstream_says_more_are_waiting(
    js: JetStreamContext, subject_root: str
) -> None:
    """After its first message a worker scoops up what else is waiting, with a short
    wait; a lone message (a turn, a deadline) must not wait for company that is not
    coming — each such wait was on every computer move (a 3-5-8 game: ~5 of ~14 ms a
    move). The worker asks the message's metadata whether more were pending."""
    spec = spec_for(subject_root, durable="scoop")
    await ensure_consumer(js, spec)
    await publish_events(js, subject_root, ["CardPlayed", "CardPlayed"])

    async def both_counted() -> bool:  # stored at the ack, counted by the consumer after
        info = await js.consumer_info(spec.stream, spec.durable)
        return bool(info.num_pending == 2)

    await wait_until(both_counted, "the consumer counts both messages pending", limit=10)
    subscription = await js.pull_subscribe_bind(durable=spec.durable, stream=spec.stream)
    first = await subscription.fetch(1, timeout=2)
    assert more_pending(first)
    second = await subscription.fetch(1, timeout=2)
    assert not more_pending(second)
    assert not more_pending([])
