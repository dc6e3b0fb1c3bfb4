"""A game is one plugin: the test-only "higher card wins" (tests/support/higher_card),
registered by importing it, is created, watched, played to its end, expired, read back
and audited through the real table service over gRPC — a service in which no line names
it. Its view travels packed in `TableView.packed_game` (its message is in no .proto of
the API), its code 99 in the open `Game` enum."""

from __future__ import annotations

import asyncio
import hashlib
import json
from typing import Any

import grpc
import pytest

from kozyr.api.table.v1 import actions_pb2, views_pb2
from kozyr.client import TableClient
from kozyr.runtime.auth import Role
from kozyr.runtime.errors import error_details
from kozyr.table import audit
from kozyr.table.adapters.repository import stream_of
from tests.integration.table.conftest import RunningTableService
from tests.support.higher_card import CODE, HigherCardView, rules
from tests.support.tables import token

pytestmark = pytest.mark.integration

PLAYERS = ["ana", "bogdan"]
ROUNDS = rules.DEALS * rules.HAND


def unpacked(view: views_pb2.TableView) -> Any:
    """The game's own view (a message class built at run time: typed Any here), checked
    to be where a plugin game's view goes."""
    assert view.game == CODE
    assert view.WhichOneof("game_view") == "packed_game"
    game_view = HigherCardView()
    assert view.packed_game.Unpack(game_view)
    return game_view


def check_view(view: views_pb2.TableView, seat: int) -> Any:
    """A seat's view: its own cards only, and legal moves drawn from them."""
    game = unpacked(view)
    assert view.seat == seat
    assert game.seat == seat
    assert len(game.hand) == game.hand_counts[seat]
    moves = [a.play_card.card.code for a in view.legal_actions]
    assert all(a.WhichOneof("action") == "play_card" for a in view.legal_actions)
    assert set(moves) <= set(game.hand)
    assert bool(moves) == (seat in view.turn.seats and not view.finished)
    return game


async def watch_to_the_end(target: str, player: str, seen: list[views_pb2.TableView]) -> None:
    async with TableClient(target, token(player)) as client:
        async for view in client.watch(seen[0].table_id if seen else "", from_version=0):
            seen.append(view)
            if view.finished:
                return


async def test_a_test_only_game_plays_end_to_end_through_the_real_service(
    table_service: RunningTableService,
) -> None:
    target = table_service.target
    async with TableClient(target, token("matchmaker", Role.SERVICE)) as service:
        created = await service.create_table(CODE, PLAYERS)  # type: ignore[arg-type]
        table_id = created.table_id
        first = await service.get_table(table_id, seat=0)
        assert first.deals[0].commitment
        assert not first.deals[0].seed
        watched: dict[str, list[views_pb2.TableView]] = {p: [first] for p in PLAYERS}
        watchers = [asyncio.create_task(watch_to_the_end(target, p, watched[p])) for p in PLAYERS]
        # The clock plays one turn: the default move, the weakest card.
        expired = await service.expire_turn(table_id, first.turn.number)
        assert expired.applied

    clients = {p: TableClient(target, token(p)) for p in PLAYERS}
    try:
        ana = clients["ana"]
        wrong = actions_pb2.Action(lead=actions_pb2.Lead())
        with pytest.raises(grpc.aio.AioRpcError) as caught:
            await ana.submit(table_id, wrong)
        assert caught.value.code() == grpc.StatusCode.INVALID_ARGUMENT
        assert error_details(caught.value).reason == "WRONG_GAME_ACTION"

        for _ in range(ROUNDS * 2):
            view = await ana.get_table(table_id)
            if view.finished:
                break
            (seat,) = view.turn.seats
            mover = clients[PLAYERS[seat]]
            mine = await mover.get_table(table_id)
            check_view(mine, seat)
            reply = await mover.submit(
                table_id, mine.legal_actions[-1], expected_version=mine.version
            )
            check_view(reply.view, seat)
        final = await ana.get_table(table_id)
        history = await ana.history(table_id)
    finally:
        for client in clients.values():
            await client.close()
    await asyncio.wait_for(asyncio.gather(*watchers), timeout=60)

    game = check_view(final, 0)
    assert final.finished
    assert game.over
    assert sum(game.scores) == ROUNDS
    assert final.turn.kind == "over"
    assert [d.number for d in final.deals] == [1, 2]
    for deal in final.deals:
        assert hashlib.sha256(bytes.fromhex(deal.seed)).hexdigest() == deal.commitment

    for player, views in watched.items():
        seat = PLAYERS.index(player)
        versions = [v.version for v in views[1:]]
        assert versions == sorted(set(versions)), "each version once, in order"
        assert views[-1].finished
        for view in views[1:]:
            check_view(view, seat)

    types = [event.type for event in history]
    assert types.count("CardsDealt") == rules.DEALS
    assert types.count("CardPlayed") == 2 * ROUNDS
    assert types[-1] == "GameEnded"
    dealt = [json.loads(e.data_json) for e in history if e.type == "CardsDealt"]
    assert all("seed" not in d and "hands" not in d and len(d["hand"]) == 4 for d in dealt)

    events = await table_service.service.store.read(stream_of(table_id))
    report = audit.verify(events, await table_service.service.store.verify(stream_of(table_id)))
    assert report.ok, report.to_text()
    assert report.deals_rederived == rules.DEALS
    assert "Result: scores" in audit.replay(events).to_text()
    # The dispute viewer knows no game either: a seat's page of this one, proofs holding.
    chain = await table_service.service.store.verify(stream_of(table_id))
    page = audit.dispute_page(events, chain, seat=1)
    assert page.count('<td class="yes">') == 3 * rules.DEALS  # seed, deal, derivation
    assert "Result:</strong> scores" in page
