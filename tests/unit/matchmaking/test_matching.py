"""Matchmaking's pure rules: the lobby's fold, the commands' checks, forming matches
(close ratings, search expansion, computers after fill_after, parties kept together,
balanced Khözör teams), the CreateTable request, and OpenSkill ratings."""

from __future__ import annotations

import itertools
import json
from collections import OrderedDict
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from kozyr.api.common.v1 import games_pb2, seats_pb2
from kozyr.matchmaking import decisions
from kozyr.matchmaking import events as lobby_events
from kozyr.matchmaking.events import (
    LobbyEvent,
    MatchDecided,
    MatchReleased,
    MatchSeated,
    PartyDisbanded,
    PartyLeft,
    TableEnded,
    TableNoticed,
    UnknownLobbyEvent,
)
from kozyr.matchmaking.lobby import (
    Lobby,
    QueueOptions,
    Skill,
    decode,
    encode,
    fold,
)
from kozyr.matchmaking.matching import (
    MatchRules,
    best_split,
    estimated_wait,
    find_matches,
    level_for,
    splittable,
)
from kozyr.matchmaking.ratebook import Leaderboard, stream_of
from kozyr.matchmaking.ratings import DEFAULT, MODEL, SeatOutcome, ordinal, rate, win_probability
from kozyr.matchmaking.tablemaking import create_table_request
from kozyr.runtime.errors import FailedPrecondition, PermissionDenied

THREE_FIVE_EIGHT = "three_five_eight"
KHOZOR_TEAMS = "khozor_teams"

T0 = datetime(2026, 11, 30, 12, 0, tzinfo=UTC)
RULES = MatchRules(fill_after=60, base_gap=3, widen_per_second=0.25, max_gap=25)


def at(seconds: float) -> datetime:
    return T0 + timedelta(seconds=seconds)


def open_ticket(
    lobby: Lobby,
    players: tuple[str, ...],
    *,
    game: str = THREE_FIVE_EIGHT,
    mu: float | list[float] = 25.0,
    when: float = 0,
    fill_now: bool = False,
    party: str = "",
    options: QueueOptions | None = None,
) -> str:
    mus = mu if isinstance(mu, list) else [mu] * len(players)
    ticket_id = decisions.derived_id("ticket", players[0], f"r{lobby.version}")
    events = decisions.enter(
        lobby, ticket_id=ticket_id, players=players, party_id=party, game=game,
        options=options or QueueOptions(), fill_now=fill_now,
        skills={p: Skill(m, 3.0) for p, m in zip(players, mus, strict=True)}, now=at(when),
    )  # fmt: skip
    fold(events, lobby)
    return ticket_id


def matches(lobby: Lobby, now: float) -> list[dict[str, Any]]:
    events = find_matches(lobby, at(now), RULES)
    fold(events, lobby)
    return [lobby_events.encode(e)[1] for e in events if isinstance(e, MatchDecided)]


def players_of(match: dict[str, Any]) -> list[str | None]:
    return [s.get("player") for s in match["seats"]]


# ---------------------------------------------------------------------------- 3-5-8


def test_three_close_players_make_a_table() -> None:
    lobby = Lobby()
    for name, mu in (("ana", 25.0), ("bogdan", 26.0), ("carla", 24.5)):
        open_ticket(lobby, (name,), mu=mu)
    [match] = matches(lobby, 1)
    assert sorted(p for p in players_of(match) if p) == ["ana", "bogdan", "carla"]
    assert len(match["tickets"]) == 3
    assert all(t.match_id for t in lobby.tickets.values())


def test_the_window_widens_with_waiting() -> None:
    lobby = Lobby()
    open_ticket(lobby, ("ana",), mu=20.0)
    open_ticket(lobby, ("bogdan",), mu=25.0)
    open_ticket(lobby, ("carla",), mu=30.0)
    assert matches(lobby, 1) == []  # a spread of 10 against a window of 3.25
    assert matches(lobby, 20) == []  # window 8
    [match] = matches(lobby, 29)  # window 10.25
    assert len([p for p in players_of(match) if p]) == 3


