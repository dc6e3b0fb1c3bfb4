"""A whole 3-5-8 game (18 deals) against the table service process, one client per seat."""

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
from tests.e2e.public import assert_public_events_tell_the_game
from tests.e2e.tables import PlayedGame, play_game

pytestmark = pytest.mark.e2e

GAME_TIMEOUT = 120.0


@pytest.fixture(scope="module")
async def game(
    infra: Infrastructure, tmp_path_factory: pytest.TempPathFactory
) -> AsyncIterator[PlayedGame]:
    log_dir: Path = tmp_path_factory.mktemp("three_five_eight")
    async with deployment_for_module(infra, log_dir) as deployment:
        yield await play_game(deployment, games_pb2.GAME_THREE_FIVE_EIGHT, 358, GAME_TIMEOUT)


async def test_the_game_is_played_to_its_result(game: PlayedGame) -> None:
    final = game.admin_final
    assert final.finished
    view = final.three_five_eight
    assert view.phase == "over"
    assert view.deal_number == 18
    assert len(view.deal_scores) == 18
    assert sum(view.totals) == 0, "every deal's points add up to 0"
    assert list(view.result.totals) == list(view.totals)
    assert sorted(view.result.places)[0] == 1
    assert all(sum(row.points) == 0 for row in view.deal_scores)
    assert [e.type for e in game.admin_history].count("CardsDealt") == 18
    assert game.admin_history[-1].type == "GameEnded"
    for log in game.clients:
        assert log.final.finished
        assert log.final.version == final.version
        assert list(log.final.three_five_eight.result.totals) == list(view.result.totals)
    assert [e.type for e in game.admin_history].count("ContractChosen") == 18
    assert [e.type for e in game.admin_history].count("CardPlayed") == 18 * 48


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
