"""`OutboxRelay`: publishes the outbox to JetStream, then deletes what was acknowledged.

Guarantees (details and failure cases in docs/eventstore.md, "Relay"):

- Nothing lost: a row is deleted only after JetStream acknowledged (stored) its event.
- Effectively once: publishing is at-least-once (a crash between the ack and the
  delete republishes), and JetStream drops the repeat because `Nats-Msg-Id` is the
  event id (within the streams' duplicate window).
- Per-stream order: entries are read in outbox order (per stream that is position
  order, each append's messages after its events) and the entries of one stream
  are published one at a time, each after the previous one's ack. Different
  streams are published concurrently (every stream's head in flight at once, the
  acks gathered on one reply subscription: `_Acks`). Not several of one stream at
  once: a publish lost in a reconnect or a leader change while its successor is
  stored would be a reorder (docs/eventstore.md, "Why not several in flight").
- Replicas: any number may run; the event store's outbox reader elects one leader and
  the others wait. On PostgreSQL that is a session-level advisory lock on the reader's
  own connection, so a leader that loses its connection loses its leadership at the
  same moment, and every read and delete it makes goes through that connection. The
  relay never touches the store's tables: it asks the store (`EventStore.outbox_reader`)
  and names each entry's subject itself (`kozyr.bus.subjects.entry_subject`).
  Even two overlapping publishers could not reorder a stream: each publishes a
  stream's next entry only after the previous one is stored, and duplicates are
  dropped by the server.
- Entries are events and the messages queued with them (the public table events):
  both are published in outbox order, messages with `Nats-Msg-Id` = their message id.
- Reads again at once only after a full batch or a wake-up since its read: a short batch
  was everything queued before it, and whatever is queued after it wakes the relay (one
  read a move, not two, when moves come one at a time).
- Wakes when the store says something was queued: the store calls every reader of its
  own process after each append, and a relay that does not lead passes that on to the
  leader (`OutboxReader.wake_leader`: a NOTIFY outside any append, once for however many
  appends it heard meanwhile). It polls every `idle_interval` anyway (a wake-up lost
  while the relay was reconnecting, or an append by a process without a relay, is not
  lost work, only late).
- Survives PostgreSQL and NATS outages: every failure ends the current session and a
  new one starts after an exponential backoff; `stop()` ends `run()` gracefully.
"""

from __future__ import annotations

import asyncio
import random
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import nats
import orjson
import structlog
from nats.aio.client import Client as NatsClient
from nats.aio.msg import Msg
from nats.aio.subscription import Subscription
from nats.js import JetStreamContext
from nats.js.errors import APIError, NoStreamResponseError

from kozyr.bus.codec import encode_entry, entry_headers
from kozyr.bus.connection import ConnectionState, server_list
from kozyr.bus.streams import DEFAULT_DUPLICATE_WINDOW, ensure_event_streams
from kozyr.bus.subjects import DEFAULT_ROOT, check_root, entry_subject
from kozyr.eventstore.model import EventStore, OutboxEntry, OutboxReader

log = structlog.get_logger(__name__)

RELAY_LOCK_KEY = 0x6B6F7A79_726C79  # "kozyr" "rly": the leader's advisory lock id


@dataclass(frozen=True, slots=True)
class Backoff:
    """Exponential backoff with full jitter, capped (seconds)."""

    initial: float = 0.05
    maximum: float = 5.0
    factor: float = 2.0

    def delay(self, failures: int) -> float:
        ceiling = min(self.maximum, self.initial * self.factor ** max(failures - 1, 0))
        return random.uniform(ceiling / 2, ceiling)


@dataclass(slots=True)
class RelayStats:
    """Counters for logs and metrics (monotonic since the relay was built)."""

    published: int = 0
    duplicates: int = 0
    """Publications JetStream acknowledged as repeats (dropped by `Nats-Msg-Id`)."""
    batches: int = 0
    reads: int = 0
    """Reads of the outbox, empty ones included (one per batch when idle between moves)."""
    sessions: int = 0
    failures: int = 0
    leader: bool = False
    last_error: str | None = field(default=None)


@dataclass(frozen=True, slots=True)
class _Pending:
    entry: OutboxEntry
    subject: str


