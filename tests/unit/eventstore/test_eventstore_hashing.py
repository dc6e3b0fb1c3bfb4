"""Canonical JSON and the hash chain: the exact bytes an auditor must reproduce."""

from __future__ import annotations

import hashlib
from datetime import UTC, datetime, timedelta, timezone
from typing import Any
from uuid import UUID

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kozyr.eventstore.errors import InvalidEvent
from kozyr.eventstore.hashing import (
    GENESIS_HASH,
    MAX_SAFE_INTEGER,
    canonical_event,
    canonical_event_of_parts,
    canonical_json,
    chain_hash,
    check_json,
    fingerprint_command,
    fingerprint_events,
    format_timestamp,
)

EVENT_ID = UUID("0f0e0d0c-0b0a-4908-8706-050403020100")
RECORDED_AT = datetime(2025, 3, 4, 5, 6, 7, 89, tzinfo=UTC)


def test_the_canonical_event_is_the_documented_byte_string() -> None:
    canonical = canonical_event(
        event_id=EVENT_ID,
        stream="table-7f3a",
        position=2,
        event_type="CardPlayed",
        schema_version=1,
        data={"seat": 2, "card": "7♥", "a": [True, None]},
        metadata={"request_id": "r-1", "actor": "Ștefan"},
        recorded_at=RECORDED_AT,
    )
    expected = (
        '{"data":{"a":[true,null],"card":"7♥","seat":2},'
        '"event_id":"0f0e0d0c-0b0a-4908-8706-050403020100",'
        '"metadata":{"actor":"Ștefan","request_id":"r-1"},'
        '"position":2,"recorded_at":"2025-03-04T05:06:07.000089Z",'
        '"schema_version":1,"stream":"table-7f3a","type":"CardPlayed"}'
    ).encode()
    assert canonical == expected


def test_a_link_is_sha256_of_the_previous_hash_and_the_canonical_bytes() -> None:
    first = chain_hash(GENESIS_HASH, b"{}")
    assert first == hashlib.sha256(bytes(32) + b"{}").digest()
    assert chain_hash(first, b"[]") == hashlib.sha256(first + b"[]").digest()


def test_escapes_follow_json_canonicalization() -> None:
    text = 'quote" backslash\\ tab\t newline\n bell\x07 del\x7f é 🂡'
    assert (
        canonical_json({"t": text})
        == ('{"t":"quote\\" backslash\\\\ tab\\t newline\\n bell\\u0007 del\x7f é 🂡"}').encode()
    )


def test_keys_are_sorted_at_every_depth() -> None:
    assert canonical_json({"b": {"z": 1, "a": 2}, "a": [{"d": 0, "c": 0}]}) == (
        b'{"a":[{"c":0,"d":0}],"b":{"a":2,"z":1}}'
    )


@pytest.mark.parametrize(
    "value",
    [
        None,
        True,
        0,
        -MAX_SAFE_INTEGER,
        MAX_SAFE_INTEGER,
        "",
        "Khözör",
        [],
        {},
        {"a": [1, {"b": None}]},
    ],
)
def test_storable_values_pass_the_check(value: Any) -> None:
    check_json(value)


@pytest.mark.parametrize(
    ("value", "where"),
    [
        (0.5, "$"),
        ({"deep": [1, {"x": 1e3}]}, "$.deep[1].x"),
        (MAX_SAFE_INTEGER + 1, "$"),
        (-MAX_SAFE_INTEGER - 1, "$"),
        ("a\x00b", "$"),
        ({1: "a"}, "$"),
        ({"🂡": 1}, "$"),
        (b"bytes", "$"),
        (float("nan"), "$"),
    ],
)
def test_unstorable_values_are_refused_with_their_path(value: Any, where: str) -> None:
    with pytest.raises(InvalidEvent, match=r"^\$"):
        check_json(value)
    with pytest.raises(InvalidEvent) as raised:
        check_json(value)
    assert str(raised.value).startswith(where)


def test_lone_surrogates_cannot_be_encoded() -> None:
    with pytest.raises(InvalidEvent):
        canonical_json({"text": "\udc80"})


def test_timestamps_are_utc_with_microseconds() -> None:
    eastern = timezone(timedelta(hours=2))
    assert (
        format_timestamp(datetime(2025, 1, 1, 2, 0, tzinfo=eastern))
        == "2025-01-01T00:00:00.000000Z"
    )
    with pytest.raises(InvalidEvent):
        format_timestamp(datetime(2025, 1, 1))


def test_fingerprints_tell_commands_apart() -> None:
    base = fingerprint_events([("CardPlayed", 1, {"card": "7H"})])
    assert base == fingerprint_events([("CardPlayed", 1, {"card": "7H"})])
    assert base != fingerprint_events([("CardPlayed", 1, {"card": "8H"})])
    assert base != fingerprint_events([("CardPlayed", 2, {"card": "7H"})])
    assert base != fingerprint_events([("CardPlayed", 1, {"card": "7H"})] * 2)
    assert fingerprint_command("Play#1") == fingerprint_command("Play#1")
    assert fingerprint_command("Play#1") != fingerprint_command("Play#2")
    assert len({base, fingerprint_command("x")}) == 2


_TEXT = st.text(st.characters(exclude_characters="\x00", exclude_categories=["Cs"]))
_KEYS = st.text(st.characters(max_codepoint=0xFFFF, exclude_categories=["Cs"]), max_size=8)
_JSON_VALUES = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-MAX_SAFE_INTEGER, MAX_SAFE_INTEGER)
    | st.text(st.characters(exclude_characters="\x00", exclude_categories=["Cs"])),
    lambda inner: (
        st.lists(inner, max_size=4)
        | st.dictionaries(
            st.text(st.characters(max_codepoint=0xFFFF, exclude_categories=["Cs"])),
            inner,
            max_size=4,
        )
    ),
    max_leaves=12,
)


@given(
    data=st.dictionaries(
        st.text(max_size=8).filter(lambda k: "\x00" not in k), _JSON_VALUES, max_size=5
    ),
    metadata=st.dictionaries(
        st.sampled_from(["actor", "turn", "Ștefan", "é"]), _JSON_VALUES, max_size=4
    ),
    stream=st.text(min_size=1, max_size=20).filter(lambda s: "\x00" not in s),
    position=st.integers(1, MAX_SAFE_INTEGER),
    event_type=st.from_regex(r"[A-Za-z][A-Za-z0-9_]{0,20}", fullmatch=True),
    schema_version=st.integers(1, 1000),
)
def test_an_event_joined_from_its_canonical_parts_has_the_canonical_bytes(
    data: dict[str, Any],
    metadata: dict[str, Any],
    stream: str,
    position: int,
    event_type: str,
    schema_version: int,
) -> None:
    """Appends encode metadata, stream and timestamp once and join each event from parts."""
    try:
        check_json(data)
        check_json(metadata)
    except InvalidEvent:
        return
    whole = canonical_event(
        event_id=EVENT_ID,
        stream=stream,
        position=position,
        event_type=event_type,
        schema_version=schema_version,
        data=data,
        metadata=metadata,
        recorded_at=RECORDED_AT,
    )
    joined = canonical_event_of_parts(
        event_id=EVENT_ID,
        stream_json=canonical_json(stream),
        position=position,
        type_json=canonical_json(event_type),
        schema_version=schema_version,
        data_json=canonical_json(data),
        metadata_json=canonical_json(metadata),
        timestamp=format_timestamp(RECORDED_AT),
    )
    assert joined == whole
