"""One way to change a stream: load → decide → append at the version decided on →
retry only a lost race, idempotent by request id (docs/eventstore.md, "Deciding").

The table, the lobby and the ratings each used to write this loop by hand. What they
share is here; what differs is a parameter:

- `known`: a state the caller holds without reading the log (a cached table, the
  lobby as this replica folded it). The first attempt decides on it; because it may be
  behind the log, a refusal or a "nothing to do" decided on it is never the answer —
  the decision is made again on `load()`, the log's latest. Without `known`, every
  attempt loads.
- `decide(state)` returns `Append` (events to append at its `expected_version`) or
  `Settled` (nothing to append: the answer is already so), or raises one of
  `refusals` (an illegal command). Anything else it raises propagates at once.
- With `answer_refused_repeats`, a refusal on the latest state is answered with the
  first result when this very request was applied before (a client's retry after a
  lost reply, re-decided on a state where it is no longer legal): `Repeated`. Only
  for request ids one caller owns (the table's are scoped by the command's
  fingerprint); otherwise, and when there is no first result, the refusal propagates.
- `ConcurrencyConflict` (another writer appended first) is the only error retried:
  the next attempt loads and decides again. After `attempts`, `exhausted()` is
  raised, or the last conflict when there is none (the caller retries a larger
  decision, as the ratings do across several streams).
- The append itself is the store's: one transaction with its outbox messages, the
  hash chain, and a repeat of `request_id` answered with the first result
  (`Appended.result.duplicate`). `IdempotencyConflict` and every other error
  propagate unchanged.
- `serialize`: an async context manager (a lock) held over each attempt, loading,
  deciding, appending and `on_recorded` (folding the appended events into the
  caller's state) — so one process decides one change at a time.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping, Sequence
from contextlib import AbstractAsyncContextManager, nullcontext
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from kozyr.eventstore.errors import ConcurrencyConflict
from kozyr.eventstore.model import AppendResult, EventStore, NewEvent, NewMessage

S = TypeVar("S")
T = TypeVar("T")
V = TypeVar("V")


@dataclass(frozen=True, slots=True)
class Append(Generic[T]):
    """What a decision appends: `events` at `expected_version` (the version of the
    state it was decided on), with `metadata` and outbox `messages`; `value` is the
    caller's own (the state after, the typed events) handed back with the result."""

    expected_version: int
    events: Sequence[NewEvent]
    value: T
    metadata: Mapping[str, Any] | None = None
    messages: Sequence[NewMessage] = ()


@dataclass(frozen=True, slots=True)
class Settled(Generic[T]):
    """A decision that needs no append (the seat already has that control, the turn is
    closed, the ticket is cancelled already): `value` is the answer."""

    value: T


@dataclass(frozen=True, slots=True)
class Appended(Generic[T]):
    """The decision as appended; `result.duplicate` when the store answered a repeat
    of the request id with its first result (then nothing was appended now)."""

    decision: Append[T]
    result: AppendResult


@dataclass(frozen=True, slots=True)
class Repeated:
    """The command, decided again, was refused — but this request id was applied
    before with the same fingerprint: `result` is that first append."""

    result: AppendResult


async def decide_and_append(
    store: EventStore,
    stream: str,
    decide: Callable[[S], Append[T] | Settled[V]],
    *,
    load: Callable[[], Awaitable[S]],
    request_id: str,
    attempts: int,
    command_fingerprint: str | None = None,
    known: S | None = None,
    refusals: tuple[type[Exception], ...] = (),
    answer_refused_repeats: bool = False,
    serialize: AbstractAsyncContextManager[Any] | None = None,
    on_conflict: Callable[[ConcurrencyConflict], None] | None = None,
    on_recorded: Callable[[Appended[T]], None] | None = None,
    exhausted: Callable[[], Exception] | None = None,
) -> Appended[T] | Settled[V] | Repeated:
    """Decide on the stream's state and append, retrying lost races (module docstring)."""
    if attempts < 1:
        raise ValueError(f"attempts must be at least 1, not {attempts}")
    conflict: ConcurrencyConflict | None = None
    for attempt in range(attempts):
        on_known = known is not None and attempt == 0
        final = attempt == attempts - 1
        async with serialize if serialize is not None else nullcontext():
            state = known if on_known and known is not None else await load()
            try:
                decided = decide(state)
            except refusals:
                if on_known and not final:
                    continue  # maybe only behind the log: ask the log
                if answer_refused_repeats:
                    prior = await store.result_of(
                        stream, request_id, command_fingerprint=command_fingerprint
                    )
                    if prior is not None:
                        return Repeated(prior)
                raise
            if isinstance(decided, Settled):
                if on_known and not final:
                    continue  # nor is "nothing to do" said on a state that may be stale
                return decided
            try:
                result = await store.append(
                    stream,
                    decided.expected_version,
                    decided.events,
                    request_id=request_id,
                    metadata=decided.metadata,
                    command_fingerprint=command_fingerprint,
                    messages=decided.messages,
                )
            except ConcurrencyConflict as lost:
                conflict = lost
                if on_conflict is not None:
                    on_conflict(lost)
                continue
            appended = Appended(decided, result)
            if on_recorded is not None and not result.duplicate:
                on_recorded(appended)
            return appended
    if exhausted is not None:
        raise exhausted()
    assert conflict is not None, "only a lost race ends the final attempt unanswered"
    raise conflict
