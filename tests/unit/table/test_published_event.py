"""`published_event`: the one way the bots, the clock and matchmaking read a public
table event from NATS — the kind they want, nothing for another kind, and a body that
is not a `PublicTableEvent` logged and skipped rather than raised (a redelivery would
not make it readable)."""

from __future__ import annotations

from kozyr.api.table.v1 import events_pb2
from kozyr.tablewire.public import published_event
from tests.support.logs import every_log

SUBJECT = "kozyr.public.table.t1.TurnStarted"


def turn_started() -> bytes:
    event = events_pb2.PublicTableEvent(table_id="t1")
    event.turn_started.number = 7
    return event.SerializeToString()


def test_the_kind_asked_for_is_returned() -> None:
    event = published_event(turn_started(), SUBJECT, "turn_started")
    assert event is not None
    assert (event.table_id, event.turn_started.number) == ("t1", 7)


def test_any_kind_when_none_is_asked_for() -> None:
    event = published_event(turn_started(), SUBJECT)
    assert event is not None
    assert event.WhichOneof("event") == "turn_started"


def test_another_kind_is_none_and_not_logged() -> None:
    with every_log() as logs:
        assert published_event(turn_started(), SUBJECT, "table_opened") is None
    assert logs == []


def test_a_body_that_is_no_public_event_is_logged_and_skipped() -> None:
    with every_log() as logs:
        assert published_event(b"\xff\xff\xff", SUBJECT, "turn_started") is None
    assert [(line["event"], line["subject"]) for line in logs] == [
        ("not a public table event: skipped", SUBJECT)
    ]
