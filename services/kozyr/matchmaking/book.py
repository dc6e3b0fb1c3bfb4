"""The lobby of one replica, kept caught up with the log, and every change an append at
the version it was decided on.

`decide(request_id, decision)` is the one way to change the lobby: catch up, run the
pure decision, append its events at the lobby's version. When another replica appended
first the store answers `ConcurrencyConflict`: catch up and decide again on the newer
lobby (where the tickets may be matched already, or the player queued). Within this
process a lock serialises decisions, so conflicts come only from other replicas.
Watchers (WatchTicket) wait on `changed`, set after every catch-up that found news.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import inspect
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from kozyr.eventstore import (
    Append,
    Appended,
    ConcurrencyConflict,
    EventStore,
    NewEvent,
    Settled,
    decide_and_append,
)
from kozyr.matchmaking import events as lobby_events
from kozyr.matchmaking import lobby as lobby_module
from kozyr.matchmaking import metrics, texts
from kozyr.matchmaking.decisions import Event
from kozyr.matchmaking.lobby import STREAM, Lobby, decode, encode
from kozyr.runtime.errors import KozyrError

ATTEMPTS = 20
"""Decisions retried on conflicts before answering UNAVAILABLE (LOBBY_BUSY)."""
SNAPSHOT_EVERY = 1_000
"""Events between two snapshots of the lobby (0: none)."""


def snapshot_key() -> str:
    """Names the code that folds the lobby: a deployment that changes the fold ignores
    (then replaces) the snapshots of the old one."""
    source = b"".join(inspect.getsource(m).encode() for m in (lobby_module, lobby_events))
    return f"lobby-{hashlib.sha256(source).hexdigest()[:16]}"


A = TypeVar("A")

Decision = Callable[[Lobby], list[Event]]
AnsweringDecision = Callable[[Lobby], tuple[A, list[Event]]]
"""A decision that also answers its caller: (the answer, the events to append)."""


@dataclass(frozen=True, slots=True)
class Recorded(Generic[A]):
    """A decision as recorded: its answer and the events appended now ([] when none
    were: nothing to do, or a repeat of the request id)."""

    answer: A
    events: list[Event]


class LobbyBook:
    def __init__(self, store: EventStore, *, snapshot_every: int = SNAPSHOT_EVERY) -> None:
        self.store = store
        self.lobby = Lobby()
        self.key = snapshot_key()
        self._snapshot_every = snapshot_every
        self._snapshot_version = 0
        self._lock = asyncio.Lock()
        self._changed = asyncio.Event()
        self._news = False
        """A catch-up or an append changed the lobby since watchers were last woken."""
        self.conflicts = 0

    async def load(self) -> None:
        """At start: the latest usable snapshot (an optimisation only: the store hands
        one out only while the event it was taken at is unchanged), then the log after it."""
        snapshot = await self.store.read_snapshot(STREAM, self.key)
        if snapshot is not None:
            async with self._lock:
                if snapshot.version > self.lobby.version:
                    self.lobby = decode(dict(snapshot.data))
                    self._snapshot_version = snapshot.version
        await self.catch_up()

    async def save_snapshot(self) -> bool:
        """Keep the lobby as a snapshot when `snapshot_every` events passed since the last."""
        if not self._snapshot_every:
            return False
        if self.lobby.version - self._snapshot_version < self._snapshot_every:
            return False
        async with self._lock:
            version, data = self.lobby.version, encode(self.lobby)
        self._snapshot_version = version
        return await self.store.save_snapshot(STREAM, version, self.key, data)

    async def catch_up(self) -> bool:
        """Fold the events appended since our version (by anyone); True if there were."""
        async with self._lock:
            found = await self._catch_up()
        if found:
            self._news = False
            self._notify()
        return found

    async def _catch_up(self) -> bool:
        """Under the lock: only one coroutine folds at a time, each event exactly once.

        A stored event this code cannot read stops the fold (`UnknownLobbyEvent`)."""
        events = await self.store.read(STREAM, from_version=self.lobby.version)
        for event in events:
            if event.position == self.lobby.version + 1:
                self.lobby.apply(lobby_events.decode(event.type, dict(event.data)))
        if events:
            self._news = True
        return bool(events)

    def _conflicted(self, _: ConcurrencyConflict) -> None:
        self.conflicts += 1
        metrics.CONFLICTS.inc()

    def _fold_appended(self, appended: Appended[Recorded[Any]]) -> None:
        """Under the lock: the events just appended, folded (a repeat appends none)."""
        for event in appended.decision.value.events:
            self.lobby.apply(event)
        self._news = True

    def _notify(self) -> None:
        """Wake every watcher waiting now: each waits on the event current when it began,
        and a fresh one is set up for the next change — no lock to take (a Condition's
        lock, re-taken when a timed-out wait is cancelled, is one more thing to go wrong)."""
        changed, self._changed = self._changed, asyncio.Event()
        changed.set()

    async def wait_change(self, seconds: float) -> None:
        """Return after the next change of the lobby, or after `seconds`."""
        changed = self._changed
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(seconds):
                await changed.wait()

    async def decide(
        self,
        request_id: str,
        decision: Decision,
        *,
        fresh: bool = False,
        metadata: dict[str, Any] | None = None,
    ) -> list[Event]:
        """Append what `decision` decides on the lobby ([] when nothing); the events
        appended, or [] for a repeat of `request_id`.

        The first attempt decides on the lobby as this replica knows it, without
        reading the log first (`fresh` reads it first: the matcher's tick, which must
        see other replicas' tickets): if another replica appended since, the append
        is refused, and the decision is made again on the caught-up lobby — so a
        decision is only ever stored if it was made on the latest lobby.
        """
        recorded = await self._record(
            request_id, lambda lobby: (None, decision(lobby)), fresh=fresh, metadata=metadata
        )
        return recorded.events

    async def answer(self, request_id: str, decision: AnsweringDecision[A]) -> A:
        """As `decide`, for a decision that also answers its caller (the party joined,
        whether leaving disbanded it): the answer of the decision that was appended —
        made on the latest lobby, like its events."""
        return (await self._record(request_id, decision)).answer

    async def _record(
        self,
        request_id: str,
        decision: AnsweringDecision[A],
        *,
        fresh: bool = False,
        metadata: dict[str, Any] | None = None,
    ) -> Recorded[A]:
        async def latest() -> Lobby:
            await self._catch_up()
            return self.lobby

        def decide(lobby: Lobby) -> Append[Recorded[A]] | Settled[Recorded[A]]:
            answer, events = decision(lobby)
            if not events:
                return Settled(Recorded(answer, []))
            encoded = [NewEvent(*lobby_events.encode(e)) for e in events]
            return Append(lobby.version, encoded, Recorded(answer, events), metadata=metadata)

        try:
            decided = await decide_and_append(
                self.store,
                STREAM,
                decide,
                load=latest,
                known=None if fresh else self.lobby,
                request_id=request_id,
                command_fingerprint=request_id,
                attempts=ATTEMPTS,
                refusals=(KozyrError,),
                serialize=self._lock,
                on_conflict=self._conflicted,
                on_recorded=self._fold_appended,
                exhausted=texts.busy,
            )
        finally:
            if self._news:
                self._news = False
                self._notify()
        if isinstance(decided, Settled):
            return decided.value
        if isinstance(decided, Appended):
            recorded = decided.decision.value
            return Recorded(recorded.answer, []) if decided.result.duplicate else recorded
        raise AssertionError("the lobby's decisions never answer a refused repeat")
