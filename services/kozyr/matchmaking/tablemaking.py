"""A decided match as the table service's `CreateTable` request. Pure.

The request id is `match:<match id>`, and the table service derives the table id from
the caller (matchmaking's service identity, the same for every replica) and that
request id: whichever replica sends it, however often, one table is opened. Tables of
queue matches are opened with hints off (`TableOptions.hints_off`); private ones not.
Every table's first deal waits `seed_window` seconds for the players' client seeds
(`TableOptions.seed_window_seconds`, docs/fair-deal.md §9), so no deal of a player's
game is the service's seed alone.
"""

from __future__ import annotations

from kozyr.api.common.v1 import seats_pb2
from kozyr.api.table.v1 import table_service_pb2 as table_pb
from kozyr.games.catalogue import game_by_id
from kozyr.matchmaking.lobby import Match, QueueOptions

LEVELS = {
    "easy": seats_pb2.COMPUTER_LEVEL_EASY,
    "normal": seats_pb2.COMPUTER_LEVEL_NORMAL,
    "hard": seats_pb2.COMPUTER_LEVEL_HARD,
}


def create_table_request(match: Match, seed_window: int = 0) -> table_pb.CreateTableRequest:
    request = table_pb.CreateTableRequest(
        request_id=match.request_id,
        game=game_by_id(match.game).code,  # type: ignore[arg-type]  # an open enum
    )
    for seat in match.seats:
        if seat.player_id is not None:
            request.seats.append(table_pb.SeatAssignment(player_id=seat.player_id))
        else:
            level = LEVELS[seat.level or "normal"]
            request.seats.append(table_pb.SeatAssignment(computer=True, level=level))
    _options(request, match.game, match.options)
    # A match of queue tickets is rated play: no hints there (the bots service reads it
    # from the table). A private table (a party's own, no ticket) allows them.
    if match.tickets:  # set only then: a private table's request keeps its old shape
        request.table.hints_off = True
    if seed_window:
        request.table.seed_window_seconds = seed_window
    return request


def _options(request: table_pb.CreateTableRequest, game: str, options: QueueOptions) -> None:
    if options.cover_after_seconds or options.computer_level:
        request.table.CopyFrom(
            table_pb.TableOptions(
                cover_after_seconds=options.cover_after_seconds,
                computer_level=LEVELS.get(options.computer_level, 0),  # type: ignore[arg-type]
            )
        )
    if game not in request.DESCRIPTOR.fields_by_name:  # a game without options
        return
    # The game's options message, set even when every option is its default (the table
    # then applies the game's defaults): the oneof says which game the options are for.
    given = getattr(request, game)
    given.SetInParent()
    for name, value in options.game:
        setattr(given, name, value)
