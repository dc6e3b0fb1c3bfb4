"""One seat at one table, over the network: the watch stream, moves, hints, heartbeats.

Views only go forward (a view older than the one shown is dropped, whichever way it
came: the stream or a move's answer). A dropped stream is resumed from the last version
seen, after a growing pause (`BACKOFF`). A move whose answer was lost to the network
stays pending and is sent again, with the same request id, once the table answers
again: the table service applies it once and answers a repeat with `duplicate`. A move
the table refuses is dropped and its reason shown, in the player's language.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable
from dataclasses import dataclass

import grpc

from kozyr.api.table.v1 import actions_pb2, views_pb2
from kozyr.cli.play.texts import label
from kozyr.client import BotsClient, ClockClient, TableClient
from kozyr.client.table import new_request_id
from kozyr.runtime.errors import error_details
from kozyr.texts import Lang

BACKOFF = (0.5, 1.0, 2.0, 4.0, 8.0)
"""Seconds before each new attempt to reach the table after a drop (the last repeats)."""

CALL_SECONDS = 10.0
"""A move or a hint that takes longer counts as lost to the network."""

NETWORK_CODES = frozenset(
    {
        grpc.StatusCode.UNAVAILABLE,
        grpc.StatusCode.DEADLINE_EXCEEDED,
        grpc.StatusCode.RESOURCE_EXHAUSTED,
        grpc.StatusCode.CANCELLED,
        grpc.StatusCode.UNKNOWN,
    }
)
"""Answers that say nothing about the move: the table may not have seen it."""

OnView = Callable[[views_pb2.TableView], None]
OnStatus = Callable[[str, bool], None]
"""(text, is_error): a line for the status bar."""


def error_text(error: grpc.RpcError, lang: Lang) -> str:
    """The server's explanation of a refusal in `lang` (else the first language it
    sent, else its English status message)."""
    details = error_details(error)
    if details.messages:
        return details.messages.get(lang.value) or next(iter(details.messages.values()))
    return details.message or details.code.name


def _is_network(error: grpc.RpcError) -> bool:
    return error.code() in NETWORK_CODES and error_details(error).reason not in (
        "TOO_MANY_SIGNALS",
        "TOO_MANY_HINTS",
    )


@dataclass(frozen=True)
class Pending:
    """A move sent whose outcome is not known yet."""

    request_id: str
    action: actions_pb2.Action
    expected_version: int | None
    turn: int
    """The turn it was chosen in."""


class TableSession:
    """The seat's connection to its table. `run()` watches until cancelled; `submit`
    and `hint` may be called meanwhile; `on_view` gets every newer view, `on_status`
    every line for the status bar."""

    def __init__(
        self,
        table: TableClient,
        table_id: str,
        lang: Lang,
        on_view: OnView,
        on_status: OnStatus,
        *,
        bots: BotsClient | None = None,
        clock: ClockClient | None = None,
        backoff: tuple[float, ...] = BACKOFF,
        client_seed: str | None = None,
    ) -> None:
        """`client_seed`: the player's own contribution to every deal's seed (else a
        random one per deal, docs/fair-deal.md §9)."""
        self.table = table
        self.table_id = table_id
        self.lang = lang
        self.bots = bots
        self.clock = clock
        self.backoff = backoff
        self.view: views_pb2.TableView | None = None
        self.pending: Pending | None = None
        self.connected = False
        self._on_view = on_view
        self._on_status = on_status
        self.client_seed = client_seed
        self.seeded: set[int] = set()
        """The deals this session has sent a client seed for."""
        self._seeding: set[asyncio.Task[None]] = set()

    @property
    def version(self) -> int:
        return self.view.version if self.view is not None else 0

    def accept(self, view: views_pb2.TableView) -> bool:
        """Show `view` if it is newer than the one shown."""
        if self.view is not None and view.version <= self.view.version:
            return False
        self.view = view
        self._on_view(view)
        self._contribute(view)
        return True

    def _contribute(self, view: views_pb2.TableView) -> None:
        """Set the seat's client seed for the next deal once, when the view offers one."""
        if not view.HasField("next_deal") or not view.HasField("seat"):
            return
        deal = view.next_deal.number
        if deal in self.seeded:
            return
        self.seeded.add(deal)
        task = asyncio.get_running_loop().create_task(self._send_seed(deal))
        self._seeding.add(task)
        task.add_done_callback(self._seeding.discard)

    async def seeds_sent(self) -> None:
        """Wait until every client seed sent so far has its answer."""
        await asyncio.gather(*self._seeding)

    async def _send_seed(self, deal: int) -> None:
        """A refused or lost seed leaves the deal with the seat's default ("" recorded):
        the game goes on either way, so it is not retried (nor is one whose channel
        closed as the session ended)."""
        with contextlib.suppress(grpc.aio.AioRpcError, grpc.aio.UsageError, TimeoutError):
            async with asyncio.timeout(CALL_SECONDS):
                await self.table.set_client_seed(self.table_id, deal, self.client_seed)

    async def run(self) -> None:
        """Watch the table for ever, resuming after every drop; heartbeats beside."""
        beating = asyncio.create_task(self._heartbeats()) if self.clock else None
        try:
            await self._watch()
        finally:
            if beating is not None:
                beating.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await beating

    async def _watch(self) -> None:
        """Each (re)connection reads the table once — which proves the table answers,
        even when nothing changes — sends any pending move again, then follows the
        stream from the version read."""
        failures = 0
        while True:
            try:
                async with asyncio.timeout(CALL_SECONDS):
                    self.accept(await self.table.get_table(self.table_id))
                self.connected = True
                if failures:
                    self._on_status(label("reconnected", self.lang), False)
                    failures = 0
                await self._resend()
                async for view in self.table.watch(self.table_id, from_version=self.version):
                    self.accept(view)
            except TimeoutError:
                pass
            except grpc.aio.AioRpcError as err:
                if not _is_network(err):
                    self._on_status(error_text(err, self.lang), True)
                    raise
            self.connected = False
            pause = self.backoff[min(failures, len(self.backoff) - 1)]
            failures += 1
            self._on_status(label("reconnecting", self.lang, seconds=pause), True)
            await asyncio.sleep(pause)

    async def submit(self, action: actions_pb2.Action) -> bool:
        """Send a move chosen on the view shown; True once the table took it."""
        signal = action.WhichOneof("action") == "toggle_signal"
        # a signal may be sent whatever happened since: no version pinned
        expected = None if signal or self.view is None else self.view.version
        turn = self.view.turn.number if self.view is not None else 0
        self.pending = Pending(new_request_id(), action, expected, turn)
        return await self._send(self.pending)

    async def _resend(self) -> None:
        if self.pending is not None:
            await self._send(self.pending)

    async def _send(self, pending: Pending, *, stale_again: bool = True) -> bool:
        try:
            async with asyncio.timeout(CALL_SECONDS):
                answer = await self.table.submit(
                    self.table_id,
                    pending.action,
                    request_id=pending.request_id,
                    expected_version=pending.expected_version,
                )
        except TimeoutError:
            self._on_status(label("reconnecting", self.lang, seconds=self.backoff[0]), True)
            return False
        except grpc.aio.AioRpcError as err:
            if _is_network(err):  # kept: sent again with its request id on reconnecting
                self._on_status(label("reconnecting", self.lang, seconds=self.backoff[0]), True)
                return False
            if self.pending is pending:
                self.pending = None
            stale = error_details(err).reason == "STALE_VERSION"
            if stale and stale_again and await self._same_turn(pending):
                assert self.view is not None
                self.pending = Pending(
                    new_request_id(), pending.action, self.view.version, pending.turn
                )
                return await self._send(self.pending, stale_again=False)
            self._on_status(error_text(err, self.lang), True)
            return False
        if self.pending is pending:
            self.pending = None
        self.accept(answer.view)
        return True

    async def _same_turn(self, pending: Pending) -> bool:
        """After STALE_VERSION: whether the table, read again, still waits for this
        seat in the same turn — something the move does not depend on changed (a
        player's presence, a seat's control), so the same decision is sent again."""
        try:
            async with asyncio.timeout(CALL_SECONDS):
                self.accept(await self.table.get_table(self.table_id))
        except (grpc.aio.AioRpcError, TimeoutError):
            return False
        view = self.view
        return (
            view is not None
            and pending.expected_version is not None
            and view.version > pending.expected_version
            and view.turn.number == pending.turn
            and view.seat in view.turn.seats
        )

    async def hint(self) -> actions_pb2.Action | None:
        """The bots service's suggestion for this seat, or None (the reason shown)."""
        if self.bots is None:
            self._on_status(label("no_hints", self.lang), True)
            return None
        try:
            async with asyncio.timeout(CALL_SECONDS):
                answer = await self.bots.suggest(self.table_id)
        except TimeoutError:
            return None
        except grpc.aio.AioRpcError as err:
            self._on_status(error_text(err, self.lang), True)
            return None
        return answer.action

    async def _heartbeats(self) -> None:
        """Tell the clock service the player is here, at the interval it asks for."""
        assert self.clock is not None
        while True:
            interval = 10.0
            with contextlib.suppress(grpc.aio.AioRpcError, TimeoutError):
                async with asyncio.timeout(CALL_SECONDS):
                    answer = await self.clock.heartbeat()
                if answer.HasField("interval"):
                    interval = max(1.0, answer.interval.ToTimedelta().total_seconds())
            await asyncio.sleep(interval)
