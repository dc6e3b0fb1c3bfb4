"""Durable pull consumers with explicit acks, for the services that follow table events.

DESIGN.md §5: consumers are durable pull consumers, created explicitly, acknowledged
explicitly, and idempotent — JetStream redelivers whatever was not acked within
`ack_wait`, so a handler may see an event twice (dedupe on `event.event_id`, or make
the effect idempotent, e.g. by acting through an API that takes a request id).

    spec = DurableConsumer(stream=jetstream_name("table"), durable="bots",
                           filter_subjects=(category_filter("table"),))
    subscription = await EventSubscription.bind(js, spec)
    await consume(subscription, handle_event, stop=stop_event)
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass

import structlog
from nats.aio.msg import Msg
from nats.errors import TimeoutError as NatsTimeoutError
from nats.js import JetStreamContext
from nats.js.api import AckPolicy, ConsumerConfig, ConsumerInfo, DeliverPolicy

from kozyr.bus.codec import MalformedEventMessage, decode_event
from kozyr.bus.settling import SETTLE_SECONDS, settled
from kozyr.eventstore.model import RecordedEvent

log = structlog.get_logger(__name__)


@dataclass(frozen=True, slots=True)
class DurableConsumer:
    """A durable pull consumer's identity and delivery settings."""

    stream: str
    """The JetStream stream (see `kozyr.bus.streams.jetstream_name`)."""
    durable: str
    """Shared by every replica of a service: they split the deliveries between them."""
    filter_subjects: tuple[str, ...] = ()
    ack_wait: float = 30.0
    max_deliver: int = -1
    max_ack_pending: int = 1000
    deliver_policy: DeliverPolicy = DeliverPolicy.ALL
    replicas: int = 0
    """0: the stream's (KOZYR_STREAM_REPLICAS), raised with it; a service's consumers
    keep that. 1 suits a reader's throwaway consumer (a test's, a tool's)."""

    def config(self) -> ConsumerConfig:
        filters = list(self.filter_subjects)
        return ConsumerConfig(
            durable_name=self.durable,
            ack_policy=AckPolicy.EXPLICIT,
            deliver_policy=self.deliver_policy,
            ack_wait=self.ack_wait,
            max_deliver=self.max_deliver,
            max_ack_pending=self.max_ack_pending,
            filter_subject=filters[0] if len(filters) == 1 else None,
            filter_subjects=filters if len(filters) > 1 else None,
            num_replicas=self.replicas or None,
        )


async def ensure_consumer(
    js: JetStreamContext, spec: DurableConsumer, settle_seconds: float = SETTLE_SECONDS
) -> ConsumerInfo:
    """Create the durable consumer, or update its settings; idempotent, so made again
    while JetStream does not answer (`kozyr.bus.settling`)."""
    return await settled(
        lambda: js.add_consumer(spec.stream, spec.config()),
        f"consumer {spec.stream}/{spec.durable}",
        settle_seconds,
    )


@dataclass(frozen=True, slots=True)
class Delivery:
    """One delivered event and the means to acknowledge it."""

    event: RecordedEvent
    message: Msg

    @property
    def delivery_count(self) -> int:
        """1 on first delivery; more means redelivery (the handler must be idempotent)."""
        return int(self.message.metadata.num_delivered)

    async def ack(self) -> None:
        await self.message.ack()

    async def nak(self, delay: float | None = None) -> None:
        """Ask for redelivery (after `delay` seconds)."""
        await self.message.nak(delay=delay)

    async def in_progress(self) -> None:
        """Extend the ack deadline of a slow handler."""
        await self.message.in_progress()

    async def term(self) -> None:
        """Never redeliver (a message that can never be handled)."""
        await self.message.term()


class EventSubscription:
    """A pull subscription bound to a durable consumer, yielding decoded events."""

    def __init__(self, subscription: JetStreamContext.PullSubscription) -> None:
        self._subscription = subscription

    @classmethod
    async def bind(cls, js: JetStreamContext, spec: DurableConsumer) -> EventSubscription:
        """Ensure the consumer exists, then bind a pull subscription to it."""
        await ensure_consumer(js, spec)
        subscription = await js.pull_subscribe_bind(durable=spec.durable, stream=spec.stream)
        return cls(subscription)

    async def fetch(self, batch: int = 32, max_wait: float = 1.0) -> list[Delivery]:
        """Up to `batch` deliveries; [] when none arrived within `max_wait` seconds.

        A message whose body is not an event is terminated (never redelivered) and logged.
        """
        try:
            messages = await self._subscription.fetch(batch, timeout=max_wait)
        except (NatsTimeoutError, TimeoutError):
            return []
        deliveries: list[Delivery] = []
        for message in messages:
            try:
                deliveries.append(Delivery(decode_event(message.data), message))
            except MalformedEventMessage as error:
                log.error(
                    "terminating a malformed message", subject=message.subject, error=str(error)
                )
                await message.term()
        return deliveries

    async def deliveries(
        self, stop: asyncio.Event, batch: int = 32, max_wait: float = 1.0
    ) -> AsyncIterator[Delivery]:
        """Deliveries one by one until `stop` is set (the caller acks each)."""
        while not stop.is_set():
            for delivery in await self.fetch(batch, max_wait):
                yield delivery

    async def unsubscribe(self) -> None:
        await self._subscription.unsubscribe()


EventHandler = Callable[[RecordedEvent], Awaitable[None]]


async def consume(
    subscription: EventSubscription,
    handler: EventHandler,
    *,
    stop: asyncio.Event,
    batch: int = 32,
    retry_delay: float = 1.0,
) -> None:
    """Run `handler` on every delivered event until `stop`: ack on success, nak on error.

    Events are handled one at a time in delivery order (per-stream order is kept as long
    as nothing is redelivered). A handler exception is logged and the event redelivered
    after `retry_delay` seconds, up to the consumer's `max_deliver`.
    """
    async for delivery in subscription.deliveries(stop, batch):
        try:
            await handler(delivery.event)
        except Exception as error:
            log.warning(
                "event handler failed; will be redelivered",
                stream=delivery.event.stream,
                position=delivery.event.position,
                delivery_count=delivery.delivery_count,
                error=f"{type(error).__name__}: {error}",
            )
            await delivery.nak(delay=retry_delay)
        else:
            await delivery.ack()
