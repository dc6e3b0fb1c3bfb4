"""A seat's replay shows only what that seat saw: checked card by card against the
moderator's replay of the same game (which shows everything)."""

from __future__ import annotations

import json
from typing import Any

import pytest

from kozyr.games import khozor_teams, three_five_eight
from kozyr.table import audit
from tests.unit.table.test_audit_games import cards_named, played

PUBLIC_358 = {"CardPlayed", "TrickTaken"}
"""3-5-8 steps whose cards every seat sees (played cards)."""
BOTH_TEAMS_SIGNAL = 4
"""The seed of a scripted Khözör match in which seats of both teams signal (in the
first one only team B does: no seat would have the other team's signals to miss)."""


def private_358_cards(deal: audit.DealReplay, seat: int) -> set[str]:
    """What the moderator's replay says `seat` may privately know in a deal: its own
    hand, the cards of exchanges it took part in, and (declarer) talon and discards."""
    known = set(deal.start.data["hands"][seat])
    for step in deal.steps:
        d = step.data
        if step.type == "CardExchanged" and seat in (d["giver"], d["receiver"]):
            known |= {d["given"], d["returned"]}
        if step.type in ("TalonTaken", "CardsDiscarded") and d["seat"] == seat:
            known |= set(d["cards"])
    return known


def played_cards(deal: audit.DealReplay) -> set[str]:
    return {c for trick in deal.tricks for c in trick["cards"]}


@pytest.mark.parametrize("seat", [0, 1, 2])
def test_a_358_seat_sees_no_hidden_card_of_another_seat(seat: int) -> None:
    game = played(three_five_eight.GAME_ID)
    everything = audit.replay(game.events)
    mine = audit.replay(game.events, seat)
    assert len(mine.deals) == len(everything.deals) == three_five_eight.DEALS
    for full, seen in zip(everything.deals, mine.deals, strict=True):
        private = private_358_cards(full, seat)
        before_play = [seen.start] + [s for s in seen.steps if s.type not in PUBLIC_358]
        assert cards_named([s.to_dict() for s in before_play]) <= private
        assert cards_named(seen.to_dict()) <= private | played_cards(full)
        # Not vacuous: the seat does see its whole own hand (six, then ten more).
        assert set(full.start.data["hands"][seat]) <= cards_named(seen.to_dict())


@pytest.mark.parametrize("seat", [0, 1, 2])
def test_a_358_seat_learns_the_seed_only_when_it_is_revealed(seat: int) -> None:
    game = played(three_five_eight.GAME_ID)
    everything = audit.replay(game.events)
    mine = audit.replay(game.events, seat)
    for full, seen in zip(everything.deals, mine.deals, strict=True):
        seed = full.start.data["seed"]
        assert "seed" not in seen.start.data
        assert "hands" not in seen.start.data
        assert "talon" not in seen.start.data
        assert seen.start.data["commitment"] == full.start.data["commitment"]
        revealing = [s for s in seen.steps if seed in json.dumps(s.to_dict())]
        assert [s.type for s in revealing] == ["DealSeedRevealed"]


def test_the_declarer_alone_sees_talon_and_discards() -> None:
    game = played(three_five_eight.GAME_ID)
    everything = audit.replay(game.events)
    for seat in range(3):
        mine = audit.replay(game.events, seat)
        for full, seen in zip(everything.deals, mine.deals, strict=True):
            (taken,) = [s for s in seen.steps if s.type == "TalonTaken"]
            (talon,) = [s for s in full.steps if s.type == "TalonTaken"]
            if talon.data["seat"] == seat:
                assert taken.data["cards"] == talon.data["cards"]
            else:
                assert taken.data["cards"] is None
                assert "4 cards" in audit.step_text(taken.type, taken.data)


@pytest.mark.parametrize("seat", range(khozor_teams.SEATS))
def test_a_khozor_seat_sees_no_card_in_its_history(seat: int) -> None:
    game = played(khozor_teams.GAME_ID)
    everything = audit.replay(game.events)
    mine = audit.replay(game.events, seat)
    assert len(mine.deals) == len(everything.deals)
    for full, seen in zip(everything.deals, mine.deals, strict=True):
        assert cards_named(full.to_dict()), "the moderator sees the cards"
        # Played cards may later sleep, and sleeping cards are never shown to players,
        # not even as history (RULES.md): a seat's history names no card at all.
        assert cards_named(seen.to_dict()) == set()
        assert "hands" not in seen.start.data
        assert "reserve" not in seen.start.data
        assert full.start.data["seed"] not in json.dumps(seen.start.to_dict())


@pytest.mark.parametrize("seat", [*range(khozor_teams.SEATS), None])
def test_khozor_signals_of_the_other_team_are_left_out(seat: int | None) -> None:
    """Every seat's replay (seat 0 is a seat like the others) holds its own team's
    signals, in place, and none of the other team's; the moderator's (None) holds all."""
    game = played(khozor_teams.GAME_ID, BOTH_TEAMS_SIGNAL)
    signals = [e for e in game.events if e.type in ("SignalSet", "SignalCleared")]
    teams = {khozor_teams.team_of(e.data["seat"]) for e in signals}
    assert teams == set(khozor_teams.Team), "this scripted match has both teams signal"

    def signal_positions(replay: audit.Replay) -> list[int]:
        return [
            s.position
            for d in replay.deals
            for s in d.steps
            if s.type in ("SignalSet", "SignalCleared")
        ]

    team = khozor_teams.team_of(seat) if seat is not None else None
    seen = [
        e.position for e in signals if team is None or khozor_teams.team_of(e.data["seat"]) is team
    ]
    assert signal_positions(audit.replay(game.events, seat)) == seen


def test_the_seat_replay_text_is_what_the_seat_saw() -> None:
    game = played(three_five_eight.GAME_ID)
    everything = audit.replay(game.events)
    text = audit.replay(game.events, 1).to_text()
    assert "Viewer: seat 1 (bogdan), what it saw" in text
    first_six = everything.deals[0].start.data["hands"][1][:6]
    assert f"your first six cards: {' '.join(first_six)}" in text
    for other in (0, 2):
        hidden: Any = everything.deals[0].start.data["hands"][other]
        assert " ".join(hidden) not in text
