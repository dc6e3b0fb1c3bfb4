"""Leavers (docs/leavers.md): who abandoned a table, the schedule of strikes and cooldowns,
the lobby's decisions and fold, and the rating of a leaver and his partners. Pure."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from kozyr.matchmaking import decisions
from kozyr.matchmaking.leavers import (
    CLEAN_PER_STEP,
    Record,
    SeatFacts,
    abandoned,
    cooldown,
    cooldown_end,
)
from kozyr.matchmaking.lobby import (
    QueueOptions,
    Skill,
    decode,
    encode,
    fold,
)
from kozyr.matchmaking.ratings import DEFAULT, SeatOutcome, ordinal, rate
from kozyr.runtime.errors import KozyrError

THREE_FIVE_EIGHT = "three_five_eight"
KHOZOR_TEAMS = "khozor_teams"

NOW = datetime(2030, 1, 1, 12, tzinfo=UTC)


@pytest.mark.parametrize(
    ("facts", "left"),
    [
        (SeatFacts("ana", 40, 0, 0, False), False),
        (SeatFacts("ana", 40, 5, 10, False), False),  # back as long as away: clean
        (SeatFacts("ana", 40, 5, 9, False), True),  # more than half since his first cover
        (SeatFacts("ana", 40, 1, 1, True), True),  # away at the end
        (SeatFacts("", 40, 40, 40, True), False),  # a computer seat never leaves
    ],
)
def test_abandoned_is_away_at_the_end_or_covered_over_half_since_first_cover(
    facts: SeatFacts, left: bool
) -> None:
    assert abandoned(facts) is left


def test_the_first_strike_is_a_warning_then_cooldowns_grow_and_stay_at_a_day() -> None:
    assert cooldown(1) == timedelta(0)
    assert cooldown_end(1, NOW) is None
    lengths = [cooldown(n) for n in range(2, 8)]
    assert lengths[:4] == [
        timedelta(minutes=5), timedelta(minutes=15), timedelta(hours=1), timedelta(hours=24)
    ]  # fmt: skip
    assert lengths[4:] == [timedelta(hours=24)] * 2
    assert cooldown_end(3, NOW) == NOW + timedelta(minutes=15)


LEFT = SeatFacts("ana", 20, 15, 15, True)
CLEAN = SeatFacts("bo", 20)
CARLA = SeatFacts("carla", 20)


Events = list[decisions.Event]


def ended(lobby_events: Events, table: str, *facts: SeatFacts, now: datetime = NOW) -> Events:
    lobby = fold(lobby_events)
    return lobby_events + decisions.table_ended(lobby, table, facts, now)


def enter(events: Events, player: str, now: datetime) -> None:
    decisions.enter(
        fold(events), ticket_id=f"t-{now.isoformat()}", players=(player,), party_id="",
        game=THREE_FIVE_EIGHT, options=QueueOptions(), fill_now=False,
        skills={player: DEFAULT}, now=now,
    )  # fmt: skip


def test_a_warning_first_then_a_cooldown_that_refuses_tickets_until_it_ends() -> None:
    events = ended([], "t1", LEFT, CLEAN, CARLA)
    assert fold(events).leavers["ana"] == Record(1, 0, None)
    enter(events, "ana", NOW)  # warned only: he may queue
    events = ended(events, "t2", LEFT, CLEAN)
    until = NOW + timedelta(minutes=5)
    assert fold(events).leavers["ana"].until == until
    with pytest.raises(KozyrError) as refused:
        enter(events, "ana", until - timedelta(seconds=1))
    assert refused.value.reason == "ABANDON_COOLDOWN"
    assert refused.value.metadata["until"] == until.isoformat()
    enter(events, "ana", until)
    enter(events, "bo", NOW)  # the clean player is not touched
    assert "bo" not in fold(events).leavers


def test_a_redelivered_finish_judges_nobody_twice() -> None:
    events = ended([], "t1", LEFT, CLEAN)
    assert decisions.table_ended(fold(events), "t1", (LEFT, CLEAN), NOW) == []


def test_a_table_with_one_person_judges_nobody() -> None:
    events = ended([], "t1", LEFT, SeatFacts(""), SeatFacts(""))
    assert fold(events).leavers == {}
    assert [type(e).__name__ for e in events] == ["TableEnded"]


def test_clean_tables_take_a_strike_back_step_by_step() -> None:
    events = ended(ended([], "a", LEFT, CLEAN), "b", LEFT, CLEAN)
    assert fold(events).leavers["ana"].strikes == 2
    back = SeatFacts("ana", 20)
    for n in range(CLEAN_PER_STEP - 1):
        events = ended(events, f"c{n}", back, CLEAN)
    assert fold(events).leavers["ana"] == Record(2, CLEAN_PER_STEP - 1, NOW + timedelta(minutes=5))
    events = ended(events, "last", back, CLEAN)
    assert fold(events).leavers["ana"].strikes == 1
    for n in range(CLEAN_PER_STEP):
        events = ended(events, f"d{n}", back, CLEAN)
    assert "ana" not in fold(events).leavers, "a clean record again"


def test_an_admin_lift_ends_the_cooldown_and_takes_the_latest_strike_back() -> None:
    events = ended(ended([], "a", LEFT, CLEAN), "b", LEFT, CLEAN)
    lobby = fold(events)
    lifted = decisions.lift_penalty(lobby, "ana", "root", "a power cut", NOW)
    after = fold(events + lifted)
    assert after.leavers["ana"] == Record(1, 0, None)
    enter(events + lifted, "ana", NOW)
    assert decisions.lift_penalty(lobby, "bo", "root", "x", NOW) == []


def test_the_snapshot_keeps_the_records() -> None:
    events = ended(ended([], "a", LEFT, CLEAN), "b", LEFT, CLEAN)
    lobby = fold(events)
    assert decode(encode(lobby)).leavers == lobby.leavers


def test_a_leaver_is_rated_last_at_three_five_eight() -> None:
    table = [
        SeatOutcome(0, "ana", 1, 20),
        SeatOutcome(1, "bo", 2, 10),
        SeatOutcome(2, "carla", 3, 0),
    ]
    after = rate(THREE_FIVE_EIGHT, table, {}, frozenset({"ana"}))
    assert ordinal(after["ana"]) < ordinal(after["carla"]) < ordinal(after["bo"])
    assert ordinal(after["ana"]) < ordinal(DEFAULT)


def test_a_khozor_leavers_team_loses_and_his_partners_do_not_fall() -> None:
    table = [SeatOutcome(s, f"p{s}", 1 if s % 2 == 0 else 2, 0) for s in range(8)]
    skills = {f"p{s}": Skill(25.0, 5.0) for s in range(8)}
    after = rate(KHOZOR_TEAMS, table, skills, frozenset({"p0"}))
    assert ordinal(after["p0"]) < ordinal(skills["p0"]), "the leaver falls"
    for partner in ("p2", "p4", "p6"):
        assert after[partner] == skills[partner], "his partners are protected"
    for rival in ("p1", "p3", "p5", "p7"):
        assert ordinal(after[rival]) > ordinal(skills[rival]), "the other team won"