def test_a_newcomer_is_not_dragged_into_an_old_tickets_window() -> None:
    lobby = Lobby()
    open_ticket(lobby, ("ana",), mu=20.0)
    open_ticket(lobby, ("bogdan",), mu=25.0)
    open_ticket(lobby, ("carla",), mu=30.0, when=29)  # just came: window 3
    assert matches(lobby, 29) == []


def test_computers_fill_after_fill_after_and_on_request() -> None:
    lobby = Lobby()
    open_ticket(lobby, ("ana",), mu=15.0)
    assert matches(lobby, 59) == []
    [match] = matches(lobby, 60)
    assert players_of(match).count(None) == 2
    assert {s["computer"] for s in match["seats"] if "computer" in s} == {"easy"}

    lobby = Lobby()
    open_ticket(lobby, ("bogdan",), fill_now=True)
    [match] = matches(lobby, 0)
    assert {s.get("computer") for s in match["seats"]} == {None, "normal"}


def test_tickets_meet_only_tickets_that_chose_the_same_table_options() -> None:
    """A player's cover_after_seconds and computer_level are part of his ticket's
    options: tickets that chose other ones never share a table, tickets that chose the
    same do, and the table is opened with them (computers at the chosen level, not the
    one the ratings suggest)."""
    lobby = Lobby()
    hard_slow = QueueOptions(cover_after_seconds=300, computer_level="hard")
    open_ticket(lobby, ("ana",), mu=15.0, options=hard_slow)
    open_ticket(lobby, ("bogdan",), mu=15.0, options=QueueOptions(cover_after_seconds=300))
    open_ticket(lobby, ("carla",), mu=15.0, options=QueueOptions(computer_level="hard"))
    assert matches(lobby, 1) == []  # three players, three different choices
    open_ticket(lobby, ("dan",), mu=15.0, options=hard_slow, fill_now=True)
    [match] = matches(lobby, 2)
    assert sorted(p for p in players_of(match) if p) == ["ana", "dan"]
    assert {s["computer"] for s in match["seats"] if "computer" in s} == {"hard"}
    request = create_table_request(lobby.matches[match["match"]])
    assert request.table.cover_after_seconds == 300
    assert request.table.computer_level == seats_pb2.COMPUTER_LEVEL_HARD
    assert [s.level for s in request.seats if s.computer] == [seats_pb2.COMPUTER_LEVEL_HARD]


def test_queue_options_keep_their_stored_shape_when_nothing_is_chosen() -> None:
    """Events written before players could choose table options decode as "not chosen";
    the game's options are the game's own names (GameInfo.options), defaults left out:
    an event of before that spelled them all out means the same as one that does not,
    and still encodes back as it was stored; chosen options round-trip."""
    assert QueueOptions().encode() == {}
    old = {"must_trump": False, "turn_seconds": 0}
    assert QueueOptions.decode(old) == QueueOptions() == QueueOptions.decode({})
    assert QueueOptions.decode(old).encode() == old
    given = QueueOptions.decode({"must_trump": True, "turn_seconds": 30})
    assert given == QueueOptions.of({"turn_seconds": 30, "must_trump": True})
    assert given.game == (("must_trump", True), ("turn_seconds", 30))
    assert given != QueueOptions.of({"turn_seconds": 30})
    chosen = QueueOptions.of({"turn_seconds": 20}, 60, "easy")
    assert QueueOptions.decode(json.loads(json.dumps(chosen.encode()))) == chosen
    request = create_table_request(
        decisions_match(QueueOptions()),
    )
    assert not request.HasField("table")


def decisions_match(options: QueueOptions) -> Any:
    """A private match of Ana alone with computers, of these options."""
    lobby = Lobby()
    fold(
        decisions.private_match(
            lobby, player_id="ana", match_id="m", game=THREE_FIVE_EIGHT, options=options,
            fill=True, level="normal", now=T0,
        ),
        lobby,
    )  # fmt: skip
    return lobby.matches["m"]


