"""Seed scheme 2 end to end through real gRPC, PostgreSQL and NATS (docs/fair-deal.md
§9): the seats set client seeds with SetClientSeed (one types his own, the others let
the client library pick), deal 2 is the derivation of the committed server seed and
those seeds, a late seed is refused and changes nothing, and `verify` passes the log."""

from __future__ import annotations

import grpc
import pytest

from kozyr.api.common.v1 import games_pb2
from kozyr.api.table.v1 import views_pb2
from kozyr.client import TableClient
from kozyr.eventstore import PostgresEventStore
from kozyr.runtime.auth import Role
from kozyr.runtime.errors import error_details
from kozyr.table import audit
from kozyr.table.adapters.repository import stream_of
from kozyr.table.domain import seeding
from tests.integration.table.conftest import RunningTableService
from tests.support.tables import token

pytestmark = pytest.mark.integration

PLAYERS = ["ana", "bogdan", "chiara"]
TYPED = "ana's lucky 7"


async def _play_until(target: str, table_id: str, deals: int) -> views_pb2.TableView:
    """Each seat plays the first move its view lists until `deals` deals have ended."""
    clients = {p: TableClient(target, token(p)) for p in PLAYERS}
    try:
        for _ in range(2_000):
            view = await clients[PLAYERS[0]].get_table(table_id)
            if sum(1 for d in view.deals if d.seed) >= deals or view.finished:
                return view
            mover = clients[PLAYERS[view.turn.seats[0]]]
            mine = await mover.get_table(table_id)
            await mover.submit(table_id, mine.legal_actions[0], expected_version=mine.version)
    finally:
        for client in clients.values():
            await client.close()
    raise AssertionError(f"fewer than {deals} deals ended")


async def test_seats_seed_the_next_deal_and_verify_passes(
    table_service: RunningTableService, database_url: str
) -> None:
    target = table_service.target
    async with TableClient(target, token("matchmaker", Role.SERVICE)) as service:
        table_id = (await service.create_table(games_pb2.GAME_THREE_FIVE_EIGHT, PLAYERS)).table_id
    async with TableClient(target, token("ana")) as ana:
        opened = await ana.get_table(table_id)
        assert opened.next_deal.number == 2
        assert opened.next_deal.scheme == seeding.CLIENT_SEEDS
        commitment = opened.next_deal.server_commitment
        assert len(commitment) == 64
        assert not opened.next_deal.server_seed
        assert list(opened.deals[0].client_seeds) == ["", "", ""], "deal 1: no time to seed"
        await ana.set_client_seed(table_id, 2, "an early thought")
        answer = await ana.set_client_seed(table_id, 2, TYPED)
        assert not answer.duplicate
    async with TableClient(target, token("bogdan")) as bogdan:
        await bogdan.set_client_seed(table_id, 2)  # the library's random seed
        seeded = await bogdan.get_table(table_id)
    chosen = list(seeded.next_deal.client_seeds)
    assert chosen[0] == TYPED
    assert len(chosen[1]) == 32
    assert chosen[2] == ""
    assert seeded.next_deal.server_commitment == commitment

    view = await _play_until(target, table_id, 2)
    deal_two = view.deals[1]
    assert list(deal_two.client_seeds) == chosen, "chiara set none: her default is recorded"
    assert deal_two.server_commitment == commitment
    server_seed = bytes.fromhex(deal_two.server_seed)
    assert seeding.commitment_of(server_seed) == commitment
    derived = seeding.derive_seed(server_seed, tuple(chosen), table_id, 2)
    assert deal_two.seed == derived.hex()

    async with TableClient(target, token("chiara"), language="ro") as chiara:
        with pytest.raises(grpc.aio.AioRpcError) as late:
            await chiara.set_client_seed(table_id, 2, "too late")
        assert late.value.code() == grpc.StatusCode.FAILED_PRECONDITION
        details = error_details(late.value)
        assert details.reason == "DEAL_ALREADY_STARTED"
        assert next(iter(details.messages)) == "ro"
        with pytest.raises(grpc.aio.AioRpcError) as bad:
            await chiara.set_client_seed(table_id, 4, "é")
        assert error_details(bad.value).reason == "INVALID_CLIENT_SEED"
        after = await chiara.get_table(table_id)
    assert after.deals[1] == deal_two

    async with TableClient(target, token("matchmaker", Role.SERVICE)) as service:
        with pytest.raises(grpc.aio.AioRpcError) as operator:
            await service.set_client_seed(table_id, view.next_deal.number, "mine", seat=0)
        assert error_details(operator.value).reason == "SEAT_NOT_COMPUTER"

    store = PostgresEventStore(database_url)
    try:
        stream = stream_of(table_id)
        report = audit.verify(await store.read(stream), await store.verify(stream))
    finally:
        await store.close()
    assert report.ok, report.problem
    assert report.deals_derived >= 3
