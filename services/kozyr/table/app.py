"""The table application: commands in, events appended, tables out.

Transport-free (the gRPC servicer is a thin edge over it) so tests, benchmarks and the
CLI can drive it directly. One path for every change: load the table, decide with the
game's pure decider, let the table draw chance (fresh seeds) until a seat must act,
append with the expected version, and retry on a concurrency conflict when the caller
did not pin a version.
"""

from __future__ import annotations

import hashlib
import json
import secrets
import uuid
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

from kozyr.eventstore import (
    AppendResult,
    ConcurrencyConflict,
    EventStore,
    IdempotencyConflict,
    NewEvent,
    RecordedEvent,
)
from kozyr.games.base import Lang, RuleError, Turn, to_json
from kozyr.runtime.errors import Aborted, FailedPrecondition, InvalidArgument, NotFound
from kozyr.table import model
from kozyr.table.model import COMPUTER, SeatControl, SeatControlChanged, Table, TableCreated
from kozyr.table.notifier import TableNotifier
from kozyr.table.repository import TableNotFound, TableRepository, stream_of

MAX_ATTEMPTS = 8
"""Retries of an unpinned command that keeps losing the optimistic-concurrency race."""

TABLE_NAMESPACE = uuid.UUID("8f0f3f57-3a63-4c4e-9d1b-6a5f2a0e7c11")


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


def rule_refusal(error: RuleError) -> FailedPrecondition:
    """An illegal move → FAILED_PRECONDITION with its reason and every language."""
    return FailedPrecondition(error.reason, {lang.value: error.message(lang) for lang in Lang})


def not_found(table_id: str) -> NotFound:
    return NotFound(
        "TABLE_NOT_FOUND",
        {
            "en": f"There is no table {table_id}.",
            "ro": f"Nu există masa {table_id}.",
            "it": f"Non esiste il tavolo {table_id}.",
        },
    )


