"""SuggestAction over real gRPC: the bots service in-process beside an in-process table
service (real PostgreSQL and NATS). A seated player gets a legal move for his own seat
(submitted, the table takes it), computed from his own view; everyone else is refused
with the right reason, the rate limit answers RESOURCE_EXHAUSTED with when to retry,
and malformed or unknown tables get the table's own refusals."""

from __future__ import annotations

import asyncio
import time
import urllib.request
from collections.abc import AsyncIterator, Sequence
from typing import Any

import grpc
import pytest

from kozyr.api.common.v1 import games_pb2
from kozyr.api.table.v1 import table_service_pb2 as table_pb
from kozyr.api.table.v1 import views_pb2
from kozyr.client import BotsClient, TableClient
from kozyr.runtime.auth import Role
from kozyr.runtime.errors import ErrorDetails, error_details
from tests.integration.bots.conftest import running_bots
from tests.integration.table.conftest import RunningTableService, running_table_service
from tests.support.tables import token

pytestmark = pytest.mark.integration

PLAYERS = ["ana", "bogdan", "chiara"]
KHOZOR_PLAYERS = [f"p{i}" for i in range(8)]


@pytest.fixture
async def stack(
    database_url: str, nats_url: str, subject_root: str
) -> AsyncIterator[tuple[RunningTableService, str]]:
    """A table service and a bots service whose hint limit is high enough to play games."""
    async with (
        running_table_service(database_url, nats_url, subject_root) as table,
        running_bots(table, nats_url, subject_root, bots_hints_per_second=1000) as bots,
    ):
        yield table, bots.target


async def _open(
    target: str,
    game: games_pb2.Game.ValueType = games_pb2.GAME_THREE_FIVE_EIGHT,
    players: Sequence[str | None] = PLAYERS,
) -> str:
    async with TableClient(target, token("matchmaker", Role.SERVICE)) as service:
        return (await service.create_table(game, players)).table_id


async def _turn_seats(target: str, table_id: str) -> list[int]:
    async with TableClient(target, token("admin", Role.ADMIN)) as admin:
        return list((await admin.get_table(table_id)).turn.seats)


PLAYERS_ELSEWHERE = ["dan", "eva", "filip"]


async def _refusal(bots: str, who: str, table_id: str, role: Role = Role.PLAYER) -> ErrorDetails:
    async with BotsClient(bots, token(who, role), retry=False) as client:
        with pytest.raises(grpc.aio.AioRpcError) as caught:
            await client.suggest(table_id)
    return error_details(caught.value)


async def _until_limited(bots: str, who: str, table_id: str) -> tuple[int, ErrorDetails, float]:
    """Hints asked back to back until one is refused: how many were served, the refusal,
    and when the first was asked (monotonic)."""
    served, started = 0, time.monotonic()
    async with BotsClient(bots, token(who), retry=False) as client:
        for _ in range(100):
            try:
                await client.suggest(table_id)
            except grpc.aio.AioRpcError as error:
                return served, error_details(error), started
            served += 1
    raise AssertionError(f"{served} hints in a row were never limited")


def _is_listed_or_discard(view: views_pb2.TableView, action: Any) -> bool:
    """The hint is one of the listed moves — or 3-5-8's discard, the one move too wide to
    list, which must then be cards of the hand."""
    if action in view.legal_actions:
        return True
    hand = list(view.three_five_eight.hand)
    return action.WhichOneof("action") == "discard" and all(
        card.code in hand for card in action.discard.cards
    )


@pytest.mark.parametrize(
    ("game", "players", "moves"),
    [
        (games_pb2.GAME_THREE_FIVE_EIGHT, PLAYERS, 40),
        (games_pb2.GAME_KHOZOR_TEAMS, KHOZOR_PLAYERS, 40),
    ],
    ids=["358", "khozor"],
)
async def test_seated_players_play_by_hints_alone(
    stack: tuple[RunningTableService, str],
    game: games_pb2.Game.ValueType,
    players: list[str],
    moves: int,
) -> None:
    """Whoever's turn it is asks for a hint and submits it, pinned to the version it was
    computed at: the table takes every one (40 moves: contracts, exchanges, the discard,
    tricks; Khözör's confirmations and plays)."""
    table, bots = stack
    table_id = await _open(table.target, game, players)
    for _ in range(moves):
        seat = (await _turn_seats(table.target, table_id))[0]
        player = players[seat]
        async with (
            BotsClient(bots, token(player)) as hints,
            TableClient(table.target, token(player)) as me,
        ):
            view = await me.get_table(table_id)
            hint = await hints.suggest(table_id)
            assert (hint.seat, hint.view_version) == (seat, view.version)
            assert _is_listed_or_discard(view, hint.action), hint.action
            done = await me.submit(table_id, hint.action, expected_version=hint.view_version)
            assert done.view.version > view.version


