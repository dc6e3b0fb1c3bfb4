"""The table application: commands in, events appended, tables out.

Transport-free (the gRPC servicer is a thin edge over it) so tests, benchmarks and the
CLI can drive it directly. One path for every change: take the table (the one this
process holds, else loaded from the log), decide with the game's pure decider, let the
table draw chance (fresh seeds) until a seat must act, append with the expected
version, and on a concurrency conflict plan again on the table loaded from the log.
"""

from __future__ import annotations

import hashlib
import json
import secrets
import uuid
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import UTC, datetime, timedelta
from typing import Any, Literal

from kozyr.eventstore import (
    Append,
    Appended,
    ConcurrencyConflict,
    EventStore,
    IdempotencyConflict,
    NewEvent,
    RecordedEvent,
    Repeated,
    Settled,
    decide_and_append,
)
from kozyr.games.codec import to_json
from kozyr.games.decider import Turn
from kozyr.games.errors import RuleError
from kozyr.runtime.errors import FailedPrecondition, InvalidArgument, KozyrError
from kozyr.runtime.tracing import span
from kozyr.table import metrics
from kozyr.table.adapters.directory import TableDirectory, finish_time
from kozyr.table.adapters.notifier import TableNotifier
from kozyr.table.adapters.public_wire import outbox_messages
from kozyr.table.adapters.repository import TableNotFound, TableRepository, stream_of
from kozyr.table.domain import decision, model, seeding
from kozyr.table.domain.decision import Decision
from kozyr.table.domain.model import (
    COMPUTER,
    SeatControl,
    SeatControlChanged,
    SeatPresenceChanged,
    Table,
    TableCreated,
)
from kozyr.table.domain.public import public_events
from kozyr.table.texts import (
    computer_seat,
    deal_already_started,
    deal_not_open,
    invalid_seat,
    request_id_reused,
    stale_version,
    table_not_found,
    too_busy,
    too_many_taps,
)
from kozyr.texts import Lang

MAX_ATTEMPTS = 8
"""Retries of an unpinned command that keeps losing the optimistic-concurrency race."""

TABLE_NAMESPACE = uuid.UUID("8f0f3f57-3a63-4c4e-9d1b-6a5f2a0e7c11")


@dataclass(frozen=True, slots=True)
class TapLimit:
    """At most `taps` at-will moves (Khözör signal taps) per seat in any `window`.

    Counted from the log (the times it recorded the seat's latest taps), so every
    replica enforces the same limit: a tap decided against a table that misses another
    replica's taps loses the append's version check and is decided again.
    """

    taps: int
    window: timedelta

    def __post_init__(self) -> None:
        if not 1 <= self.taps <= model.TAPS_KEPT:
            raise ValueError(f"a tap limit is 1 to {model.TAPS_KEPT} taps, not {self.taps}")


SIGNAL_TAPS = TapLimit(taps=10, window=timedelta(seconds=60))
"""The documented default (docs/api.md): 10 signal taps per seat in any 60 seconds."""


@dataclass(frozen=True, slots=True)
class Actor:
    """Who caused a change: recorded in every event's metadata."""

    subject: str
    role: str
    correlation_id: str | None = None


@dataclass(frozen=True, slots=True)
class Outcome:
    """A command's effect: the table after it, and whether it was a repeat."""

    table: Table
    duplicate: bool = False
    applied: bool = True


CommandKind = Literal["create", "move", "expire", "seat", "seed"]
"""What made an append, as `kozyr_table_commands_total` labels it: named by the use case
that appends, never guessed from the events (a client seed that completes a deal appends
the deal too, and a clock expiry appends an ordinary move)."""


@dataclass(frozen=True, slots=True)
class _Planned:
    """What `_commit` keeps of a decision while it is appended: the table after, the
    deadline recorded with its events, and the kind of command that made them (the
    metrics' label)."""

    after: Table
    deadline: str | None
    kind: CommandKind


Plan = Callable[[Table], Decision | Settled[Table]]
"""A use case's decision on a table: the events to append, or `Settled(table)` when
there is nothing to do (the seat already has that control, the turn is closed)."""


def rule_refusal(error: RuleError) -> FailedPrecondition:
    """An illegal move → FAILED_PRECONDITION with its reason and every language."""
    return FailedPrecondition(error.reason, {lang.value: error.message(lang) for lang in Lang})


def fingerprint(value: Any) -> str:
    """A stable digest of a command, so a reused request_id with another move is caught."""
    text = json.dumps(to_json(value), sort_keys=True, separators=(",", ":"), default=str)
    return hashlib.sha256(f"{type(value).__name__}:{text}".encode()).hexdigest()