def test_a_party_sits_at_one_table() -> None:
    lobby = Lobby()
    open_ticket(lobby, ("ana", "bogdan"), party="p")
    open_ticket(lobby, ("carla", "dan"), party="q")
    open_ticket(lobby, ("eva",))
    [match] = matches(lobby, 1)
    names = {p for p in players_of(match) if p}
    assert {"ana", "bogdan"} <= names or {"carla", "dan"} <= names
    assert len(names) == 3
    assert len(lobby.searching()) == 1  # the other party waits whole


def test_estimated_wait_never_passes_the_fill() -> None:
    lobby = Lobby()
    ticket_id = open_ticket(lobby, ("ana",))
    ticket = lobby.tickets[ticket_id]
    assert estimated_wait(lobby, ticket, at(10), RULES) == timedelta(seconds=50)
    assert estimated_wait(lobby, ticket, at(70), RULES) == timedelta(0)


def test_expired_tickets_leave_the_queue() -> None:
    lobby = Lobby()
    rules = MatchRules(fill_after=10_000, ticket_ttl=100)
    ticket_id = open_ticket(lobby, ("ana",))
    fold(find_matches(lobby, at(100), rules), lobby)
    assert lobby.outcomes[ticket_id].state == "expired"
    assert lobby.ticket_of("ana") is None


# ---------------------------------------------------------------------------- Khözör


def test_khozor_keeps_parties_on_one_team() -> None:
    lobby = Lobby()
    open_ticket(lobby, ("a1", "a2", "a3", "a4"), game=KHOZOR_TEAMS, party="a")
    open_ticket(lobby, ("b1", "b2"), game=KHOZOR_TEAMS, party="b")
    open_ticket(lobby, ("c1",), game=KHOZOR_TEAMS)
    open_ticket(lobby, ("d1",), game=KHOZOR_TEAMS)
    [match] = matches(lobby, 1)
    seats = players_of(match)
    assert None not in seats
    team = {p: i % 2 for i, p in enumerate(seats)}
    assert len({team[p] for p in ("a1", "a2", "a3", "a4")}) == 1
    assert team["b1"] == team["b2"] != team["a1"]


def test_khozor_teams_are_the_most_balanced_split() -> None:
    lobby = Lobby()
    mus = [20.0, 21.0, 22.0, 23.0, 24.0, 26.0, 27.0, 29.0]
    for i, mu in enumerate(mus):
        open_ticket(lobby, (f"p{i}",), game=KHOZOR_TEAMS, mu=mu, when=0)
    [match] = matches(lobby, 40)  # window 13: all eight acceptable
    seats = players_of(match)
    skill = {f"p{i}": Skill(mu, 3.0) for i, mu in enumerate(mus)}
    chosen = win_probability([skill[p] for p in seats[0::2]], [skill[p] for p in seats[1::2]])  # type: ignore[index]
    for side in itertools.combinations(sorted(skill), 4):
        other = [p for p in skill if p not in side]
        p = win_probability([skill[x] for x in side], [skill[x] for x in other])
        assert abs(chosen - 0.5) <= abs(p - 0.5) + 1e-12
    assert abs(chosen - 0.5) < 0.05


def test_khozor_fill_puts_computers_on_both_teams_as_needed() -> None:
    lobby = Lobby()
    open_ticket(lobby, ("a1", "a2", "a3"), game=KHOZOR_TEAMS, party="a", fill_now=True)
    open_ticket(lobby, ("b1", "b2", "b3"), game=KHOZOR_TEAMS, party="b")
    [match] = matches(lobby, 0)
    seats = players_of(match)
    assert seats.count(None) == 2
    team = {p: i % 2 for i, p in enumerate(seats) if p}
    assert len({team[p] for p in ("a1", "a2", "a3")}) == 1
    assert len({team[p] for p in ("b1", "b2", "b3")}) == 1
    assert team["a1"] != team["b1"]


