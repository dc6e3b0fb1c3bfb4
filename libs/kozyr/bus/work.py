"""Work shared by the replicas of a service: raw messages of a durable pull consumer.

Every replica binds the same durable consumer (`kozyr.bus.consumers.DurableConsumer`),
so JetStream hands each message to one of them; what one replica took and did not
acknowledge within `ack_wait` (it was killed) goes to another. Handlers must therefore
be idempotent. Unlike `kozyr.bus.consumers.consume` (one decoded table event at a time),
a worker runs up to `concurrency` handlers at once: a thousand timers firing in the
same second must not wait for each other's calls.

    worker = MessageWorker(js, spec, handle, concurrency=100)
    await worker.start()
    ...
    await worker.stop()
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Awaitable, Callable, Iterable

import structlog
from nats.aio.msg import Msg
from nats.errors import TimeoutError as NatsTimeoutError
from nats.js import JetStreamContext

from kozyr.bus.consumers import DurableConsumer, ensure_consumer
from kozyr.bus.metrics import CONSUMER_PENDING, HANDLED

log = structlog.get_logger(__name__)

MessageHandler = Callable[[Msg], Awaitable[None]]
STOP_GRACE = 5.0
"""Seconds the handlers in flight get at a stop (under the server's shutdown grace)."""
HOLD_LIMIT = 10
"""How many times a handler still working extends its message's `ack_wait`."""
SCOOP_SECONDS = 0.005
"""After a first message, how long a fetch may wait for more already on their way."""


def pending_after(messages: list[Msg]) -> int | None:
    """How many messages the consumer still held when the last of these was sent (JetStream
    says so in each message's metadata); 0 for none fetched, None when a message carries
    no metadata."""
    if not messages:
        return 0
    try:
        return int(messages[-1].metadata.num_pending or 0)
    except Exception:  # a message without JetStream metadata
        return None


def more_pending(messages: list[Msg]) -> bool:
    """Whether more messages were waiting behind these.

    A lone message (the common case: a turn, a deadline) is handled at once instead of
    after a scoop's wait for company that is not coming. A message without JetStream
    metadata says nothing, so it is scooped after as before.
    """
    pending = pending_after(messages)
    return pending is None or pending > 0


class MessageWorker:
    """Pulls messages of one durable consumer and handles them: ack on success, nak on error."""

    def __init__(
        self,
        js: JetStreamContext,
        spec: DurableConsumer,
        handler: MessageHandler,
        *,
        concurrency: int = 1,
        retry_delay: float = 1.0,
        max_wait: float = 1.0,
    ) -> None:
        self._js = js
        self.spec = spec
        self._handler = handler
        self._slots = asyncio.Semaphore(concurrency)
        self._concurrency = concurrency
        self._retry_delay = retry_delay
        self._max_wait = max_wait
        self._stopping = asyncio.Event()
        self._task: asyncio.Task[None] | None = None
        self._running: set[asyncio.Task[None]] = set()
        self._subscription: JetStreamContext.PullSubscription | None = None

    async def start(self) -> None:
        """Create (or update) the consumer, bind to it and start pulling."""
        await ensure_consumer(self._js, self.spec)
        subscription = await self._js.pull_subscribe_bind(
            durable=self.spec.durable, stream=self.spec.stream
        )
        self._subscription = subscription
        self._task = asyncio.create_task(self._pull(subscription), name=self.spec.durable)

    async def _pull(self, subscription: JetStreamContext.PullSubscription) -> None:
        while not self._stopping.is_set():
            try:
                messages = await self._fetch(subscription, 1, self._max_wait)
                free = self._free_slots() - len(messages)
                if free > 0 and more_pending(messages):
                    messages += await self._fetch(subscription, free, SCOOP_SECONDS)
                self._report_lag(messages)
            except Exception as error:  # connection trouble: nats-py reconnects by itself
                log.warning("pull failed", consumer=self.spec.durable, error=repr(error))
                await asyncio.sleep(self._retry_delay)
                continue
            for message in messages:
                await self._slots.acquire()
                task = asyncio.create_task(self._handle(message))
                self._running.add(task)
                task.add_done_callback(self._running.discard)

    @staticmethod
    async def _fetch(
        subscription: JetStreamContext.PullSubscription, batch: int, wait: float
    ) -> list[Msg]:
        """Up to `batch` messages; [] when none came within `wait` seconds.

        nats-py's fetch of a batch, when nothing is waiting, holds what arrives until the
        batch is full or `wait` is over: a timer firing alone would wait up to `wait`. So
        the worker waits for one message (returned at once), then scoops up what else is
        already there with a short wait.
        """
        try:
            return list(await subscription.fetch(batch, timeout=wait))
        except (NatsTimeoutError, TimeoutError):
            return []

    def _report_lag(self, messages: list[Msg]) -> None:
        """The consumer's lag: what the last message says is still pending after it (an
        empty fetch: nothing is)."""
        CONSUMER_PENDING.labels(self.spec.durable).set(pending_after(messages) or 0)

    def _free_slots(self) -> int:
        return self._concurrency - len(self._running)

    async def _handle(self, message: Msg) -> None:
        keep_alive = asyncio.create_task(self._in_progress(message))
        try:
            await self._handler(message)
        except Exception as error:
            log.warning(
                "message handler failed; will be redelivered",
                consumer=self.spec.durable,
                subject=message.subject,
                error=f"{type(error).__name__}: {error}",
            )
            HANDLED.labels(self.spec.durable, "retried").inc()
            with contextlib.suppress(Exception):
                await message.nak(delay=self._retry_delay)
        else:
            HANDLED.labels(self.spec.durable, "acked").inc()
            with contextlib.suppress(Exception):
                await message.ack()
        finally:
            keep_alive.cancel()
            self._slots.release()

    async def _in_progress(self, message: Msg) -> None:
        """While a handler works, tell JetStream every half `ack_wait` that the message
        is in hand, so it is not handed to another replica meanwhile (a bot searching,
        a queue of work behind a slow call) — up to `HOLD_LIMIT` times: a handler that
        hangs longer lets it go. A killed replica stops telling, and the message moves on
        after one `ack_wait`."""
        for _ in range(HOLD_LIMIT):
            await asyncio.sleep(self.spec.ack_wait / 2)
            with contextlib.suppress(Exception):
                await message.in_progress()

    async def stop(self, grace: float = STOP_GRACE) -> None:
        """Stop pulling and give the handlers in flight `grace` seconds to finish; the
        rest are cancelled. What is not acked is redelivered, to this or another replica."""
        self._stopping.set()
        if self._task is not None:
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
        if self._running:
            _, late = await asyncio.wait(set(self._running), timeout=grace)
            for task in late:
                task.cancel()
            await asyncio.gather(*self._running, return_exceptions=True)
        await self._unsubscribe()

    async def _unsubscribe(self) -> None:
        """Leave the pull subscription: a message that reached its queue after the last
        fetch would make the connection's drain wait for it (nats-py joins the queue,
        which nobody reads any more) until the drain timed out — the service's whole
        shutdown grace. Unacked, such a message is redelivered anyway."""
        subscription, self._subscription = self._subscription, None
        if subscription is not None:
            with contextlib.suppress(Exception):  # the connection is already gone
                await subscription.unsubscribe()


async def stop_workers(workers: Iterable[MessageWorker]) -> None:
    """Stop several workers at once. Each waits for its pull's fetch to return (up to its
    `max_wait`, a second) before leaving its subscription; one after the other, a
    service with three workers took three seconds to stop (issue 23, defect 8)."""
    await asyncio.gather(*(worker.stop() for worker in workers))
