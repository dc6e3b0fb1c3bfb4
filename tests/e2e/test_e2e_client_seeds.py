"""Seed scheme 2 end to end (docs/fair-deal.md §9): a whole 3-5-8 game against the table
service process, each seat's client setting its own client seed for every next deal
through SetClientSeed as soon as its view offers one (seat 0 types the same one every
deal, the others take the client library's random ones). The table has a seed window,
so the first deal waits for the three seeds and is dealt by the last. Every deal, the
first included, is the HMAC derivation of its committed server seed and exactly those seeds, no
seat ever saw a server seed before its reveal, and `kozyr verify` re-derives it all."""

from __future__ import annotations

import random
from collections.abc import AsyncIterator, Callable
from pathlib import Path

import grpc
import pytest

from kozyr.api.common.v1 import games_pb2
from kozyr.api.table.v1 import table_service_pb2 as table_pb
from kozyr.api.table.v1 import views_pb2
from kozyr.client import TableClient
from kozyr.client.table import random_client_seed
from kozyr.infra import Infrastructure
from kozyr.table.domain import seeding
from tests.e2e.checks import assert_moderator_tools_agree, assert_no_leaks
from tests.e2e.conftest import deployment_for_module
from tests.e2e.moderation import kozyr_cli
from tests.e2e.players import ScriptedClient, chooser, play_table
from tests.e2e.tables import PlayedGame, collect, open_table
from tests.support.tables import Seat

pytestmark = pytest.mark.e2e

GAME_TIMEOUT = 120.0
TYPED = "seat zero's own words"
WINDOW_SECONDS = 600
"""Longer than the test: the first deal is dealt by the last seat's seed, not the clock
(none runs here)."""


class SeedingClient(ScriptedClient):
    """A seat's client that contributes to every next deal before it acts."""

    def __init__(
        self, target: Callable[[], str], table_id: str, player: str, seat: int, typed: str | None
    ) -> None:
        rng = random.Random(27 * 100 + seat)
        super().__init__(target, table_id, player, seat, chooser(Seat(seat, player, rng), rng))
        self.typed = typed
        self.seeds: dict[int, str] = {}
        """Per deal, the client seed the service took from this seat."""

    async def _contribute(self, client: TableClient, view: views_pb2.TableView) -> None:
        if view.HasField("next_deal"):
            deal = view.next_deal.number
            if deal not in self.seeds:
                chosen = self.typed or random_client_seed()  # what the library picks
                try:
                    await client.set_client_seed(self.table_id, deal, chosen)
                except grpc.aio.AioRpcError as refused:  # dealt meanwhile: too late
                    if refused.code() != grpc.StatusCode.FAILED_PRECONDITION:
                        raise
                    chosen = ""
                self.seeds[deal] = chosen


@pytest.fixture(scope="module")
async def seeded(
    infra: Infrastructure, tmp_path_factory: pytest.TempPathFactory
) -> AsyncIterator[tuple[PlayedGame, list[SeedingClient]]]:
    log_dir: Path = tmp_path_factory.mktemp("client_seeds")
    async with deployment_for_module(infra, log_dir) as deployment:
        game = games_pb2.GAME_THREE_FIVE_EIGHT
        window = table_pb.TableOptions(seed_window_seconds=WINDOW_SECONDS)
        table_id, players = await open_table(deployment.target, game, window)
        target: Callable[[], str] = lambda: deployment.target  # noqa: E731
        seats = [
            SeedingClient(target, table_id, player, seat, TYPED if seat == 0 else None)
            for seat, player in enumerate(players)
        ]
        spectator = ScriptedClient(target, table_id, f"spectator-{table_id[:8]}", None, None)
        await play_table([*seats, spectator], GAME_TIMEOUT)
        clients: list[ScriptedClient] = list(seats)
        played = await collect(deployment, game, table_id, players, clients, spectator, 0.0)
        yield played, seats


async def test_every_later_deal_is_derived_from_the_seeds_the_seats_set(
    seeded: tuple[PlayedGame, list[SeedingClient]],
) -> None:
    game, seats = seeded
    deals = list(game.admin_final.deals)
    assert len(deals) == 18
    assert all(deals[0].client_seeds), "deal 1 waited for every seat's seed"
    assert deals[0].client_seeds[0] == TYPED
    for deal in deals:
        assert deal.scheme == seeding.CLIENT_SEEDS
        server_seed = bytes.fromhex(deal.server_seed)
        assert seeding.commitment_of(server_seed) == deal.server_commitment
        client_seeds = tuple(deal.client_seeds)
        derived = seeding.derive_seed(server_seed, client_seeds, game.table_id, deal.number)
        assert deal.seed == derived.hex()
        assert client_seeds == tuple(s.seeds.get(deal.number, "") for s in seats)
    later = [tuple(d.client_seeds) for d in deals[1:]]
    assert sum(all(seeds) for seeds in later) >= len(later) - 1, "the seats took part"
    assert all(seeds[0] in (TYPED, "") for seeds in later)
    randoms = {seeds[1] for seeds in later if seeds[1]}
    assert len(randoms) == len([s for s in later if s[1]]), "a fresh random seed per deal"


async def test_no_seat_ever_saw_a_server_seed_before_its_reveal(
    seeded: tuple[PlayedGame, list[SeedingClient]],
) -> None:
    assert_no_leaks(seeded[0])


async def test_kozyr_verify_re_derives_every_deal(
    seeded: tuple[PlayedGame, list[SeedingClient]],
) -> None:
    game = seeded[0]
    await assert_moderator_tools_agree(game)
    verified = await kozyr_cli(game.deployment.database_url, "verify", game.table_id, "--json")
    assert verified.json()["deals_derived"] == 18
