"""The chain walk on its own (kozyr.eventstore.verification): every kind of damage."""

from __future__ import annotations

import dataclasses
from typing import Any

from kozyr.bus.relay import Backoff
from kozyr.eventstore import InMemoryEventStore, NewEvent, RecordedEvent, StreamHead, VerifyFailure
from kozyr.eventstore.verification import verify_events


async def recorded(count: int) -> tuple[StreamHead, list[RecordedEvent]]:
    store = InMemoryEventStore()
    events = [NewEvent("CardPlayed", {"n": n}) for n in range(count)]
    await store.append("table-v", 0, events, request_id="r")
    head = await store.head("table-v")
    assert head is not None
    return head, await store.read("table-v")


async def test_an_intact_stream_verifies() -> None:
    head, events = await recorded(4)
    report = verify_events("table-v", head, events)
    assert report.ok
    assert (report.checked, report.version) == (4, 4)


async def test_a_missing_event_is_a_position_gap_at_its_position() -> None:
    head, events = await recorded(4)
    report = verify_events("table-v", head, [events[0], events[2], events[3]])
    assert (report.failure, report.first_bad_position) == (VerifyFailure.POSITION_GAP, 2)


async def test_a_missing_last_event_is_a_head_mismatch() -> None:
    head, events = await recorded(4)
    report = verify_events("table-v", head, events[:3])
    assert (report.failure, report.first_bad_position) == (VerifyFailure.HEAD_MISMATCH, 4)


async def test_a_head_hash_that_is_not_the_last_hash_is_a_head_mismatch() -> None:
    head, events = await recorded(2)
    forged = dataclasses.replace(head, head_hash="00" * 32)
    report = verify_events("table-v", forged, events)
    assert (report.failure, report.first_bad_position) == (VerifyFailure.HEAD_MISMATCH, 2)


async def test_events_without_a_head_are_a_head_mismatch() -> None:
    _, events = await recorded(2)
    report = verify_events("table-v", None, events)
    assert (report.failure, report.first_bad_position) == (VerifyFailure.HEAD_MISMATCH, 1)


async def test_any_altered_field_breaks_the_link() -> None:
    head, events = await recorded(3)
    changes: list[dict[str, Any]] = [
        {"type": "CardTaken"},
        {"schema_version": 2},
        {"metadata": {"request_id": "forged"}},
        {"recorded_at": events[1].recorded_at.replace(microsecond=1)},
        {"hash": "ff" * 32},
        {"data": {"n": 1.0}},
    ]
    for change in changes:
        altered = [events[0], dataclasses.replace(events[1], **change), events[2]]
        report = verify_events("table-v", head, altered)
        assert (report.failure, report.first_bad_position) == (VerifyFailure.HASH_MISMATCH, 2)


def test_backoff_grows_to_its_cap_with_jitter() -> None:
    backoff = Backoff(initial=0.1, maximum=1.0, factor=2.0)
    for failures, ceiling in [(1, 0.1), (2, 0.2), (3, 0.4), (4, 0.8), (5, 1.0), (50, 1.0)]:
        for _ in range(20):
            assert ceiling / 2 <= backoff.delay(failures) <= ceiling
