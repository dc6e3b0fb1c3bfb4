"""The wire form of events on NATS (kozyr.bus.codec)."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from uuid import uuid4

import pytest

from kozyr.bus.codec import (
    MSG_ID_HEADER,
    MalformedEventMessage,
    decode_event,
    encode_event,
    event_headers,
)
from kozyr.eventstore.model import RecordedEvent


def sample() -> RecordedEvent:
    return RecordedEvent(
        event_id=uuid4(),
        stream="table-7f3a",
        position=3,
        global_position=1041,
        type="CardPlayed",
        schema_version=2,
        data={"card": "7♥", "seat": 1, "trick": [None, True]},
        metadata={"request_id": "r", "actor": "Ștefan"},
        recorded_at=datetime(2025, 5, 6, 7, 8, 9, 123456, tzinfo=UTC),
        hash="ab" * 32,
    )


def test_an_event_survives_the_wire() -> None:
    event = sample()
    assert decode_event(encode_event(event)) == event


def test_the_body_is_plain_json_and_the_headers_route_it() -> None:
    event = sample()
    body = json.loads(encode_event(event))
    assert body["recorded_at"] == "2025-05-06T07:08:09.123456Z"
    assert body["event_id"] == str(event.event_id)
    headers = event_headers(event)
    assert headers[MSG_ID_HEADER] == str(event.event_id)
    assert headers["Kozyr-Position"] == "3"
    assert headers["Kozyr-Type"] == "CardPlayed"


@pytest.mark.parametrize(
    "payload",
    [
        b"not json",
        b"[]",
        b'{"event_id": "x"}',
        json.dumps({**json.loads(encode_event(sample())), "position": "3"}).encode(),
        json.dumps({**json.loads(encode_event(sample())), "position": True}).encode(),
        json.dumps({**json.loads(encode_event(sample())), "data": []}).encode(),
    ],
    # Named, not shown: the samples' event ids are random, and every xdist worker must
    # collect the same test ids.
    ids=["not-json", "a-list", "no-fields", "position-a-string", "position-a-bool", "data-a-list"],
)
def test_malformed_messages_are_recognised(payload: bytes) -> None:
    with pytest.raises(MalformedEventMessage):
        decode_event(payload)
