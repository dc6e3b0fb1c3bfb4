"""`kozyr play`'s connection to its table (`session.TableSession`) against a real table
service process: a move chosen on a view that something unrelated has changed since (a
player's presence) is sent again for the same turn, once, and applied once."""

from __future__ import annotations

import pytest

from kozyr.api.table.v1 import views_pb2
from kozyr.cli.play import controls
from kozyr.cli.play.session import TableSession
from kozyr.client import TableClient
from kozyr.games.translations import Lang
from kozyr.runtime.auth import Role
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
