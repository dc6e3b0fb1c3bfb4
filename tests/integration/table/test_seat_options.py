"""The table's seat options over real gRPC and PostgreSQL: computer levels per seat and
per table, the cover_after option, and presence recorded by the clock (SetSeatPresence)
shown in every seat's view without touching the game."""

from __future__ import annotations

import grpc
import pytest

from kozyr.api.common.v1 import games_pb2, seats_pb2
from kozyr.api.table.v1 import table_service_pb2 as pb
from kozyr.client import TableClient
from kozyr.runtime.auth import Role
from kozyr.runtime.errors import error_details
from tests.integration.table.conftest import RunningTableService
from tests.support.tables import token

pytestmark = pytest.mark.integration

EASY, NORMAL, HARD = (
    seats_pb2.COMPUTER_LEVEL_EASY,
    seats_pb2.COMPUTER_LEVEL_NORMAL,
    seats_pb2.COMPUTER_LEVEL_HARD,
)
NO_LEVEL = seats_pb2.COMPUTER_LEVEL_UNSPECIFIED
UNKNOWN, ONLINE, OFFLINE = (
    seats_pb2.PRESENCE_UNKNOWN,
    seats_pb2.PRESENCE_ONLINE,
    seats_pb2.PRESENCE_OFFLINE,
)


async def _refused(call: object) -> str:
    with pytest.raises(grpc.aio.AioRpcError) as caught:
        await call  # type: ignore[misc]
    assert caught.value.code() is grpc.StatusCode.INVALID_ARGUMENT, caught.value.details()
    return str(error_details(caught.value).reason)


async def test_computer_levels_per_seat_and_for_covering(
    table_service: RunningTableService,
) -> None:
    seats: list[str | pb.SeatAssignment | None] = [
        "ana",
        pb.SeatAssignment(computer=True, level=HARD),
        None,
    ]
    async with TableClient(table_service.target, token("mm", Role.SERVICE)) as service:
        created = await service.create_table(
            games_pb2.GAME_THREE_FIVE_EIGHT,
            seats,
            table=pb.TableOptions(cover_after_seconds=120, computer_level=EASY),
        )
        view = await service.get_table(created.table_id, seat=1)
        assert [s.level for s in view.seats] == [NO_LEVEL, HARD, EASY]
        assert [s.presence for s in view.seats] == [UNKNOWN, ONLINE, ONLINE], "no heartbeat yet"
        await service.set_seat_control(created.table_id, 0, seats_pb2.SEAT_CONTROL_COMPUTER)
        covered = await service.get_table(created.table_id, seat=0)
        assert [s.level for s in covered.seats] == [EASY, HARD, EASY], "covering: the table's"

        plain = await service.create_table(games_pb2.GAME_THREE_FIVE_EIGHT, ["ana", None, None])
        default = await service.get_table(plain.table_id, seat=1)
        assert [s.level for s in default.seats] == [NO_LEVEL, NORMAL, NORMAL]


async def test_bad_seat_options_are_refused_and_open_no_table(
    table_service: RunningTableService,
) -> None:
    game = games_pb2.GAME_THREE_FIVE_EIGHT
    async with TableClient(table_service.target, token("mm", Role.SERVICE)) as service:
        leveled_player = pb.SeatAssignment(player_id="ana", level=HARD)
        assert (
            await _refused(service.create_table(game, [leveled_player, None, None], request_id="a"))
            == "INVALID_TABLE_SETUP"
        )
        odd_level = pb.SeatAssignment(computer=True, level=9)  # type: ignore[arg-type]
        assert (
            await _refused(service.create_table(game, ["ana", odd_level, None], request_id="b"))
            == "INVALID_COMPUTER_LEVEL"
        )
        for seconds in (-1, 3601):
            assert (
                await _refused(
                    service.create_table(
                        game,
                        ["ana", None, None],
                        request_id=f"c{seconds}",
                        table=pb.TableOptions(cover_after_seconds=seconds),
                    )
                )
                == "INVALID_COVER_AFTER"
            )
        # The refused request ids made nothing: they still open a table, once.
        again = await service.create_table(game, ["ana", None, None], request_id="a")
        assert again.version > 0


async def test_presence_shows_in_every_view_and_changes_nothing_else(
    table_service: RunningTableService,
) -> None:
    players = ["ana", "bogdan", "chiara"]
    async with (
        TableClient(table_service.target, token("clock", Role.SERVICE)) as clock,
        TableClient(table_service.target, token("bogdan")) as bogdan,
    ):
        created = await clock.create_table(games_pb2.GAME_THREE_FIVE_EIGHT, players)
        table_id = created.table_id
        before = await bogdan.get_table(table_id)

        gone = await clock.set_seat_presence(table_id, 0, False, request_id="p1")
        assert gone.changed
        assert gone.version == before.version + 1
        again = await clock.set_seat_presence(table_id, 0, False, request_id="p2")
        assert not again.changed
        assert again.version == gone.version

        after = await bogdan.get_table(table_id)
        assert [s.online for s in after.seats] == [False, False, False]
        assert [s.presence for s in after.seats] == [OFFLINE, UNKNOWN, UNKNOWN]
        assert after.turn == before.turn, "presence changes no turn and no deadline"
        assert after.three_five_eight == before.three_five_eight
        assert after.legal_actions == before.legal_actions
        history = await bogdan.history(table_id)
        assert history[-1].type == "SeatPresenceChanged"

        back = await clock.set_seat_presence(table_id, 0, True, request_id="p3")
        assert back.changed
        shown = (await bogdan.get_table(table_id)).seats
        assert [(s.presence, s.online) for s in shown] == [(ONLINE, True)] + [(UNKNOWN, False)] * 2


async def test_presence_is_refused_for_computers_players_and_missing_seats(
    table_service: RunningTableService,
) -> None:
    async with (
        TableClient(table_service.target, token("clock", Role.SERVICE)) as clock,
        TableClient(table_service.target, token("ana")) as ana,
    ):
        created = await clock.create_table(games_pb2.GAME_THREE_FIVE_EIGHT, ["ana", None, None])
        table_id = created.table_id
        with pytest.raises(grpc.aio.AioRpcError) as computer:
            await clock.set_seat_presence(table_id, 1, False)
        assert computer.value.code() is grpc.StatusCode.FAILED_PRECONDITION
        with pytest.raises(grpc.aio.AioRpcError) as missing:
            await clock.set_seat_presence(table_id, 3, False)
        assert missing.value.code() is grpc.StatusCode.INVALID_ARGUMENT
        with pytest.raises(grpc.aio.AioRpcError) as player:
            await ana.set_seat_presence(table_id, 0, False)
        assert player.value.code() is grpc.StatusCode.PERMISSION_DENIED
        assert (await clock.get_table(table_id)).version == created.version