@pytest.mark.parametrize(
    ("sizes", "fits"),
    [([3, 3, 2], False), ([3, 1, 3, 1], True), ([4, 4], True), ([4, 3, 1], True),
     ([2, 2, 2, 2], True), ([3, 3], True), ([4, 4, 1], False), ([3, 2, 2], True)],
)  # fmt: skip
def test_parties_fit_two_teams_of_four_only_whole(sizes: list[int], fits: bool) -> None:
    assert splittable(sizes, 4) is fits


def test_a_split_that_breaks_a_party_is_never_made() -> None:
    lobby = Lobby()
    a = open_ticket(lobby, ("a1", "a2", "a3"), game=KHOZOR_TEAMS, party="a")
    b = open_ticket(lobby, ("b1", "b2", "b3"), game=KHOZOR_TEAMS, party="b")
    c = open_ticket(lobby, ("c1", "c2"), game=KHOZOR_TEAMS, party="c")
    assert best_split([lobby.tickets[t] for t in (a, b, c)]) is None
    assert matches(lobby, 1) == []  # 3 + 3 + 2: no two teams of four


# ---------------------------------------------------------------------------- commands


def test_one_active_ticket_per_player_and_none_while_seated() -> None:
    lobby = Lobby()
    ticket_id = open_ticket(lobby, ("ana",))
    with pytest.raises(FailedPrecondition) as queued:
        open_ticket(lobby, ("ana",))
    assert queued.value.reason == "ALREADY_QUEUED"
    open_ticket(lobby, ("bogdan",))
    open_ticket(lobby, ("carla",))
    [match] = matches(lobby, 1)
    fold([MatchSeated(match["match"], "t-1", at(2).isoformat())], lobby)
    assert lobby.outcomes[ticket_id].table_id == "t-1"
    with pytest.raises(FailedPrecondition) as seated:
        open_ticket(lobby, ("ana",))
    assert seated.value.reason == "ALREADY_SEATED"
    fold([TableEnded("t-1")], lobby)
    open_ticket(lobby, ("ana",))


def test_a_table_opened_elsewhere_seats_its_players_until_it_ends() -> None:
    lobby = Lobby()
    seats = [("ana", 0), ("bogdan", 2)]
    fold(decisions.table_noticed(lobby, "op-1", THREE_FIVE_EIGHT, seats, at(1)), lobby)
    fold(decisions.table_noticed(lobby, "op-2", THREE_FIVE_EIGHT, [("ana", 1)], at(2)), lobby)
    assert decisions.table_noticed(lobby, "op-1", THREE_FIVE_EIGHT, seats, at(3)) == []
    assert lobby.seated == {"ana": ["op-1", "op-2"], "bogdan": ["op-1"]}
    with pytest.raises(FailedPrecondition) as seated:
        open_ticket(lobby, ("ana",))
    assert (seated.value.reason, seated.value.metadata["tableId"]) == ("ALREADY_SEATED", "op-2")
    fold(decisions.table_ended(lobby, "op-2"), lobby)
    assert decisions.table_ended(lobby, "op-2") == []  # a redelivered TableFinished
    assert lobby.table_of("ana") == "op-1"  # still at her other table
    fold(decisions.table_ended(lobby, "op-1"), lobby)
    open_ticket(lobby, ("ana",))
    open_ticket(lobby, ("bogdan",))


def test_a_table_opened_after_it_ended_seats_nobody() -> None:
    """TableOpened and TableFinished come through two consumers: the finish may be
    handled first, and must win."""
    lobby = Lobby()
    fold(decisions.table_ended(lobby, "t-9"), lobby)
    assert decisions.table_noticed(lobby, "t-9", THREE_FIVE_EIGHT, [("ana", 0)], at(1)) == []
    fold([TableNoticed("t-9", THREE_FIVE_EIGHT, (("ana", 0),), at(1).isoformat())], lobby)
    assert lobby.table_of("ana") is None
    assert decode(json.loads(json.dumps(encode(lobby)))).ended == lobby.ended


