"""The SDK's game options by keyword (`create_table(game, seats, <game id>=options)`,
`enter_queue(game, <game id>=options)`): the keyword is the game's field in the
request's `options` oneof, so the clients take every registered game's options without
naming one (tests/unit/games/test_no_game_names.py), and the callers of before keep
working."""

from __future__ import annotations

import inspect

import pytest
from google.protobuf.message import Message

import tests.support.higher_card  # noqa: F401  (registers the test-only game)
from kozyr.api.matchmaking.v1 import matchmaking_service_pb2 as mm_pb
from kozyr.api.table.v1 import table_service_pb2 as pb
from kozyr.client.games import registered, set_named_game_options
from kozyr.client.matchmaking import MatchmakingClient
from kozyr.client.table import TableClient

REQUESTS = (pb.CreateTableRequest, mm_pb.EnterQueueRequest, mm_pb.CreatePrivateTableRequest)


def options_message(request: type[Message], game_id: str) -> Message:
    """An empty options message of the game's field in the request's `options` oneof."""
    field = request.DESCRIPTOR.fields_by_name[game_id]
    held: Message = getattr(request(), field.name)
    return type(held)()


@pytest.mark.parametrize("request_type", REQUESTS)
def test_every_game_s_options_go_in_by_its_id(request_type: type[Message]) -> None:
    for plugin in registered():
        if plugin.id not in request_type.DESCRIPTOR.fields_by_name:
            continue  # a game with no options message of its own
        options = options_message(request_type, plugin.id)
        for field in options.DESCRIPTOR.fields:
            if field.type == field.TYPE_BOOL:
                setattr(options, field.name, True)
        request = request_type()
        set_named_game_options(request, {plugin.id: options})
        assert request.WhichOneof("options") == plugin.id
        assert getattr(request, plugin.id) == options


def test_a_keyword_of_no_game_or_of_another_game_s_options_is_refused() -> None:
    games = [p.id for p in registered() if p.id in pb.CreateTableRequest.DESCRIPTOR.fields_by_name]
    assert len(games) >= 2
    first, second = games[:2]
    with pytest.raises(TypeError, match="no game options chess="):
        set_named_game_options(pb.CreateTableRequest(), {"chess": pb.TableOptions()})
    wrong = options_message(pb.CreateTableRequest, second)
    with pytest.raises(TypeError, match=f"no game options {first}="):
        set_named_game_options(pb.CreateTableRequest(), {first: wrong})
    with pytest.raises(TypeError):  # the table's own options are no game's
        set_named_game_options(pb.CreateTableRequest(), {"table": pb.TableOptions()})


def test_the_clients_take_game_options_by_keyword() -> None:
    for method in (TableClient.create_table, MatchmakingClient.enter_queue):
        kinds = {p.kind for p in inspect.signature(method).parameters.values()}
        assert inspect.Parameter.VAR_KEYWORD in kinds, method
