"""The clock's pure pieces: timer subjects and times, turn timer payloads, injectable
clocks, voice tokens and their grants, presence ids."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone

import jwt
import pytest

from kozyr.bus.schedules import (
    ScheduleStreamSpec,
    fire_filter,
    fire_subject,
    parse_fire_subject,
    schedule_subject,
    schedule_time,
)
from kozyr.clock.presence import has_presence, presence_bucket
from kozyr.clock.settings import ClockSettings
from kozyr.clock.turns import TurnTimer
from kozyr.clock.voice import TOKEN_TTL, VoiceRooms
from kozyr.runtime.clocks import ManualClock, SystemClock

TABLE = "123e4567-e89b-42d3-a456-426614174000"


def test_timer_subjects_round_trip() -> None:
    assert schedule_subject("turn", TABLE, "k") == f"k.clock.schedule.turn.{TABLE}"
    assert fire_subject("cover", "ana", "k.x") == "k.x.clock.fire.cover.ana"
    assert parse_fire_subject(fire_subject("turn", TABLE, "k"), "k") == ("turn", TABLE)
    assert fire_filter("k") == "k.clock.fire.>"
    assert ScheduleStreamSpec("k").config()["subjects"] == [
        "k.clock.schedule.>",
        "k.clock.fire.>",
    ]


@pytest.mark.parametrize(
    "subject", ["k.clock.fire.turn", "k.clock.fire.turn.a.b", "x.clock.fire.turn.a", "k.clock"]
)
def test_other_subjects_are_not_fired_timers(subject: str) -> None:
    with pytest.raises(ValueError, match="not a fired timer"):
        parse_fire_subject(subject, "k")


@pytest.mark.parametrize("key", ["", "a.b", "a b", "a*", ">"])
def test_timer_keys_are_single_tokens(key: str) -> None:
    with pytest.raises(ValueError, match="subject token"):
        schedule_subject("turn", key, "k")


def test_schedule_time_is_utc_with_milliseconds() -> None:
    at = datetime(2026, 11, 30, 17, 25, 1, 300_999, tzinfo=timezone(timedelta(hours=2)))
    assert schedule_time(at) == "@at 2026-11-30T15:25:01.300Z"
    with pytest.raises(ValueError, match="timezone"):
        schedule_time(datetime(2026, 1, 1))


def test_turn_timer_payload_round_trips() -> None:
    timer = TurnTimer(TABLE, 42, datetime(2026, 1, 2, 3, 4, 5, 600_000, tzinfo=UTC))
    assert TurnTimer.decode(timer.encode()) == timer


def test_clocks_map_their_time_to_the_wall() -> None:
    ahead = SystemClock(timedelta(seconds=9.5))
    instant = datetime(2026, 1, 1, tzinfo=UTC)
    assert ahead.wall_time_of(instant) == instant - timedelta(seconds=9.5)
    assert ahead.now() - datetime.now(UTC) > timedelta(seconds=9)
    manual = ManualClock(instant)
    manual.advance(180)
    assert manual.now() == instant + timedelta(minutes=3)
    assert manual.wall_time_of(instant) == instant


def test_presence_ids_and_bucket() -> None:
    assert has_presence("ana_B-7")
    assert not has_presence("ana.b")
    assert not has_presence("a" * 129)
    assert not has_presence("")
    assert presence_bucket("kozyr") == "KOZYR_PRESENCE"


def test_voice_needs_all_three_settings() -> None:
    assert VoiceRooms.from_settings(ClockSettings.load(livekit_url="wss://x")) is None
    rooms = VoiceRooms.from_settings(
        ClockSettings.load(
            livekit_url="wss://lk", livekit_api_key="key", livekit_api_secret="s" * 32
        )
    )
    assert rooms is not None
    now = datetime.now(UTC)
    admitted = rooms.admit("ana", TABLE, now)
    claims = jwt.decode(admitted.token, "s" * 32, algorithms=["HS256"])
    assert claims["sub"] == "ana"
    assert claims["iss"] == "key"
    assert claims["video"]["room"] == f"kozyr-table-{TABLE}" == admitted.room
    assert claims["video"]["roomJoin"] is True
    assert claims["video"]["canPublishData"] is False
    assert admitted.expires_at == now + TOKEN_TTL
    with pytest.raises(jwt.InvalidSignatureError):
        jwt.decode(admitted.token, "t" * 32, algorithms=["HS256"])