def test_cancel_is_for_the_tickets_players_and_not_once_placing() -> None:
    lobby = Lobby()
    ticket_id = open_ticket(lobby, ("ana",))
    with pytest.raises(PermissionDenied):
        decisions.cancel(lobby, "bogdan", ticket_id)
    fold(decisions.cancel(lobby, "ana", ticket_id), lobby)
    assert decisions.cancel(lobby, "ana", ticket_id) == []  # already cancelled
    open_ticket(lobby, ("ana",), fill_now=True)
    matches(lobby, 0)
    placing = lobby.ticket_of("ana")
    assert placing is not None
    with pytest.raises(FailedPrecondition) as late:
        decisions.cancel(lobby, "ana", placing.ticket_id)
    assert late.value.reason == "TICKET_PLACING"


def test_parties_form_join_by_code_and_queue_whole() -> None:
    lobby = Lobby()
    fold(decisions.create_party(lobby, "ana", "party-1"), lobby)
    code = lobby.parties["party-1"].code
    for friend in ("bogdan", "carla", "dan"):
        fold(decisions.join_party(lobby, friend, code.lower())[1], lobby)
    with pytest.raises(FailedPrecondition) as full:
        decisions.join_party(lobby, "eva", code)
    assert full.value.reason == "PARTY_FULL"
    with pytest.raises(PermissionDenied):
        decisions.queue_players(lobby, "bogdan", "party-1", KHOZOR_TEAMS)
    with pytest.raises(FailedPrecondition) as big:
        decisions.queue_players(lobby, "ana", "party-1", THREE_FIVE_EIGHT)
    assert big.value.reason == "PARTY_TOO_BIG"
    assert decisions.queue_players(lobby, "ana", "party-1", KHOZOR_TEAMS) == (
        "ana", "bogdan", "carla", "dan",
    )  # fmt: skip
    disbanded, events = decisions.leave_party(lobby, "dan")
    fold(events, lobby)
    assert not disbanded
    assert lobby.party_with("dan") is None
    disbanded, events = decisions.leave_party(lobby, "ana")
    fold(events, lobby)
    assert disbanded
    assert lobby.parties == {}
    assert lobby.party_of == {}


def test_joining_ones_own_party_again_is_refused_by_name() -> None:
    """A member (or the leader) who enters his own party's code again is told he is in
    it already, with a reason of its own, and nothing is appended."""
    lobby = Lobby()
    fold(decisions.create_party(lobby, "ana", "p"), lobby)
    code = lobby.parties["p"].code
    fold(decisions.join_party(lobby, "bogdan", code)[1], lobby)
    for player in ("ana", "bogdan"):
        with pytest.raises(FailedPrecondition) as again:
            decisions.join_party(lobby, player, code)
        assert again.value.reason == "ALREADY_IN_THIS_PARTY"
        assert again.value.metadata == {"partyId": "p"}
    assert lobby.parties["p"].members == ["ana", "bogdan"]


def test_a_private_table_seats_the_party_and_computers() -> None:
    lobby = Lobby()
    fold(decisions.create_party(lobby, "ana", "p"), lobby)
    fold(decisions.join_party(lobby, "bogdan", lobby.parties["p"].code)[1], lobby)
    events = decisions.private_match(
        lobby, player_id="ana", match_id="m", game=KHOZOR_TEAMS, options=QueueOptions(),
        fill=True, level="easy", now=T0,
    )  # fmt: skip
    fold(events, lobby)
    match = lobby.matches["m"]
    assert [s.player_id for s in match.seats[:2]] == ["ana", "bogdan"]
    request = create_table_request(match)
    assert request.request_id == "match:m"
    assert request.game == games_pb2.GAME_KHOZOR_TEAMS
    assert [s.level for s in request.seats[2:]] == [seats_pb2.COMPUTER_LEVEL_EASY] * 6
    assert not request.table.hints_off, "a private table allows hints (issue 26)"
    with pytest.raises(FailedPrecondition) as placing:
        open_ticket(lobby, ("bogdan",))
    assert placing.value.reason == "ALREADY_PLACING"
    with pytest.raises(FailedPrecondition):
        decisions.private_match(
            lobby, player_id="ana", match_id="m2", game=THREE_FIVE_EIGHT,
            options=QueueOptions(), fill=False, level="easy", now=T0,
        )  # fmt: skip


