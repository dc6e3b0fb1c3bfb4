"""The matchmaking service assembled: its own event store (lobby and rating streams, in
a database of its own) and the outbox relay that publishes them, NATS (public table
events, rating events), the table client as the service `matchmaking`, the gRPC server.

`python -m kozyr.matchmaking` runs one; tests start the same code as a process. Every
replica is alike and holds nothing of its own: the lobby is folded from its stream at
start and followed every tick; each replica looks for matches every tick, and the
event store's optimistic concurrency lets only one decision on the same lobby version
win (docs/matchmaking.md, "Safety with replicas and crashes").
"""

from __future__ import annotations

import asyncio
import contextlib
from datetime import timedelta
from typing import Any

import structlog
from nats.aio.client import Client as NatsClient
from nats.aio.msg import Msg
from nats.js.api import DeliverPolicy

from kozyr.api.matchmaking.v1 import matchmaking_service_pb2, matchmaking_service_pb2_grpc
from kozyr.bus.codec import MalformedEventMessage, decode_event
from kozyr.bus.connection import ConnectionState, connect_when_reachable
from kozyr.bus.consumers import DurableConsumer
from kozyr.bus.service_relay import ServiceRelay
from kozyr.bus.streams import (
    MATCHMAKING_CATEGORIES,
    EventStreamSpec,
    ensure_stream,
    jetstream_name,
)
from kozyr.bus.subjects import PUBLIC_CHANNEL, category_filter
from kozyr.bus.work import MessageWorker, stop_workers
from kozyr.client.caller import ServiceCaller
from kozyr.eventstore import PostgresEventStore
from kozyr.eventstore.durability import check_commit_durability
from kozyr.eventstore.readiness import until_migrated
from kozyr.games.catalogue import registered
from kozyr.matchmaking import metrics
from kozyr.matchmaking.book import LobbyBook
from kozyr.matchmaking.decisions import Event, table_ended, table_noticed
from kozyr.matchmaking.events import MatchDecided
from kozyr.matchmaking.leavers import SeatFacts, leavers_of
from kozyr.matchmaking.lobby import Lobby, Match
from kozyr.matchmaking.matching import find_matches
from kozyr.matchmaking.placing import Placer
from kozyr.matchmaking.ratebook import CATEGORY, Leaderboard, RatingBook
from kozyr.matchmaking.ratings import SeatOutcome
from kozyr.matchmaking.servicer import MatchmakingServicer
from kozyr.matchmaking.settings import MatchmakingSettings
from kozyr.matchmaking.timing import Clock, FileOffsetClock, SystemClock
from kozyr.runtime import AuthPolicy, GrpcServer, ServiceSpec, service_full_name
from kozyr.runtime.auth import Role
from kozyr.tablewire.public import published_event

SERVICE_NAME = service_full_name(matchmaking_service_pb2, "MatchmakingService")
SERVICE_SUBJECT = "matchmaking"
"""The `sub` of matchmaking's service tokens: the table service derives a table's id
from it and the request id, so every replica must use the same one."""
PLAYER_ONLY = frozenset({Role.PLAYER})
PLAYER_METHODS = (
    "EnterQueue", "CancelTicket", "CreateParty", "JoinParty", "LeaveParty", "GetParty",
    "CreatePrivateTable",
)  # fmt: skip
ADMIN_ONLY = frozenset({Role.ADMIN})
AUTH_POLICY = AuthPolicy(
    method_roles={
        **{f"/{SERVICE_NAME}/{method}": PLAYER_ONLY for method in PLAYER_METHODS},
        f"/{SERVICE_NAME}/LiftLeaverPenalty": ADMIN_ONLY,
    }
)
REQUIRED_SETTINGS = ("database_url", "nats_url", "jwt_key", "table_target")
ACK_WAIT = 10.0
RATING_CONCURRENCY = 8
"""Finished tables rated at once by one replica (bench: ~1.6x one at a time). Two tables
sharing a player rarely finish together; when they do, one append conflicts and that
table is redelivered and rated again from the newer skills."""
log = structlog.get_logger("kozyr.matchmaking")


def public_filter(root: str, event: str) -> str:
    """One kind of public event ("TableOpened", "TableFinished") of every table."""
    return f"{root}.{PUBLIC_CHANNEL}.table.*.{event}"


