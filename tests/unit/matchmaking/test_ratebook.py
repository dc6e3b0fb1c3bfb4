"""RatingBook.record under a real optimistic-concurrency conflict, on the in-memory event
store (the PostgreSQL store's contract: same version checks, same idempotency).

Two tables sharing a player finish at the same moment and two replicas rate them: one
replica's append for that player is refused (`ConcurrencyConflict`), its delivery comes
back, and the retry must rate the table from every player's skill *before* it — for a
player the failed attempt already updated, the `before` his event recorded — so the
table counts once for each of them."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import Any

import pytest

from kozyr.eventstore import (
    AppendResult,
    ConcurrencyConflict,
    InMemoryEventStore,
    NewEvent,
    NewMessage,
)
from kozyr.matchmaking.lobby import Skill
from kozyr.matchmaking.ratebook import Leaderboard, RatingBook, stream_of
from kozyr.matchmaking.ratings import DEFAULT, SeatOutcome, rate

THREE_FIVE_EIGHT = "three_five_eight"


class RacedStore(InMemoryEventStore):
    """The in-memory store, letting another writer append just before the first append
    to a chosen stream: the race between a recorder's reads and its writes, made certain
    instead of left to timing. The appends themselves are the store's own."""

    races: dict[str, Callable[[], Awaitable[object]]]

    async def append(
        self,
        stream: str,
        expected_version: int,
        events: Sequence[NewEvent],
        *,
        request_id: str,
        metadata: Mapping[str, Any] | None = None,
        command_fingerprint: str | None = None,
        messages: Sequence[NewMessage] = (),
    ) -> AppendResult:
        race = self.races.pop(stream, None)
        if race is not None:
            await race()
        return await super().append(
            stream, expected_version, events, request_id=request_id, metadata=metadata,
            command_fingerprint=command_fingerprint, messages=messages,
        )  # fmt: skip


def skill_after(data: Mapping[str, Any]) -> Skill:
    return Skill.decode(data["after"])


async def test_a_rating_retried_after_a_conflict_counts_the_table_once() -> None:
    store = RacedStore()
    store.races = {}
    ours, theirs = RatingBook(store, Leaderboard()), RatingBook(store, Leaderboard())
    t1 = [SeatOutcome(0, "ana", 1, 20), SeatOutcome(1, "bo", 2, 0), SeatOutcome(2, "", 3, -20)]
    t0 = [SeatOutcome(0, "bo", 1, 20), SeatOutcome(1, "carla", 2, 0), SeatOutcome(2, "", 3, -20)]
    # We read Ana's and Bo's ratings and append Ana's; before Bo's append, another
    # replica rates Bo's other table t0.
    store.races[stream_of(THREE_FIVE_EIGHT, "bo")] = lambda: theirs.record(
        "t0", THREE_FIVE_EIGHT, t0
    )
    with pytest.raises(ConcurrencyConflict):
        await ours.record("t1", THREE_FIVE_EIGHT, t1)
    assert await ours.record("t1", THREE_FIVE_EIGHT, t1) == 1  # the redelivery: Bo only
    assert await ours.record("t1", THREE_FIVE_EIGHT, t1) == 0  # and never again

    ana = await store.read(stream_of(THREE_FIVE_EIGHT, "ana"))
    bo = await store.read(stream_of(THREE_FIVE_EIGHT, "bo"))
    assert [e.data["table"] for e in ana] == ["t1"]
    assert [e.data["table"] for e in bo] == ["t0", "t1"]
    # One application of t1 each, from the skills before it: Ana's as the failed attempt
    # rated her (Bo before t0); Bo's from his skill after t0 and Ana's before t1 — not
    # her skill after t1, which the retry finds in her stream.
    bo_after_t0 = rate(THREE_FIVE_EIGHT, t0, {"bo": DEFAULT, "carla": DEFAULT})["bo"]
    once = rate(THREE_FIVE_EIGHT, t1, {"ana": DEFAULT, "bo": DEFAULT})
    assert skill_after(ana[0].data) == once["ana"]
    assert Skill.decode(bo[1].data["before"]) == bo_after_t0
    once = rate(THREE_FIVE_EIGHT, t1, {"ana": DEFAULT, "bo": bo_after_t0})
    assert skill_after(bo[1].data) == once["bo"]
    assert (await ours.rating(THREE_FIVE_EIGHT, "bo")).skill == skill_after(bo[1].data)