def test_derived_ids_are_stable_per_player_and_request() -> None:
    assert decisions.derived_id("ticket", "ana", "r") == decisions.derived_id("ticket", "ana", "r")
    assert decisions.derived_id("ticket", "ana", "r") != decisions.derived_id("ticket", "bo", "r")


def test_levels_suit_the_rating() -> None:
    assert level_for(15.0) == "easy"
    assert level_for(25.0) == "normal"
    assert level_for(32.0) == "hard"


# ---------------------------------------------------------------------------- ratings


def test_three_five_eight_places_move_ratings_and_shared_places_agree() -> None:
    seats = [SeatOutcome(0, "ana", 1, 30), SeatOutcome(1, "bogdan", 1, 30),
             SeatOutcome(2, "carla", 3, -60)]  # fmt: skip
    after = rate(THREE_FIVE_EIGHT, seats, {})
    assert after["ana"].mu == pytest.approx(after["bogdan"].mu)
    assert after["ana"].mu > DEFAULT.mu > after["carla"].mu
    assert all(s.sigma < DEFAULT.sigma for s in after.values())


def test_khozor_winners_gain_and_computers_are_not_rated() -> None:
    seats = [SeatOutcome(i, f"p{i}" if i < 6 else "", 1 if i % 2 == 0 else 2, 0)
             for i in range(8)]  # fmt: skip
    after = rate(KHOZOR_TEAMS, seats, {})
    assert set(after) == {f"p{i}" for i in range(6)}
    assert all(after[f"p{i}"].mu > DEFAULT.mu for i in (0, 2, 4))
    assert all(after[f"p{i}"].mu < DEFAULT.mu for i in (1, 3, 5))
    assert rate(KHOZOR_TEAMS, [SeatOutcome(i, "", 1, 0) for i in range(8)], {}) == {}


def test_win_probability_is_openskills_predict_win() -> None:
    team_a = [Skill(25.0, 8.0), Skill(30.0, 3.0), Skill(18.0, 5.0)]
    team_b = [Skill(20.0, 5.0), Skill(27.0, 2.0), Skill(25.0, 8.3)]

    def ratings(team: list[Skill]) -> list[Any]:
        return [MODEL.rating(mu=s.mu, sigma=s.sigma) for s in team]

    expected = MODEL.predict_win([ratings(team_a), ratings(team_b)])[0]
    assert win_probability(team_a, team_b) == pytest.approx(expected, abs=1e-12)


def test_the_leaderboard_ranks_by_ordinal_and_keeps_the_newest() -> None:
    board = Leaderboard()
    board.offer("ana", THREE_FIVE_EIGHT, 3, Skill(30.0, 2.0))  # ordinal 24
    board.offer("bo", THREE_FIVE_EIGHT, 5, Skill(35.0, 5.0))  # ordinal 20
    board.offer("cy", THREE_FIVE_EIGHT, 1, Skill(25.0, 8.0))
    board.offer("ana", THREE_FIVE_EIGHT, 2, Skill(10.0, 1.0))  # older: ignored
    board.offer("dan", KHOZOR_TEAMS, 1, Skill(40.0, 1.0))
    assert [p for p, _, _ in board.page(THREE_FIVE_EIGHT, 0, 10)] == ["ana", "bo", "cy"]
    assert [p for p, _, _ in board.page(THREE_FIVE_EIGHT, 1, 1)] == ["bo"]
    board.offer("cy", THREE_FIVE_EIGHT, 2, Skill(40.0, 1.0))
    assert board.page(THREE_FIVE_EIGHT, 0, 1)[0][0] == "cy"


def test_player_keys_are_stream_safe_and_apart() -> None:
    assert stream_of(THREE_FIVE_EIGHT, "ana_1") == "rating-three_five_eight-p_ana_1"
    odd = stream_of(KHOZOR_TEAMS, "Ștefan Ionescu")
    assert odd.startswith("rating-khozor_teams-h_")
    assert len(odd) == len("rating-khozor_teams-h_") + 64


def test_ordinal_of_a_new_player_is_zero() -> None:
    assert ordinal(DEFAULT) == pytest.approx(0.0)