def stale_version(expected: int, actual: int) -> Aborted:
    return Aborted(
        "STALE_VERSION",
        {
            "en": f"The table moved on (version {actual}, you expected {expected}): reload it.",
            "ro": f"Masa a avansat (versiunea {actual}, așteptai {expected}): reîncarc-o.",
            "it": f"Il tavolo è andato avanti (versione {actual}, attesa {expected}): ricaricalo.",
        },
        metadata={"currentVersion": str(actual)},
    )


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
    ) -> None:
        self.store = store
        self.tables = TableRepository(store)
        self.notifier = notifier or TableNotifier()
        self._clock = clock
        self._new_seed = new_seed

    # ------------------------------------------------------------------ reading

    async def load(self, table_id: str) -> Table:
        try:
            return await self.tables.load(table_id)
        except TableNotFound:
            raise not_found(table_id) from None

    async def history(
        self, table_id: str, from_version: int, limit: int
    ) -> tuple[Table, list[RecordedEvent]]:
        table = await self.load(table_id)
        events = await self.store.read(stream_of(table_id), from_version=from_version, limit=limit)
        return table, events

    # ------------------------------------------------------------------ creating

    async def create(
        self,
        *,
        request_id: str,
        game_id: str,
        options: Mapping[str, Any],
        seats: Sequence[str],
        actor: Actor,
    ) -> Outcome:
        """Open a table and draw its first chance (dealer/opening team, first deal).

        The table id derives from the creator and request id, so a retried creation
        lands on the same stream and returns the same table.
        """
        try:
            model.validate_setup(game_id, options, seats)
        except (model.TableSetupError, KeyError) as err:
            raise InvalidArgument("INVALID_TABLE_SETUP", str(err).strip("'\"")) from None
        table_id = str(uuid.uuid5(TABLE_NAMESPACE, f"{actor.subject}\n{request_id}"))
        created = TableCreated(table_id, game_id, dict(options), tuple(seats))
        table = model.start(created)
        events, table = self._draw_chance(table, [created])
        try:
            result = await self._append(table, 0, events, request_id, actor, "create")
        except ConcurrencyConflict:
            return Outcome(await self.load(table_id), duplicate=True)
        return await self._outcome(table_id, table, result)

    # ------------------------------------------------------------------ moves

    async def submit(
        self,
        table_id: str,
        make_command: Callable[[Table], Any],
        *,
        request_id: str,
        actor: Actor,
        expected_version: int | None = None,
        check: Callable[[Table], object] | None = None,
    ) -> Outcome:
        """Apply a move built against the current table (seat checks in `check`)."""
        stream = stream_of(table_id)
        for _ in range(MAX_ATTEMPTS):
            prior = await self.store.result_of(stream, request_id)
            if prior is not None:
                return Outcome(await self.load(table_id), duplicate=True)
            table = await self.load(table_id)
            if expected_version is not None and table.version != expected_version:
                raise stale_version(expected_version, table.version)
            if check is not None:
                check(table)
            command = make_command(table)
            events, after = self._decide(table, command)
            try:
                result = await self._append(
                    after, table.version, events, request_id, actor, fingerprint(command)
                )
            except ConcurrencyConflict as conflict:
                if expected_version is not None:
                    raise stale_version(expected_version, conflict.actual) from None
                continue
            return await self._outcome(table_id, after, result)
        raise Aborted("TOO_MUCH_CONTENTION", "The table is too busy right now: retry.")

    async def expire_turn(self, table_id: str, turn_number: int, actor: Actor) -> Outcome:
        """Play the default move of `turn_number` if that turn is still open.

        Idempotent per turn: the request id is derived from the turn number, and a
        turn that has already moved on is left alone (applied=False).
        """
        table = await self.load(table_id)
        if not _is_open(table, turn_number):
            return Outcome(table, applied=False)

        def still_open(current: Table) -> None:
            if not _is_open(current, turn_number):
                raise _TurnClosed

        def default_move(current: Table) -> Any:
            seat = min(current.game.turn(current.state).seats)
            return current.game.default_command(current.state, seat)

        try:
            outcome = await self.submit(
                table_id,
                default_move,
                request_id=f"expire-turn-{turn_number}",
                actor=actor,
                check=still_open,
            )
        except _TurnClosed:
            return Outcome(await self.load(table_id), applied=False)
        return Outcome(outcome.table, duplicate=outcome.duplicate, applied=not outcome.duplicate)

    async def set_seat_control(
        self, table_id: str, seat: int, control: SeatControl, *, request_id: str, actor: Actor
    ) -> Outcome:
        """Cover a seat with a computer, mark it absent, or give it back to its person."""
        for _ in range(MAX_ATTEMPTS):
            table = await self.load(table_id)
            if not 0 <= seat < len(table.seats):
                raise InvalidArgument("INVALID_SEAT", f"There is no seat {seat} at this table.")
            if table.seats[seat] == COMPUTER and control is not SeatControl.COMPUTER:
                raise FailedPrecondition(
                    "COMPUTER_SEAT", f"Seat {seat} has no person: a computer always plays it."
                )
            if table.control[seat] is control:
                return Outcome(table, applied=False)
            event = SeatControlChanged(seat, control)
            after = model.apply(table, event, table.turn_deadline)
            try:
                result = await self._append(
                    after, table.version, [event], request_id, actor, f"{seat}:{control}"
                )
            except ConcurrencyConflict:
                continue
            return await self._outcome(table_id, after, result)
        raise Aborted("TOO_MUCH_CONTENTION", "The table is too busy right now: retry.")

    # ------------------------------------------------------------------ internals

    def _decide(self, table: Table, command: Any) -> tuple[list[Any], Table]:
        try:
            events = table.game.decide(table.state, command)
        except RuleError as err:
            raise rule_refusal(err) from None
        after = table
        for event in events:
            after = model.apply(after, event)
        return self._draw_chance(after, events)

    def _draw_chance(self, table: Table, events: list[Any]) -> tuple[list[Any], Table]:
        """Let the table act while the game waits for chance: fresh 32-byte seeds."""
        events = list(events)
        while not table.is_over and table.game.turn(table.state).is_chance:
            command = table.game.chance_command(table.state, self._new_seed())
            for event in table.game.decide(table.state, command):
                events.append(event)
                table = model.apply(table, event)
        return events, table

    async def _append(
        self,
        after: Table,
        expected_version: int,
        events: Sequence[Any],
        request_id: str,
        actor: Actor,
        command_fingerprint: str,
    ) -> AppendResult:
        turn = after.game.turn(after.state)
        metadata = {
            "actor": actor.subject,
            "role": actor.role,
            "correlation_id": actor.correlation_id or request_id,
            "turn": _turn_json(turn),
            "deadline": self._deadline(after, turn),
        }
        encoded = [NewEvent(*model.encode(event)) for event in events]
        try:
            return await self.store.append(
                stream_of(after.table_id),
                expected_version,
                encoded,
                request_id=request_id,
                metadata=metadata,
                command_fingerprint=command_fingerprint,
            )
        except IdempotencyConflict:
            raise InvalidArgument(
                "REQUEST_ID_REUSED", "This request_id was already used for another request."
            ) from None

    def _deadline(self, table: Table, turn: Turn) -> str | None:
        if table.is_over or not turn.seats:
            return None
        seconds = int(table.options.get("turn_seconds", 180))
        return (self._clock() + timedelta(seconds=seconds)).isoformat()

    async def _outcome(self, table_id: str, after: Table, result: AppendResult) -> Outcome:
        self.notifier.notify(table_id)
        if result.duplicate:
            return Outcome(await self.load(table_id), duplicate=True)
        # The deadline is only known once stored: reload through the repository (cheap:
        # it folds just the events of this append into the cached table).
        return Outcome(await self.load(table_id))


class _TurnClosed(Exception):
    """The turn an ExpireTurn named is no longer open."""


def _is_open(table: Table, turn_number: int) -> bool:
    turn = table.game.turn(table.state)
    return not table.is_over and turn.number == turn_number and bool(turn.seats)


def _turn_json(turn: Turn) -> dict[str, Any]:
    return {"number": turn.number, "kind": turn.kind, "seats": list(turn.seats)}
