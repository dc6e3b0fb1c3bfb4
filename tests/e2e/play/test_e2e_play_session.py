"""`kozyr play`'s connection to its table (`session.TableSession`) against a real table
service process: a move chosen on a view that something unrelated has changed since (a
player's presence) is sent again for the same turn, once, and applied once; the seat's
client seed goes out once for every next deal, the player's own or a random one."""

from __future__ import annotations

import pytest

from kozyr.api.table.v1 import views_pb2
from kozyr.cli.play import controls
from kozyr.cli.play.session import TableSession
from kozyr.client import TableClient
from kozyr.runtime.auth import Role
from kozyr.texts import Lang
from tests.e2e.play.conftest import PlayStack
from tests.e2e.published import stored_events
from tests.support.tables import token

pytestmark = pytest.mark.e2e


async def test_a_move_on_a_view_changed_by_presence_is_sent_again_for_the_same_turn(
    play_stack: PlayStack,
) -> None:
    players = ["ana", "bob", "carol"]
    table_id = await play_stack.open_table(players)
    target = play_stack.mm.table.target
    async with TableClient(target, token("matchmaker", Role.SERVICE)) as service:
        seat = (await service.get_table(table_id)).turn.seats[0]
        seen: list[views_pb2.TableView] = []
        said: list[tuple[str, bool]] = []
        async with TableClient(target, token(players[seat])) as table:
            session = TableSession(
                table, table_id, Lang.EN, seen.append, lambda text, bad: said.append((text, bad))
            )
            session.accept(await table.get_table(table_id))
            chosen = controls.turn_moves(seen[-1])[0]
            other = (seat + 1) % 3
            await service.set_seat_presence(table_id, other, online=False)  # a new version
            assert await session.submit(chosen)
    assert said == []
    assert session.pending is None
    assert seen[-1].turn.kind != "contract"
    events = await stored_events(play_stack.mm.table.database_url, table_id)
    assert [e.type for e in events].count("ContractChosen") == 1


async def test_the_session_seeds_the_next_deal_once_with_the_players_or_a_random_seed(
    play_stack: PlayStack,
) -> None:
    players = ["dan", "eve", "fay"]
    table_id = await play_stack.open_table(players)
    target = play_stack.mm.table.target
    typed = "dan's own seed"
    for seat, own in ((0, typed), (1, None)):
        async with TableClient(target, token(players[seat])) as table:
            session = TableSession(
                table, table_id, Lang.EN, lambda _: None, lambda *_: None, client_seed=own
            )
            first = await table.get_table(table_id)
            session.accept(first)
            await session.seeds_sent()
            after = await table.get_table(table_id)
            session.accept(after)  # a newer view of the same next deal: nothing sent again
            await session.seeds_sent()
            assert session.seeded == {first.next_deal.number}
    seeds = list((await _any_view(target, table_id, players[2])).next_deal.client_seeds)
    assert seeds[0] == typed
    assert len(seeds[1]) == 32
    int(seeds[1], 16)  # hex digits: the library's random seed
    assert seeds[2] == ""
    events = await stored_events(play_stack.mm.table.database_url, table_id)
    assert [e.type for e in events].count("ClientSeedSet") == 2


async def _any_view(target: str, table_id: str, player: str) -> views_pb2.TableView:
    async with TableClient(target, token(player)) as table:
        return await table.get_table(table_id)