class TableApp:
    """Every table use case, over an event store."""

    def __init__(
        self,
        store: EventStore,
        *,
        notifier: TableNotifier | None = None,
        clock: Callable[[], datetime] = lambda: datetime.now(UTC),
        new_seed: Callable[[], bytes] = lambda: secrets.token_bytes(32),
        tap_limit: TapLimit = SIGNAL_TAPS,
        directory: TableDirectory | None = None,
        seed_scheme: int = seeding.CURRENT_SCHEME,
    ) -> None:
        """`directory`: where tables are noted when they open and end (ListTables);
        `seed_scheme`: how the tables it opens seed their deals (tests open scheme 1
        tables, as the service did before scheme 2, to check they still verify)."""
        self.store = store
        self.directory = directory
        self.tap_limit = tap_limit
        self.tables = TableRepository(store)
        self.notifier = notifier or TableNotifier()
        self._clock = clock
        self._new_seed = new_seed
        self._seed_scheme = seed_scheme

    # ------------------------------------------------------------------ reading

    async def load(self, table_id: str) -> Table:
        try:
            return await self.tables.load(table_id)
        except TableNotFound:
            raise table_not_found(table_id) from None

    async def history(
        self, table: Table, seat: int | None, from_version: int, limit: int, *, full: bool = False
    ) -> list[tuple[int, RecordedEvent]]:
        """Up to `limit` events of `table` that `seat` may see after its version
        `from_version`, each with its number as `seat` counts (docs/api.md, "Versions").

        `full` (a moderator): every event, numbered by its log position. Either way the
        page stops at `table.version`, so numbers and the table agree.
        """
        stream = stream_of(table.table_id)
        if full:
            count = min(limit, table.version - from_version)
            if count <= 0:
                return []
            events = await self.store.read(stream, from_version=from_version, limit=count)
            return [(e.position, e) for e in events]
        start = table.resume_after(seat, from_version)
        end = min(table.resume_after(seat, from_version + limit - 1) + 1, table.version)
        if end <= start:
            return []
        hidden = set(table.hidden_from(seat))
        events = await self.store.read(stream, from_version=start, limit=end - start)
        shown = [e for e in events if e.position not in hidden]
        return [(from_version + i, e) for i, e in enumerate(shown, start=1)]

    # ------------------------------------------------------------------ creating

    async def create(
        self,
        *,
        request_id: str,
        game_id: str,
        options: Mapping[str, Any],
        seats: Sequence[str],
        actor: Actor,
        levels: Sequence[str] = (),
        cover_after_seconds: int = 0,
        computer_level: str = model.DEFAULT_COMPUTER_LEVEL,
        hints_off: bool = False,
        open_hand_delay: int = 0,
        seed_window: int = 0,
    ) -> Outcome:
        """Open a table and draw its first chance (dealer/opening team, first deal —
        held for the players' client seeds when the table has a `seed_window`).

        The table id derives from the creator and request id, so a retried creation
        lands on the same stream and returns the same table; the same request id with
        another setup is refused (REQUEST_ID_REUSED).
        """
        try:
            model.validate_setup(
                game_id,
                options,
                seats,
                levels,
                cover_after_seconds,
                computer_level,
                open_hand_delay,
                seed_window,
            )
        except model.TableSetupError as err:
            raise InvalidArgument("INVALID_TABLE_SETUP", str(err)) from None
        table_id = str(uuid.uuid5(TABLE_NAMESPACE, f"{actor.subject}\n{request_id}"))
        created = TableCreated(
            table_id,
            game_id,
            dict(options),
            tuple(seats),
            tuple(levels) if any(levels) else (),
            cover_after_seconds,
            computer_level,
            hints_off,
            self._seed_scheme,
            open_hand_delay,
            seed_window if self._seed_scheme == seeding.CLIENT_SEEDS else 0,
        )
        opened = decision.draw_chance(model.start(created), [created], self._new_seed)
        append = self._append_of(None, opened, request_id, actor, "create")
        try:
            appended = await self._decide_and_append(
                table_id,
                lambda _: append,
                request_id,
                fingerprint(created),
                known=opened.after,
                attempts=1,
            )
        except ConcurrencyConflict:  # the stream exists: this creation's repeat
            return await self._repeated(table_id)
        assert isinstance(appended, Appended), "a creation is never refused nor settled"
        return await self._outcome(table_id, appended)

    # ------------------------------------------------------------------ moves

    async def submit(
        self,
        table_id: str,
        command: Any,
        *,
        request_id: str,
        actor: Actor,
        expected_version: int | None = None,
        viewer: int | None = None,
        check: Callable[[Table], object] | None = None,
        acting_person: int | None = None,
    ) -> Outcome:
        """Apply a player's (or a service's) command: load, decide, append.

        `expected_version` is the version as `viewer` (the acting seat) sees it: events
        it may not see (the other team's signals) never make its move stale, nor do seat
        events (presence, control) since the last game event it saw (`Table.is_fresh`).
        `check`
        refuses a caller who may not act for the seat now. `acting_person` is the seat
        of a person acting for himself: a covered seat is his again in the same append
        (kozyr.table.domain.decision).
        """
        pin = None if expected_version is None else (expected_version, viewer)

        def plan(table: Table) -> Decision | Settled[Table]:
            if check is not None:
                check(table)
            if pin is not None and not table.is_fresh(pin[1], pin[0]):
                raise stale_version(pin[0], table.version_for(pin[1]))
            planned = self._decide(table, command, acting_person)
            self._check_taps(table, planned.events)
            return planned

        return await self._commit(
            table_id, plan, request_id, actor, fingerprint(command), kind="move"
        )

    async def _commit(
        self,
        table_id: str,
        plan: Plan,
        request_id: str,
        actor: Actor,
        key: str,
        *,
        kind: CommandKind,
    ) -> Outcome:
        """Plan the change on the table, append it; only a lost race is retried
        (`kozyr.eventstore.decide_and_append`).

        The first plan uses the table this process holds, when it holds one, without
        reading the log (a read per command was a third of a move's round trips): the
        append's version check is the truth between replicas, so a held table that is
        behind the log only loses the race, and a conflict means the change is planned
        again on the table loaded from the log. A refusal (or "nothing to do") is only
        ever given on the log's word: one planned on the held table is planned again on
        the loaded one. A refusal on the log's table first asks the store whether this
        very request was applied already (a client's retry after a lost reply): then
        the first result is the answer. `kind`: what the command is (an "expire" is the
        clock's default move of a turn).
        """

        def decide(table: Table) -> Append[_Planned] | Settled[Table]:
            planned = plan(table)
            if isinstance(planned, Settled):
                return planned
            return self._append_of(table, planned, request_id, actor, kind)

        decided = await self._decide_and_append(
            table_id,
            decide,
            request_id,
            key,
            known=self.tables.cached(table_id),
            attempts=MAX_ATTEMPTS,
        )
        if isinstance(decided, Repeated):
            return await self._repeated(table_id)
        if isinstance(decided, Settled):
            return Outcome(decided.value, applied=False)
        return await self._outcome(table_id, decided)

    async def _decide_and_append(
        self,
        table_id: str,
        decide: Callable[[Table], Append[_Planned] | Settled[Table]],
        request_id: str,
        key: str,
        *,
        known: Table | None,
        attempts: int,
    ) -> Appended[_Planned] | Settled[Table] | Repeated:
        """The store's one decide-and-append loop over a table: refusals are the
        player-facing errors, a request id reused for another command is refused
        (REQUEST_ID_REUSED), and a table that keeps losing the race is TOO_BUSY."""
        with span("table.append", table_id=table_id) as traced:
            try:
                decided = await decide_and_append(
                    self.store,
                    stream_of(table_id),
                    decide,
                    load=lambda: self.load(table_id),
                    known=known,
                    request_id=request_id,
                    command_fingerprint=key,
                    attempts=attempts,
                    refusals=(KozyrError,),
                    answer_refused_repeats=True,
                    exhausted=too_busy if attempts > 1 else None,
                )
            except IdempotencyConflict:
                raise request_id_reused() from None
            if isinstance(decided, Appended):
                traced.set_attribute("events", len(decided.result.events))
            return decided

    def _check_taps(self, table: Table, events: Sequence[Any]) -> None:
        """Refuse taps beyond the limit: RESOURCE_EXHAUSTED, nothing appended.

        Taps are what the plugin's `tapped_by` hook names, the same hook the fold
        records them with (`kozyr.table.domain.model`), so every tap recorded is limited."""
        tapped_by = table.plugin.tapped_by
        if tapped_by is None:
            return
        new = [seat for seat in map(tapped_by, events) if seat is not None]
        if not new:
            return
        limit = self.tap_limit
        since = self._clock() - limit.window
        for seat in set(new):
            recent = [t for t in table.taps_of(seat) if t is None or t > since]
            if len(recent) + new.count(seat) > limit.taps:
                oldest = min((t for t in recent if t is not None), default=since)
                wait = max(1, int((oldest - since).total_seconds()) + 1)
                raise too_many_taps(limit.taps, int(limit.window.total_seconds()), wait)

    async def expire_turn(self, table_id: str, turn_number: int, actor: Actor) -> Outcome:
        """Play the default move of `turn_number` if that turn is still open — or, for
        the first deal's CLIENT_SEED turn, deal it without the seeds still missing.

        Idempotent per turn: the request id is derived from the turn number, and a
        turn that has already moved on is left alone (applied=False).
        """

        def plan(table: Table) -> Decision | Settled[Table]:
            if not _is_open(table, turn_number):
                return Settled(table)  # the turn is closed
            if table.awaiting_seeds:  # the seed window is over
                return decision.draw_chance(table, [], self._new_seed, window_closed=True)
            seat = min(table.turn.seats)
            return self._decide(table, table.game.default_command(table.state, seat))

        key = expiry_key(turn_number)
        outcome = await self._commit(table_id, plan, key, actor, key, kind="expire")
        if not outcome.applied:
            if outcome.table.is_over:  # maybe the retry of the expiry that ended the game
                await self._renote(outcome.table)
            return outcome
        return Outcome(outcome.table, duplicate=outcome.duplicate, applied=not outcome.duplicate)

    async def set_seat_control(
        self, table_id: str, seat: int, control: SeatControl, *, request_id: str, actor: Actor
    ) -> Outcome:
        """Cover a seat with a computer, mark it absent, or give it back to its person."""

        def plan(table: Table) -> Decision | Settled[Table]:
            if not 0 <= seat < len(table.seats):
                raise invalid_seat(seat)
            if table.seats[seat] == COMPUTER and control is not SeatControl.COMPUTER:
                raise computer_seat(seat)
            if table.control[seat] is control:
                return Settled(table)  # unchanged
            event = SeatControlChanged(seat, control)
            return Decision((event,), model.apply(table, event, table.turn_deadline))

        return await self._commit(
            table_id, plan, request_id, actor, f"{seat}:{control}", kind="seat"
        )

    async def set_seat_presence(
        self, table_id: str, seat: int, online: bool, *, request_id: str, actor: Actor
    ) -> Outcome:
        """Record that a seat's player went offline or came back (the clock's call); the
        first call ends the seat's unknown presence, whichever way it goes."""

        def plan(table: Table) -> Decision | Settled[Table]:
            if not 0 <= seat < len(table.seats):
                raise invalid_seat(seat)
            if table.seats[seat] == COMPUTER:
                raise computer_seat(seat)
            if table.presence(seat) is online:
                return Settled(table)  # unchanged
            event = SeatPresenceChanged(seat, online)
            return Decision((event,), model.apply(table, event, table.turn_deadline))

        return await self._commit(
            table_id, plan, request_id, actor, f"{seat}:online={online}", kind="seat"
        )

    async def set_client_seed(
        self,
        table_id: str,
        seat: int,
        deal: int,
        client_seed: str,
        *,
        request_id: str,
        actor: Actor,
        check: Callable[[Table], object] | None = None,
    ) -> Outcome:
        """Record `seat`'s client seed for `deal` (docs/fair-deal.md §9): only for the
        next deal, after its server seed is committed and before it is dealt; a deal
        already dealt is refused (DEAL_ALREADY_STARTED) and keeps its seed. The last
        seed a held first deal waits for deals it in the same append."""

        def plan(table: Table) -> Decision | Settled[Table]:
            if check is not None:
                check(table)
            if not 0 <= seat < len(table.seats):
                raise invalid_seat(seat)
            try:
                event = seeding.client_seed_event(
                    () if table.is_over else table.seedings,
                    len(table.deals),
                    seat,
                    deal,
                    client_seed,
                )
            except seeding.SeedRefused as refused:
                refusal = (
                    deal_already_started
                    if refused.reason == "DEAL_ALREADY_STARTED"
                    else deal_not_open
                )
                raise refusal(refused.deal, refused.next_deal) from None
            seeded = model.apply(table, event, table.turn_deadline)
            return decision.draw_chance(seeded, [event], self._new_seed)

        key = fingerprint(seeding.ClientSeedSet(seat, deal, client_seed))
        return await self._commit(table_id, plan, request_id, actor, key, kind="seed")

    # ------------------------------------------------------------------ internals

    def _decide(self, table: Table, command: Any, acting_person: int | None = None) -> Decision:
        """The table's pure decision, an illegal move refused as FAILED_PRECONDITION."""
        try:
            return decision.decide(
                table, command, seeds=self._new_seed, acting_person=acting_person
            )
        except RuleError as err:
            raise rule_refusal(err) from None

    def _append_of(
        self,
        before: Table | None,
        planned: Decision,
        request_id: str,
        actor: Actor,
        kind: CommandKind,
    ) -> Append[_Planned]:
        """One command's events to append at `before`'s version, with the turn that
        follows and its deadline in the metadata, and the public table events they make
        (`kozyr.table.domain.public`) queued in the same transaction. An "expire" is the
        clock's default move of `before`'s turn (its public events say the turn expired)."""
        after, events = planned.after, planned.events
        turn = after.turn
        deadline = self._deadline(before, after, turn)
        metadata = {
            "actor": actor.subject,
            "role": actor.role,
            "correlation_id": actor.correlation_id or request_id,
            "turn": _turn_json(turn),
            "deadline": deadline,
        }
        expired = kind == "expire"
        public = public_events(before, after, events, _parse_deadline(deadline), expired=expired)
        return Append(
            expected_version=0 if before is None else before.version,
            events=[NewEvent(*model.encode(event)) for event in events],
            value=_Planned(after, deadline, kind),
            metadata=metadata,
            messages=outbox_messages(after.table_id, public),
        )

    def _deadline(self, before: Table | None, after: Table, turn: Turn) -> str | None:
        """A new turn gets its `Turn.seconds` from now; the same turn keeps its deadline.

        So a Khözör signal or a change of seat control never restarts a clock.
        """
        if after.is_over or not turn.seats:
            return None
        same_turn = before is not None and before.turn.number == turn.number
        if same_turn and before is not None and before.turn_deadline is not None:
            return before.turn_deadline.isoformat()
        if turn.seconds is None:
            return None
        return (self._clock() + timedelta(seconds=turn.seconds)).isoformat()

    async def _outcome(self, table_id: str, appended: Appended[_Planned]) -> Outcome:
        """Remember the table as stored, wake its watchers, and return it.

        The table after is what folding the appended events gives (the log's truth),
        with the recorded deadline; a repeated request returns the table as the log has
        it now.
        """
        result = appended.result
        if result.duplicate:
            return await self._repeated(table_id)
        planned = appended.decision.value
        after = planned.after
        metrics.appended(after.game_id, planned.kind, len(result.events))
        stored = replace(after, turn_deadline=_parse_deadline(planned.deadline))
        stored = model.stamped(stored, result.events[-1].recorded_at)
        assert stored.version == result.version, "the fold and the log agree on the version"
        self.tables.remember(stored)
        self.notifier.notify(table_id, stored.version)
        first, last = result.events[0], result.events[-1]
        if first.position == 1:
            await self._note(stored, first.recorded_at)
        elif stored.is_over:
            await self._note(stored, finished_at=last.recorded_at)
        return Outcome(stored)

    async def _repeated(self, table_id: str) -> Outcome:
        """A request applied before: the table as the log has it now, noted again in the
        directory (the first answer may have been lost before its note was written)."""
        table = await self.load(table_id)
        await self._renote(table)
        return Outcome(table, duplicate=True)

    async def _renote(self, table: Table) -> None:
        """Write the table's directory row again, from the log."""
        if self.directory is None:
            return
        events = await self.store.read(
            stream_of(table.table_id), limit=None if table.is_over else 1
        )
        await self._note(table, events[0].recorded_at, finish_time(events))

    async def _note(
        self, table: Table, created_at: datetime | None = None, finished_at: datetime | None = None
    ) -> None:
        """Write the table's directory row (creation time read from the log if not given)."""
        if self.directory is None:
            return
        if created_at is None:
            created_at = (await self.store.read(stream_of(table.table_id), limit=1))[0].recorded_at
        await self.directory.record(
            table.table_id, table.game_id, table.seats, created_at, finished_at
        )


def expiry_key(turn_number: int) -> str:
    """The request id and command key of the clock's default move for a turn: a client's
    own command key is a digest, so only ExpireTurn's append carries this one."""
    return f"expire-turn-{turn_number}"


def _parse_deadline(deadline: str | None) -> datetime | None:
    return datetime.fromisoformat(deadline) if deadline is not None else None


def _is_open(table: Table, turn_number: int) -> bool:
    turn = table.turn
    return not table.is_over and turn.number == turn_number and bool(turn.seats)


def _turn_json(turn: Turn) -> dict[str, Any]:
    return {"number": turn.number, "kind": turn.kind, "seats": list(turn.seats)}