# ---------------------------------------------------------------------------- snapshots


def test_a_lobby_survives_its_snapshot_encoding() -> None:
    lobby = Lobby()
    fold(decisions.create_party(lobby, "ana", "p"), lobby)
    fold(decisions.join_party(lobby, "bogdan", lobby.parties["p"].code)[1], lobby)
    for name in ("carla", "dan", "eva"):
        open_ticket(lobby, (name,))
    [seated] = matches(lobby, 1)
    fold([MatchSeated(seated["match"], "t-1", at(2).isoformat())], lobby)
    open_ticket(lobby, ("f1", "f2"), party="q", mu=[20.0, 30.0], when=3)
    open_ticket(lobby, ("g",), fill_now=True, when=4)
    matches(lobby, 4)  # pending: decided, not seated
    cancelled = open_ticket(lobby, ("h",), when=5)
    fold(decisions.cancel(lobby, "h", cancelled), lobby)
    data = json.loads(json.dumps(encode(lobby)))
    again = decode(data)
    assert encode(again) == encode(lobby)
    assert again.version == lobby.version
    assert again.seated == lobby.seated
    assert again.party_of == lobby.party_of
    assert find_matches(again, at(100), RULES) == find_matches(lobby, at(100), RULES)


def test_the_fold_survives_events_the_decisions_never_make() -> None:
    lobby = Lobby()
    odd: list[LobbyEvent] = [
        MatchSeated("m", "t", T0.isoformat()),
        MatchReleased("m", "refused"),
        PartyLeft("p", "ana"),
        PartyDisbanded("p"),
        TableEnded("t"),
    ]
    fold(odd, lobby)
    assert lobby.version == len(odd)
    assert encode(lobby) == encode(Lobby(version=len(odd), ended=OrderedDict(t=None)))


@pytest.mark.parametrize(
    ("type_name", "data"),
    [
        ("SomethingNewer", {}),  # a type newer than this code
        ("TicketExpired", {}),  # a payload without its fields
        ("MatchSeated", {"match": "m", "table": "t"}),
    ],
)
def test_an_event_the_code_cannot_read_is_an_error_not_skipped(
    type_name: str, data: dict[str, Any]
) -> None:
    with pytest.raises(UnknownLobbyEvent) as unknown:
        lobby_events.decode(type_name, data)
    assert unknown.value.type_name == type_name


STORED: list[tuple[str, dict[str, Any]]] = [
    ("TicketOpened", {"ticket": "t1", "game": THREE_FIVE_EIGHT, "players": ["ana"],
                      "party": None, "options": {"must_trump": False, "turn_seconds": 0},
                      "fill_now": False, "skills": {"ana": ["25.0", "8.0"]},
                      "at": T0.isoformat()}),
    ("TicketCancelled", {"ticket": "t1", "by": "ana"}),
    ("TicketExpired", {"ticket": "t2"}),
    ("MatchDecided", {"match": "m", "game": THREE_FIVE_EIGHT,
                      "options": {"must_trump": True, "turn_seconds": 30},
                      "seats": [{"player": "ana", "ticket": "t1"}, {"computer": "easy"}],
                      "tickets": ["t1"], "at": T0.isoformat()}),
    ("MatchSeated", {"match": "m", "table": "tb", "at": T0.isoformat()}),
    ("MatchReleased", {"match": "m", "reason": "refused"}),
    ("TableNoticed", {"table": "tb", "game": THREE_FIVE_EIGHT, "seats": [["ana", 0]],
                      "at": T0.isoformat()}),
    ("TableEnded", {"table": "tb"}),
    ("TableEnded", {"table": "tb", "clean": ["bo"], "forgiven": []}),
    ("AbandonJudged", {"table": "tb", "player": "ana", "strikes": 2, "at": T0.isoformat(),
                       "until": None}),
    ("PenaltyLifted", {"player": "ana", "strikes": 1, "by": "root", "reason": "x",
                       "at": T0.isoformat()}),
    ("PartyCreated", {"party": "p", "code": "ABCDEF", "leader": "ana"}),
    ("PartyJoined", {"party": "p", "player": "bo"}),
    ("PartyLeft", {"party": "p", "player": "bo"}),
    ("PartyDisbanded", {"party": "p"}),
]  # fmt: skip
"""One event of every type, as the log has always stored them."""