async def test_not_his_turn_not_seated_and_another_tables_player_are_refused(
    stack: tuple[RunningTableService, str],
) -> None:
    table, bots = stack
    table_id = await _open(table.target)
    other_table = await _open(table.target, players=PLAYERS_ELSEWHERE)
    acting = (await _turn_seats(table.target, table_id))[0]
    waiting = PLAYERS[(acting + 1) % 3]

    refused = await _refusal(bots, waiting, table_id)
    assert (refused.code, refused.reason) == (grpc.StatusCode.FAILED_PRECONDITION, "NOT_YOUR_TURN")
    assert set(refused.messages) == {"en", "ro", "it"}
    for stranger in ("spectator", "dan"):  # unseated; seated at another table
        refused = await _refusal(bots, stranger, table_id)
        assert (refused.code, refused.reason) == (grpc.StatusCode.PERMISSION_DENIED, "NOT_SEATED")
    dans_turn = PLAYERS_ELSEWHERE[(await _turn_seats(table.target, other_table))[0]] == "dan"
    if not dans_turn:  # at his own table he is refused for the turn, never for the seat
        assert (await _refusal(bots, "dan", other_table)).reason == "NOT_YOUR_TURN"
    else:
        async with BotsClient(bots, token("dan"), retry=False) as dan:
            assert (await dan.suggest(other_table)).HasField("action")
    refused = await _refusal(bots, "matchmaker", table_id, Role.SERVICE)
    assert refused.code == grpc.StatusCode.PERMISSION_DENIED  # hints are for players only
    async with BotsClient(bots, None, retry=False) as anonymous:
        with pytest.raises(grpc.aio.AioRpcError) as caught:
            await anonymous.suggest(table_id)
    assert caught.value.code() == grpc.StatusCode.UNAUTHENTICATED


async def test_malformed_and_unknown_tables_get_the_tables_refusals(
    stack: tuple[RunningTableService, str],
) -> None:
    _, bots = stack
    malformed = await _refusal(bots, "ana", "not-a-table")
    assert (malformed.code, malformed.reason) == (
        grpc.StatusCode.INVALID_ARGUMENT,
        "INVALID_TABLE_ID",
    )
    assert set(malformed.messages) == {"en", "ro", "it"}
    unknown = await _refusal(bots, "ana", "00000000-0000-4000-8000-000000000000")
    assert (unknown.code, unknown.reason) == (grpc.StatusCode.NOT_FOUND, "TABLE_NOT_FOUND")


async def test_hints_are_rate_limited_per_player(
    database_url: str, nats_url: str, subject_root: str
) -> None:
    """A burst of 3, then 2 per second: the 4th call at once is RESOURCE_EXHAUSTED with
    `retryAfterSeconds` (in every language, not retried by the client); another player
    is not affected, and after the wait the player is served again. Refused hints
    (not his turn) count too: each one costs a read of the table."""
    async with (
        running_table_service(database_url, nats_url, subject_root) as table,
        running_bots(
            table, nats_url, subject_root, bots_hints_per_second=2, bots_hints_burst=3
        ) as running,
    ):
        bots = running.target
        table_id = await _open(table.target)
        acting = PLAYERS[(await _turn_seats(table.target, table_id))[0]]
        waiting = next(p for p in PLAYERS if p != acting)
        served, limited, started = await _until_limited(bots, acting, table_id)
        refused_at = time.monotonic()
        # The bucket holds 3 and refills 2 a second: by the refusal it can have served
        # no more than that (a loaded machine's slow calls let it refill some; a quiet
        # one's refuse the 4th).
        assert 3 <= served <= 3 + 2 * (refused_at - started)
        assert (limited.code, limited.reason) == (
            grpc.StatusCode.RESOURCE_EXHAUSTED,
            "TOO_MANY_HINTS",
        )
        assert set(limited.messages) == {"en", "ro", "it"}
        retry_after = float(limited.metadata["retryAfterSeconds"])
        assert 0 < retry_after <= 0.5
        assert (limited.metadata["burst"], limited.metadata["perSecond"]) == ("3", "2")
        assert (await _refusal(bots, waiting, table_id)).reason == "NOT_YOUR_TURN"
        await asyncio.sleep(max(0.0, retry_after - (time.monotonic() - refused_at)) + 0.05)
        async with BotsClient(bots, token(acting)) as hints:
            assert (await hints.suggest(table_id)).action.WhichOneof("action")