class _Acks:
    """Publishes to JetStream with the acks gathered on one reply subscription.

    `JetStreamContext.publish` is a request: a future, an `asyncio.wait_for` and the
    JSON module for every message (~70 µs of CPU each here). A relay session instead
    subscribes once to `<inbox>.*`, gives each publish the reply subject
    `<inbox>.<n>` and a future that the ack resolves (orjson): ~22 µs a message. The
    guarantees are the request's: a publish counts as stored only once its ack says
    so, an error ack or "no responders" is its failure, and no ack within the
    timeout is a failure too (`_publish_stream` bounds each wait).
    """

    def __init__(self, client: NatsClient) -> None:
        self._client = client
        self._prefix = client.new_inbox()
        self._waiting: dict[str, asyncio.Future[bool]] = {}
        self._count = 0
        self._subscription: Subscription | None = None

    async def __aenter__(self) -> _Acks:
        self._subscription = await self._client.subscribe(f"{self._prefix}.*", cb=self._heard)
        return self

    async def __aexit__(self, *_: object) -> None:
        subscription, self._subscription = self._subscription, None
        if subscription is not None and not self._client.is_closed:
            await subscription.unsubscribe()

    async def publish(self, subject: str, payload: bytes, headers: dict[str, str]) -> bool:
        """Publish and wait for the ack: True when JetStream reports a duplicate."""
        self._count += 1
        reply = f"{self._prefix}.{self._count}"
        acked: asyncio.Future[bool] = asyncio.get_running_loop().create_future()
        self._waiting[reply] = acked
        try:
            await self._client.publish(subject, payload, reply=reply, headers=headers)
            return await acked
        finally:
            self._waiting.pop(reply, None)

    async def _heard(self, message: Msg) -> None:
        acked = self._waiting.get(message.subject)
        if acked is None or acked.done():
            return  # an ack that came after its publish gave up
        if message.headers and message.headers.get("Status") == "503":
            acked.set_exception(NoStreamResponseError())
            return
        try:
            answer = orjson.loads(message.data)
        except orjson.JSONDecodeError as error:
            acked.set_exception(error)
            return
        if "error" in answer:
            acked.set_exception(APIError.from_error(answer["error"]))
        else:
            acked.set_result(bool(answer.get("duplicate", False)))


class _PublishFailed(Exception):
    """Some events could not be published; the acknowledged ones were deleted."""