@pytest.mark.parametrize(("type_name", "data"), STORED)
def test_every_stored_event_decodes_and_encodes_back_as_stored(
    type_name: str, data: dict[str, Any]
) -> None:
    event = lobby_events.decode(type_name, data)
    assert type(event).__name__ == type_name
    assert lobby_events.encode(event) == (type_name, data)


def test_the_decisions_store_what_they_always_stored() -> None:
    """The events the decisions make, as stored: the payload fields of before."""
    lobby = Lobby()
    opened = decisions.enter(
        lobby, ticket_id="t1", players=("ana",), party_id="", game=THREE_FIVE_EIGHT,
        options=QueueOptions(), fill_now=False, skills={"ana": Skill(25.0, 8.0)}, now=T0,
    )  # fmt: skip
    fold(opened, lobby)
    kind, data = lobby_events.encode(opened[0])
    assert (kind, data) == (STORED[0][0], {**STORED[0][1], "options": {}})
    # the options of before, spelled out, and those of now mean the same ticket
    assert QueueOptions.decode(STORED[0][1]["options"]) == QueueOptions.decode(data["options"])
    assert lobby_events.encode(decisions.cancel(lobby, "ana", "t1")[0]) == STORED[1]
    ended = decisions.table_ended(lobby, "tb")
    assert [lobby_events.encode(e) for e in ended] == [STORED[7]]


def test_a_queue_match_s_table_is_opened_with_hints_off() -> None:
    """Issue 26: queue play is rated, so its table says no hints (the bots service reads
    it from the table's view); a private table's request allows them (test above)."""
    lobby = Lobby()
    for player in ("ana", "bogdan", "carla"):
        open_ticket(lobby, (player,))
    fold(find_matches(lobby, at(1), RULES), lobby)
    (match,) = lobby.matches.values()
    assert match.tickets
    assert create_table_request(match).table.hints_off
    # nor open hands for spectators, on any delay (docs/open-hand.md: rated tables)
    assert create_table_request(match).table.open_hand_delay == 0


def test_every_table_matchmaking_opens_gets_its_seed_window() -> None:
    """docs/fair-deal.md §9: the first deal of a player's table waits for the players'
    client seeds — a queue match's and a private one with table options alike (set after
    the options, which replace the request's `table`)."""
    lobby = Lobby()
    for player in ("ana", "bogdan", "carla"):
        open_ticket(lobby, (player,))
    fold(find_matches(lobby, at(1), RULES), lobby)
    (queued,) = lobby.matches.values()
    private = decisions_match(QueueOptions.of({}, 60, "easy"))
    for match in (queued, private):
        request = create_table_request(match, 15)
        assert request.table.seed_window_seconds == 15
        assert create_table_request(match, 0).table.seed_window_seconds == 0
    assert create_table_request(private, 15).table.cover_after_seconds == 60


def test_the_int_computer_level_is_deprecated_for_the_enum_in_table_options() -> None:
    """CreatePrivateTable's level has one type, the ComputerLevel enum (in `table`, as
    EnterQueue's); the old int field is kept on the wire, marked deprecated for every
    generated client."""
    from kozyr.api.matchmaking.v1 import matchmaking_service_pb2 as mm_pb

    fields = mm_pb.CreatePrivateTableRequest.DESCRIPTOR.fields_by_name
    assert fields["computer_level"].number == 6
    assert fields["computer_level"].GetOptions().deprecated
    for request in (mm_pb.CreatePrivateTableRequest, mm_pb.EnterQueueRequest):
        table = request.DESCRIPTOR.fields_by_name["table"].message_type
        assert table is not None
        level = table.fields_by_name["computer_level"].enum_type
        assert level is not None
        assert level.full_name == "kozyr.common.v1.ComputerLevel"