async def test_moves_and_hints_are_counted_in_the_metrics(
    database_url: str, nats_url: str, subject_root: str
) -> None:
    """An all-computer table (normal seats) makes moves; a hint given and one refused.
    Metrics are per process (other tests' hints count too): compared before and after."""
    async with running_table_service(database_url, nats_url, subject_root) as table:
        settings: dict[str, Any] = {"bots_hints_per_second": 1000}
        async with running_bots(table, nats_url, subject_root, **settings) as bots:
            port = bots.service.server.metrics_port
            assert port is not None
            before = await asyncio.to_thread(_scrape, port)
            await _open(table.target, players=[None, None, None])
            table_id = await _open(table.target)
            acting = PLAYERS[(await _turn_seats(table.target, table_id))[0]]
            async with BotsClient(bots.target, token(acting)) as hints:
                await hints.suggest(table_id)
            await _refusal(bots.target, "spectator", table_id)
            async with asyncio.timeout(30):
                while True:
                    after = await asyncio.to_thread(_scrape, port)
                    if _grown(before, after, 'kozyr_bots_moves_total{outcome="applied"}') >= 10:
                        break
                    await asyncio.sleep(0.1)
    assert _grown(before, after, 'kozyr_bots_hints_total{outcome="given"}') == 1
    assert _grown(before, after, 'kozyr_bots_hints_total{outcome="NOT_SEATED"}') == 1
    assert _grown(before, after, 'kozyr_bots_decision_seconds_count{level="normal"}') >= 10


def _scrape(port: int) -> str:
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=5) as page:
        return str(page.read().decode())


def _grown(before: str, after: str, sample: str) -> float:
    return _value(after, sample) - _value(before, sample)


def _value(text: str, sample: str) -> float:
    lines = [line for line in text.splitlines() if line.startswith(sample + " ")]
    return float(lines[0].rsplit(" ", 1)[1]) if lines else 0.0


async def test_hints_are_off_at_a_table_opened_without_them_and_on_elsewhere(
    stack: tuple[RunningTableService, str],
) -> None:
    """Issue 26: the table decides, not the caller. A rated table (opened with
    TableOptions.hints_off, as matchmaking opens its queue tables) shows
    hints_allowed false and refuses the player whose turn it is, in every language; an
    unrated table gives him a hint, whose view_version survives a presence flip."""
    table, bots = stack
    async with TableClient(table.target, token("matchmaker", Role.SERVICE)) as service:
        rated = await service.create_table(
            games_pb2.GAME_THREE_FIVE_EIGHT, PLAYERS, table=table_pb.TableOptions(hints_off=True)
        )
        unrated = await service.create_table(games_pb2.GAME_THREE_FIVE_EIGHT, PLAYERS_ELSEWHERE)
        assert not (await service.get_table(rated.table_id)).hints_allowed
        assert (await service.get_table(unrated.table_id)).hints_allowed

        acting = PLAYERS[(await _turn_seats(table.target, rated.table_id))[0]]
        refused = await _refusal(bots, acting, rated.table_id)
        assert (refused.code, refused.reason) == (
            grpc.StatusCode.FAILED_PRECONDITION,
            "HINTS_NOT_ALLOWED",
        )
        assert set(refused.messages) == {"en", "ro", "it"}
        assert all(rated.table_id in text for text in refused.messages.values())

        seat = (await _turn_seats(table.target, unrated.table_id))[0]
        player = PLAYERS_ELSEWHERE[seat]
        async with BotsClient(bots, token(player), retry=False) as client:
            hint = await client.suggest(unrated.table_id)
        flipped = await service.set_seat_presence(unrated.table_id, (seat + 1) % 3, False)
        assert flipped.changed
        async with TableClient(table.target, token(player)) as mover:
            done = await mover.submit(
                unrated.table_id, hint.action, expected_version=hint.view_version
            )
        assert done.view.version > hint.view_version + 1, "the hint's move was applied"