class MatchmakingService:
    """One running replica. `await start()`, then `await stop()` (or run until signal)."""

    def __init__(
        self,
        settings: MatchmakingSettings,
        *,
        clock: Clock | None = None,
        pool_size: int = 10,
    ) -> None:
        assert settings.database_url is not None
        assert settings.table_target is not None
        self.settings = settings
        self.root = settings.subject_root
        self.clock = clock or (
            FileOffsetClock(settings.matchmaking_clock_offset_file)
            if settings.matchmaking_clock_offset_file
            else SystemClock(timedelta(0))
        )
        self.store = PostgresEventStore(
            settings.database_url, max_pool_size=pool_size, **settings.database_timeouts
        )
        self.relay = ServiceRelay(
            self.store,
            settings.nats_servers,
            categories=MATCHMAKING_CATEGORIES,
            subject_root=self.root,
            service="matchmaking",
            stream_replicas=settings.stream_replicas,
        )
        self.book = LobbyBook(self.store)
        self.leaderboard = Leaderboard()
        self.ratings = RatingBook(self.store, self.leaderboard)
        self.tables = ServiceCaller(
            settings.table_target, settings.token_minter(), settings.jwt_ttl_seconds,
            SERVICE_SUBJECT,
        )  # fmt: skip
        self.placer = Placer(
            self.book, self.tables, self.clock,
            complete_after=settings.matchmaking_complete_after_seconds,
            delay=settings.matchmaking_create_delay_seconds,
            seed_window=settings.matchmaking_seed_window_seconds,
        )  # fmt: skip
        self.server = GrpcServer(
            settings,
            [ServiceSpec(SERVICE_NAME, self._register)],
            auth=AUTH_POLICY,
            store_probe=self.store.check_writable,
        )
        self.servicer = MatchmakingServicer(
            self.book, self.ratings, self.placer, self.clock, settings.rules,
            self.server.shutting_down,
            place_seconds=settings.matchmaking_private_table_wait_seconds,
        )  # fmt: skip
        self._nc: NatsClient | None = None
        self._workers: list[MessageWorker] = []
        self._ticker: asyncio.Task[None] | None = None
        self._ratings_sub: Any = None

    def _register(self, grpc_server: Any) -> None:
        matchmaking_service_pb2_grpc.add_MatchmakingServiceServicer_to_server(
            self.servicer, grpc_server
        )

    async def start(self) -> int:
        """Fold the lobby, join NATS, start matching; serve. Returns the gRPC port.

        Waits for its database's migrations first: the lobby is folded before anything
        is served, so there is nothing to answer "not serving" with meanwhile."""
        assert self.settings.database_url is not None
        await until_migrated(self.settings.database_url)
        await self.store.open()
        await check_commit_durability(
            self.store, allow_async_commit=self.settings.allow_async_commit
        )
        await self.book.load()
        self.relay.start()
        nc = self._nc = await connect_when_reachable(
            self.settings.nats_servers,
            name=f"kozyr-matchmaking-{self.root}",
            state=ConnectionState(log, "NATS"),
        )
        js = nc.jetstream()
        replicas = self.settings.stream_replicas
        await ensure_stream(js, EventStreamSpec(PUBLIC_CHANNEL, self.root, replicas=replicas))
        await ensure_stream(js, EventStreamSpec(CATEGORY, self.root, replicas=replicas))
        self._ratings_sub = await js.subscribe(
            category_filter(CATEGORY, self.root),
            cb=self._rating_event,
            ordered_consumer=True,
            deliver_policy=DeliverPolicy.ALL,
        )
        self._workers = [
            MessageWorker(
                js, self._public_consumer("TableOpened"), self.table_opened, concurrency=8
            ),
            MessageWorker(
                js,
                self._public_consumer("TableFinished"),
                self.table_finished,
                concurrency=RATING_CONCURRENCY,
            ),
        ]
        for worker in self._workers:
            await worker.start()
        self._ticker = asyncio.create_task(self._tick_forever(), name="matchmaking-ticks")
        self.server.add_shutdown_hook(self._close)
        self.server.add_shutdown_hook(self.relay.stop)  # hooks run newest first
        self.server.add_shutdown_hook(self._stop_work, before_stop=True)
        return await self.server.start()

    def _public_consumer(self, event: str) -> DurableConsumer:
        """`matchmaking-opened`, `matchmaking-finished`: one durable consumer per event
        kind (one filter each, as NATS before 2.10 allows), shared by the replicas."""
        return DurableConsumer(
            stream=jetstream_name(PUBLIC_CHANNEL, self.root),
            durable=f"matchmaking-{event.removeprefix('Table').lower()}",
            filter_subjects=(public_filter(self.root, event),),
            ack_wait=ACK_WAIT,
            max_ack_pending=1_000,
        )

    # ------------------------------------------------------------------ matching

    async def _tick_forever(self) -> None:
        while True:
            try:
                await self.tick()
            except asyncio.CancelledError:
                raise
            except Exception as error:  # the next tick tries again
                log.warning("matchmaking tick failed", error=repr(error))
            await asyncio.sleep(self.settings.matchmaking_tick_seconds)

    async def tick(self) -> list[Match]:
        """Decide what the queue allows now, place it; place overdue matches."""
        now = self.clock.now()
        rules = self.settings.rules

        def decide(lobby: Lobby) -> list[Event]:
            return find_matches(lobby, now, rules)

        events = await self.book.decide(
            f"tick:{self.book.lobby.version}:{now.isoformat()}", decide, fresh=True
        )
        decided = [self.book.lobby.matches[e.match] for e in events if isinstance(e, MatchDecided)]
        for match in decided:
            log.info("match decided", match_id=match.match_id, tickets=list(match.tickets))
            computers = any(seat.player_id is None for seat in match.seats)
            metrics.MATCHES.labels(match.game, str(computers).lower()).inc()
            for ticket_id in match.tickets:
                ticket = self.book.lobby.tickets.get(ticket_id)
                if ticket is not None:
                    waited = (match.decided_at - ticket.opened_at).total_seconds()
                    metrics.WAIT.labels(match.game).observe(waited)
            self.placer.place_soon(match)
        metrics.SEARCHING.set(sum(1 for t in self.book.lobby.tickets.values() if not t.match_id))
        self.placer.place_overdue()
        await self.book.save_snapshot()
        return decided

    # ------------------------------------------------------------------ NATS

    async def table_opened(self, message: Msg) -> None:
        """Count the players of any new table as seated (ALREADY_SEATED, ListMyTables),
        whoever opened it: an operator's table as much as one of ours."""
        event = published_event(message.data, message.subject, "table_opened")
        if event is None or event.table_opened.game_id not in _game_ids():
            return
        opened = event.table_opened
        seats = [(s.player_id, s.seat) for s in opened.seats if s.player_id]
        table_id, now = event.table_id, self.clock.now()
        await self.book.decide(
            f"noticed:{table_id}",
            lambda lobby: table_noticed(lobby, table_id, opened.game_id, seats, now),
        )

    async def table_finished(self, message: Msg) -> None:
        """Rate a finished table (each table once, its leavers as last), free its players'
        seats and judge its leavers (docs/leavers.md): one lobby decision, also once."""
        event = published_event(message.data, message.subject, "table_finished")
        if event is None:
            return
        finished = event.table_finished
        seats = [SeatOutcome(r.seat, r.player_id, r.place, r.score) for r in finished.results]
        facts = tuple(
            SeatFacts(r.player_id, r.turns, r.covered_turns, r.turns_since_cover, r.covered_at_end)
            for r in finished.results
        )
        gone = leavers_of(facts)
        changed = await self.ratings.record(event.table_id, finished.game_id, seats, gone)
        metrics.RATED.inc(changed)
        table_id, now = event.table_id, self.clock.now()
        await self.book.decide(
            f"ended:{table_id}",
            lambda lobby: table_ended(lobby, table_id, facts, now),
        )
        log.info("table rated", table_id=table_id, ratings_changed=changed, abandoned=sorted(gone))

    async def _rating_event(self, message: Msg) -> None:
        try:
            self.leaderboard.offer_event(decode_event(message.data))
        except MalformedEventMessage:
            log.error("not a rating event: skipped", subject=message.subject)

    # ------------------------------------------------------------------ stopping

    async def _stop_work(self) -> None:
        if self._ticker is not None:
            self._ticker.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._ticker
        await stop_workers(self._workers)
        await self.placer.stop()

    async def _close(self) -> None:
        if self._ratings_sub is not None:
            with contextlib.suppress(Exception):
                await self._ratings_sub.unsubscribe()
        await self.tables.close()
        if self._nc is not None:
            await self._nc.drain()
        await self.store.close()

    async def stop(self, grace: float | None = None) -> None:
        await self.server.stop(grace)

    async def run_until_signal(self) -> None:
        await self.server.run_until_signal()


def _game_ids() -> set[str]:
    """The games this replica knows (their tables are the ones it follows)."""
    return {plugin.id for plugin in registered()}
