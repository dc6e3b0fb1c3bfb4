"""Timers pending across a NATS fault: each must fire exactly once, none lost with a node.

The probe sets timers in the clock's own schedule stream (R3 on `cluster_stack`), due
one after the other from before the fault until after it, of
a kind the clock ignores ("probe"), and reads their firings with a durable consumer of
its own. A timer lost with its node never fires; one doubled fires twice (two stream
messages for one key).
"""

from __future__ import annotations

import asyncio
import contextlib
from collections import defaultdict
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta

import nats
from nats.aio.client import Client as NatsClient
from nats.js.api import ConsumerConfig

from kozyr.bus.connection import server_list
from kozyr.bus.schedules import MessageScheduler, parse_fire_subject
from kozyr.bus.schedules import schedule_stream_name as timers_stream
from kozyr.bus.streams import jetstream_name
from kozyr.client import ClockClient
from kozyr.runtime import Role
from tests.chaos.stack import Stack
from tests.chaos.template import SUBJECT_ROOT
from tests.support.tables import token

KIND = "probe"
FIRE_WAIT_SECONDS = 30.0


@dataclass
class TimerProbe:
    """Timers set through the fault and what fired of them."""

    nc: NatsClient
    keys: list[str] = field(default_factory=list)
    fired: dict[str, set[int]] = field(default_factory=lambda: defaultdict(set))
    errors: list[str] = field(default_factory=list)
    """What the reading met (a failover's errors; the last ones explain a lost timer)."""

    async def set_timers(self, count: int, every: timedelta) -> None:
        """`count` timers, the first due in `every`, the next `every` later, and so on."""
        scheduler = MessageScheduler(self.nc.jetstream(), SUBJECT_ROOT)
        now = datetime.now(UTC)
        for number in range(count):
            key = f"t{len(self.keys)}"
            await scheduler.schedule(KIND, key, now + every * (number + 1), key.encode())
            self.keys.append(key)

    async def read(self, stop: asyncio.Event) -> None:
        """Record every firing (its stream sequence, per key) until `stop`; a failover's
        errors only delay the reading."""
        subscription = None
        while not stop.is_set():
            try:
                if subscription is None:
                    subscription = await self.nc.jetstream().pull_subscribe(
                        f"{SUBJECT_ROOT}.clock.fire.{KIND}.*",
                        durable="chaos-probe",
                        stream=timers_stream(SUBJECT_ROOT),
                        config=ConsumerConfig(ack_wait=30),
                    )
                for message in await subscription.fetch(50, timeout=0.5):
                    _, key = parse_fire_subject(message.subject, SUBJECT_ROOT)
                    self.fired[key].add(message.metadata.sequence.stream)
                    await message.ack()
            except Exception as error:  # a timeout, or a stream electing its leader
                if not isinstance(error, TimeoutError):
                    self.errors.append(repr(error))
                await asyncio.sleep(0.2)

    async def until_all_fired(self) -> None:
        try:
            async with asyncio.timeout(FIRE_WAIT_SECONDS):
                while True:
                    if not set(self.keys) - self.fired.keys():
                        return
                    await asyncio.sleep(0.1)
        except TimeoutError:
            self.assert_each_fired_once()
            raise

    def assert_each_fired_once(self) -> None:
        lost = sorted(set(self.keys) - self.fired.keys())
        doubled = {k: sorted(s) for k, s in self.fired.items() if len(s) > 1}
        assert not lost, (
            f"{len(lost)} of {len(self.keys)} timers never fired: {lost}; the reader met "
            f"{self.errors[-3:]}"
        )
        assert not doubled, f"timers fired twice: {doubled}"


@contextlib.asynccontextmanager
async def timer_probe(stack: Stack) -> AsyncIterator[TimerProbe]:
    """A probe reading firings in the background while the block runs (its client
    reconnects to whichever NATS server lives)."""
    nc = await nats.connect(
        servers=server_list(stack.nats_url),
        connect_timeout=2,
        reconnect_time_wait=0.2,
        max_reconnect_attempts=-1,
    )
    probe = TimerProbe(nc)
    stop = asyncio.Event()
    reader = asyncio.create_task(probe.read(stop))
    try:
        yield probe
    finally:
        stop.set()
        await reader
        await nc.close()


async def assert_presence_works(stack: Stack, player: str) -> None:
    """A heartbeat to the clock brings a player online, and GetPresence says so."""
    [clock] = stack.clocks
    async with (
        ClockClient(clock.target, token(player)) as me,
        ClockClient(clock.target, token("chaos-watcher", Role.SERVICE)) as watcher,
    ):
        await me.heartbeat()
        assert await watcher.presence([player]) == {player: True}


CONSUMERS = (
    ("public", "clock-public"),
    ("clock", "clock-timers"),
    ("public", "bots-public"),
    ("public", "matchmaking-opened"),
    ("public", "matchmaking-finished"),
)
"""(stream category, durable) of the consumers every fault must leave reading: the
clock's public table events (turn deadlines) and fired timers, the bots' public events,
matchmaking's TableOpened and TableFinished (seated players, ratings)."""


async def until_consumers_caught_up(probe: TimerProbe, limit: float = FIRE_WAIT_SECONDS) -> None:
    """Wait until the clock's, the bots' and matchmaking's consumers have nothing pending
    or unacknowledged: they resumed after the fault and handled everything (their
    failover included)."""
    js = probe.nc.jetstream()
    async with asyncio.timeout(limit):
        for category, durable in CONSUMERS:
            stream = jetstream_name(category, SUBJECT_ROOT)
            while True:
                with contextlib.suppress(Exception):  # the consumer electing its leader
                    info = await js.consumer_info(stream, durable)
                    if not info.num_pending and not info.num_ack_pending:
                        break
                await asyncio.sleep(0.2)