class OutboxRelay:
    """Moves outbox rows to JetStream. `await relay.run()` until `relay.stop()`.

    `categories` are the stream categories of the store's outbox, whose JetStream
    streams the relay makes and publishes to: the owning service's own
    (`kozyr.bus.streams.TABLE_CATEGORIES`, `MATCHMAKING_CATEGORIES`), as each service
    has its database, its relay and its NATS user.
    """

    def __init__(
        self,
        store: EventStore,
        nats_servers: str | Sequence[str],
        *,
        categories: Sequence[str],
        subject_root: str = DEFAULT_ROOT,
        duplicate_window: float = DEFAULT_DUPLICATE_WINDOW,
        stream_replicas: int = 1,
        stream_max_age: float | None = None,
        batch_size: int = 256,
        idle_interval: float = 1.0,
        publish_timeout: float = 5.0,
        backoff: Backoff | None = None,
        lock_key: int = RELAY_LOCK_KEY,
        application_name: str = "kozyr-outbox-relay",
        connect_timeout: float = 5.0,
        stop_grace: float = 10.0,
        nats_options: dict[str, Any] | None = None,
    ) -> None:
        self._store = store
        self._servers = server_list(nats_servers)
        self._root = check_root(subject_root)
        self._categories = tuple(categories)
        self._duplicate_window = duplicate_window
        self._stream_replicas = stream_replicas
        self._stream_max_age = stream_max_age
        self._batch_size = batch_size
        self._idle_interval = idle_interval
        self._publish_timeout = publish_timeout
        self._backoff = backoff or Backoff()
        self._lock_key = lock_key
        self._application_name = application_name
        self._connect_timeout = connect_timeout
        self._stop_grace = stop_grace
        self._nats_options = nats_options or {}
        self._stopping = asyncio.Event()
        self._wake = asyncio.Event()
        self._nats: NatsClient | None = None
        self.stats = RelayStats()
        self._state = ConnectionState(log, "outbox relay: NATS or PostgreSQL")

    # -- lifecycle -------------------------------------------------------------------

    def stop(self) -> None:
        """Ask `run()` to return after the batch in flight (published rows get deleted)."""
        self._stopping.set()
        self._wake.set()

    @property
    def stopping(self) -> bool:
        return self._stopping.is_set()

    async def run(self) -> None:
        """Relay until `stop()`: sessions separated by backoff whenever something fails."""
        failures = 0
        try:
            while not self._stopping.is_set():
                try:
                    await self._session_until_stopped()
                    failures = 0
                except Exception as error:  # every failure means: reconnect later
                    failures += 1
                    self.stats.failures += 1
                    self.stats.last_error = f"{type(error).__name__}: {error}"
                    self._state.failed(self.stats.last_error)
                    await self._pause(self._backoff.delay(failures))
        finally:
            self.stats.leader = False
            await self._close_nats()

    async def _session_until_stopped(self) -> None:
        """Run a session; after `stop()`, give it `stop_grace` seconds to finish its batch."""
        session = asyncio.create_task(self._session())
        stopped = asyncio.create_task(self._stopping.wait())
        try:
            await asyncio.wait({session, stopped}, return_when=asyncio.FIRST_COMPLETED)
            if not session.done():
                await asyncio.wait({session}, timeout=self._stop_grace)
        finally:
            stopped.cancel()
            if not session.done():
                session.cancel()
                await asyncio.gather(session, return_exceptions=True)
        if not session.cancelled():
            session.result()

    async def _pause(self, seconds: float) -> bool:
        """Sleep, but wake up early for `stop()` or queued entries; True when woken."""
        try:
            await asyncio.wait_for(self._wake.wait(), timeout=seconds)
        except TimeoutError:
            return False
        finally:
            self._wake.clear()
        return True

    # -- one session: one database connection, leadership, batches --------------------

    async def _session(self) -> None:
        js = await self._jetstream()
        assert self._nats is not None  # connected by `_jetstream`
        await ensure_event_streams(
            js,
            self._root,
            self._categories,
            duplicate_window=self._duplicate_window,
            max_age=self._stream_max_age,
            replicas=self._stream_replicas,
        )
        reader = self._store.outbox_reader(
            lock_key=self._lock_key, on_queued=self._notified, name=self._application_name
        )
        async with reader as opened, _Acks(self._nats) as acks:
            self.stats.sessions += 1
            self._state.succeeded()
            try:
                await self._lead(opened, acks)
            finally:
                self.stats.leader = False

    async def _lead(self, reader: OutboxReader, acks: _Acks) -> None:
        while not await reader.lead():
            if self._stopping.is_set():
                return
            if await self._pause(self._idle_interval) and not self._stopping.is_set():
                await reader.wake_leader()  # this process queued entries; another leads
        self.stats.leader = True
        log.info("outbox relay is the leader")
        while not self._stopping.is_set():
            if await self._relay_batch(reader, acks) < self._batch_size:
                await self._pause(self._idle_interval)  # at once if woken since the read

    def _notified(self) -> None:
        self._wake.set()

    async def _relay_batch(self, reader: OutboxReader, acks: _Acks) -> int:
        self.stats.reads += 1
        entries = await reader.pending(self._batch_size)
        if not entries:
            return 0
        pending = [_Pending(entry, entry_subject(entry, self._root)) for entry in entries]
        acknowledged, failure = await self._publish(acks, pending)
        if acknowledged:
            await reader.remove(acknowledged)
        self.stats.batches += 1
        self.stats.published += len(acknowledged)
        if failure is not None:
            subject, error = failure
            missing = len(pending) - len(acknowledged)
            raise _PublishFailed(
                f"{missing} events not published; first failure on {subject}: "
                f"{type(error).__name__}: {error}"
            ) from error
        return len(acknowledged)

    # -- publishing ------------------------------------------------------------------

    async def _publish(
        self, acks: _Acks, pending: Sequence[_Pending]
    ) -> tuple[list[int], tuple[str, BaseException] | None]:
        """Publish per stream in order, streams concurrently: the head of every stream
        of the batch is in flight at once, each stream's next entry follows its
        predecessor's ack.

        Returns the acknowledged outbox ids and the first failure (subject, error).
        """
        by_stream: dict[str, list[_Pending]] = {}
        for item in pending:
            by_stream.setdefault(item.entry.stream, []).append(item)
        outcomes = await asyncio.gather(
            *(self._publish_stream(acks, items) for items in by_stream.values())
        )
        acknowledged = sorted(position for done, _ in outcomes for position in done)
        failures = [failure for _, failure in outcomes if failure is not None]
        return acknowledged, failures[0] if failures else None

    async def _publish_stream(
        self, acks: _Acks, items: Sequence[_Pending]
    ) -> tuple[list[int], tuple[str, BaseException] | None]:
        done: list[int] = []
        loop = asyncio.get_running_loop()
        item = items[0]
        try:
            # one timeout for the stream, moved on at each publish: `publish_timeout` an ack
            async with asyncio.timeout(None) as deadline:
                for item in items:
                    deadline.reschedule(loop.time() + self._publish_timeout)
                    try:
                        duplicate = await acks.publish(
                            item.subject, encode_entry(item.entry), entry_headers(item.entry)
                        )
                    except Exception as error:  # stop this stream here: order before progress
                        return done, (item.subject, error)
                    done.append(item.entry.id)
                    if duplicate:
                        self.stats.duplicates += 1
        except TimeoutError as error:  # no ack in time: the same stop
            return done, (item.subject, error)
        return done, None

    async def _jetstream(self) -> JetStreamContext:
        if self._nats is None or self._nats.is_closed:
            options: dict[str, Any] = {
                "name": self._application_name,
                "allow_reconnect": True,  # once connected, reconnect in the background
                "max_reconnect_attempts": -1,
                "reconnect_time_wait": 0.5,
                "connect_timeout": 2,
                **self._state.nats_callbacks(),
                **self._nats_options,
            }
            # With unlimited reconnects nats.connect waits forever for a first server:
            # bound it, and let the session backoff retry.
            self._nats = await asyncio.wait_for(
                nats.connect(self._servers, **options), timeout=self._connect_timeout
            )
        return self._nats.jetstream(timeout=self._publish_timeout)

    async def _close_nats(self) -> None:
        client, self._nats = self._nats, None
        if client is not None and not client.is_closed:
            await client.close()


async def outbox_backlog(store: EventStore) -> tuple[int, float | None]:
    """(entries waiting, age in seconds of the oldest): the relay lag, for metrics and ops."""
    backlog = await store.outbox_backlog()
    return backlog.entries, backlog.oldest_age
