"""A whole Khözör match (to 5 round wins) against the table service process, 8 clients."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from kozyr.api.common.v1 import games_pb2
from kozyr.infra import Infrastructure
from tests.e2e.checks import (
    assert_history_reached_nats_once,
    assert_moderator_tools_agree,
    assert_no_leaks,
    assert_watch_streams_clean,
)
from tests.e2e.conftest import deployment_for_module
from tests.e2e.leaks import as_seen_by
from tests.e2e.public import assert_public_events_tell_the_game
from tests.e2e.tables import PlayedGame, play_game

pytestmark = pytest.mark.e2e

MATCH_TIMEOUT = 150.0


@pytest.fixture(scope="module")
async def game(
    infra: Infrastructure, tmp_path_factory: pytest.TempPathFactory
) -> AsyncIterator[PlayedGame]:
    log_dir: Path = tmp_path_factory.mktemp("khozor")
    async with deployment_for_module(infra, log_dir) as deployment:
        yield await play_game(deployment, games_pb2.GAME_KHOZOR_TEAMS, 8, MATCH_TIMEOUT)


async def test_the_match_is_played_to_five_round_wins(game: PlayedGame) -> None:
    final = game.admin_final
    assert final.finished
    view = final.khozor_teams
    assert view.phase == "over"
    winner = view.match_winner
    assert winner in ("A", "B")
    loser = "B" if winner == "A" else "A"
    assert view.wins[winner] == 5
    assert view.wins[loser] < 5
    assert len(view.round_winners) == view.wins[winner] + view.wins[loser] == view.round
    assert [row.team for row in view.round_winners].count(winner) == 5
    types = [e.type for e in game.admin_history]
    assert types.count("RoundDealt") == view.round
    assert types.count("RoundWon") == view.round
    assert types.count("MatchWon") == 1
    for log in game.clients:
        assert log.final.finished
        # Each seat counts the events it may see (docs/api.md, "Versions").
        seen = as_seen_by(game.game, game.admin_history, log.seat)[-1].version
        assert log.final.version == seen
        assert log.final.khozor_teams.match_winner == winner
    assert types.count("OpenerConfirmed") == view.round


async def test_signals_were_exercised(game: PlayedGame) -> None:
    """The leak check of signals is only meaningful if both teams used them."""
    signallers = {e.data["seat"] for e in game.admin_history if e.type == "SignalSet"}
    assert {seat % 2 for seat in signallers} == {0, 1}


async def test_watch_streams_have_no_gap_or_duplicate(game: PlayedGame) -> None:
    assert_watch_streams_clean(game)


async def test_no_seat_ever_received_what_it_may_not_know(game: PlayedGame) -> None:
    assert_no_leaks(game)


async def test_every_event_reached_nats_once_in_order(game: PlayedGame) -> None:
    await assert_history_reached_nats_once(game)


async def test_moderator_replay_and_verify_agree(game: PlayedGame) -> None:
    await assert_moderator_tools_agree(game)


async def test_public_events_tell_every_turn_and_the_result_and_no_secret(
    game: PlayedGame,
) -> None:
    await assert_public_events_tell_the_game(game)
