"""Subject names (kozyr.bus.subjects) and JetStream stream names (kozyr.bus.streams)."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kozyr.bus.connection import server_list
from kozyr.bus.streams import EventStreamSpec, jetstream_name
from kozyr.bus.subjects import (
    StreamName,
    category_filter,
    event_type_filter,
    parse_stream,
    parse_subject,
    presence_subject,
    stream_filter,
    subject_for,
)


def test_table_and_ticket_events_have_their_subjects() -> None:
    assert subject_for("table-7f3a", "CardPlayed") == "kozyr.table.7f3a.CardPlayed"
    assert subject_for("ticket-42", "TicketMatched") == "kozyr.ticket.42.TicketMatched"
    assert subject_for("table-7f3a", "CardPlayed", root="t123") == "t123.table.7f3a.CardPlayed"
    uuid_table = "table-0f0e0d0c-0b0a-4908-8706-050403020100"
    assert subject_for(uuid_table, "Dealt").split(".")[2] == uuid_table[len("table-") :]


def test_presence_and_filters() -> None:
    assert presence_subject("player-9") == "kozyr.presence.player-9"
    assert presence_subject("p1", root="x.y") == "x.y.presence.p1"
    assert stream_filter("table-7f3a") == "kozyr.table.7f3a.*"
    assert category_filter("table", "r") == "r.table.>"
    assert event_type_filter("table", "TableFinished") == "kozyr.table.*.TableFinished"


@pytest.mark.parametrize(
    ("stream", "event_type", "root"),
    [
        ("table7f3a", "CardPlayed", "kozyr"),
        ("Table-1", "CardPlayed", "kozyr"),
        ("table-a.b", "CardPlayed", "kozyr"),
        ("table-a b", "CardPlayed", "kozyr"),
        ("table-*", "CardPlayed", "kozyr"),
        ("table-1", "Card.Played", "kozyr"),
        ("table-1", ">", "kozyr"),
        ("table-1", "CardPlayed", "kozyr."),
        ("table-1", "CardPlayed", ""),
        ("table-1", "CardPlayed", "a..b"),
    ],
)
def test_names_that_would_break_subjects_are_refused(
    stream: str, event_type: str, root: str
) -> None:
    with pytest.raises(ValueError, match=r"stream name|event type|subject root"):
        subject_for(stream, event_type, root)


def test_presence_refuses_wildcards() -> None:
    for bad in ("a.b", "*", ">", ""):
        with pytest.raises(ValueError, match="player id"):
            presence_subject(bad)


_ids = st.text(st.sampled_from("abcxyz0189_-"), min_size=1, max_size=20)
_categories = st.from_regex(r"[a-z][a-z0-9_]{0,9}", fullmatch=True)
_types = st.from_regex(r"[A-Za-z][A-Za-z0-9_]{0,20}", fullmatch=True)


@given(category=_categories, aggregate=_ids, event_type=_types)
def test_parse_subject_inverts_subject_for(category: str, aggregate: str, event_type: str) -> None:
    stream = f"{category}-{aggregate}"
    assert parse_stream(stream) == StreamName(category, aggregate)
    assert parse_subject(subject_for(stream, event_type, "r1"), "r1") == (stream, event_type)


def test_parse_subject_refuses_foreign_subjects() -> None:
    for subject in ("other.table.1.X", "kozyr.table.1", "kozyr.presence.p1", "kozyr.table.1.X.Y"):
        with pytest.raises(ValueError, match="subject"):
            parse_subject(subject)


def test_jetstream_names_derive_from_the_root() -> None:
    assert jetstream_name("table") == "KOZYR_TABLE"
    assert jetstream_name("ticket", "t1a2b") == "T1A2B_TICKET"
    assert jetstream_name("table", "a.b-c") == "A_B-C_TABLE"
    spec = EventStreamSpec("table", root="t9")
    assert (spec.name, spec.subjects) == ("T9_TABLE", ["t9.table.>"])
    assert spec.config().duplicate_window == spec.duplicate_window


@pytest.mark.parametrize(
    "servers",
    [
        "nats://a:4222,nats://b:4222, nats://c:4222",
        ["nats://a:4222", "nats://b:4222", "nats://c:4222"],
    ],
)
def test_a_cluster_url_becomes_nats_pys_server_list(servers: str | list[str]) -> None:
    assert server_list(servers) == ["nats://a:4222", "nats://b:4222", "nats://c:4222"]
    assert server_list("nats://one:4222") == ["nats://one:4222"]
