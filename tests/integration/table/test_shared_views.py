"""Views built and serialised once per (viewer, version), shared by every stream showing
them (issue 25): two streams of one seat receive the very same bytes from one build, a
spectator's stream never gets a seat's view, and what goes out is a WatchTableResponse."""

from __future__ import annotations

import asyncio
import contextlib
import uuid
from collections import Counter
from collections.abc import AsyncIterator
from typing import Any

import grpc
import pytest

from kozyr.api.common.v1 import games_pb2
from kozyr.api.table.v1 import table_service_pb2 as pb
from kozyr.runtime.auth import Role
from kozyr.runtime.interceptors import call_metadata
from kozyr.table.domain.model import Table
from kozyr.table.edge import shown
from tests.integration.table.conftest import RunningTableService
from tests.support.tables import token

pytestmark = pytest.mark.integration

PLAYERS = ["ana", "bogdan", "chiara"]
SERVICE = "/kozyr.table.v1.TableService/"


def _raw_watch(channel: grpc.aio.Channel, table_id: str, who: str) -> AsyncIterator[bytes]:
    """WatchTable as the bytes that came over the wire (no deserializer)."""
    watch = channel.unary_stream(
        SERVICE + "WatchTable", request_serializer=pb.WatchTableRequest.SerializeToString
    )
    call = watch(pb.WatchTableRequest(table_id=table_id), metadata=call_metadata(token=token(who)))
    return aiter(call)


def _unary(channel: grpc.aio.Channel, method: str, reply: Any) -> Any:
    """A unary method of the service, by name (its reply message's class given)."""
    return channel.unary_unary(
        SERVICE + method,
        request_serializer=lambda request: request.SerializeToString(),
        response_deserializer=reply.FromString,
    )


async def test_streams_of_one_viewer_share_one_build_and_its_bytes(
    table_service: RunningTableService, monkeypatch: pytest.MonkeyPatch
) -> None:
    builds: Counter[tuple[str, int, int | None]] = Counter()
    real_build = shown.ViewCache._build

    def counted(cache: shown.ViewCache, table: Table, seat: int | None) -> shown.ShownView:
        builds[(table.table_id, table.version, seat)] += 1
        return real_build(cache, table, seat)

    monkeypatch.setattr(shown.ViewCache, "_build", counted)
    async with grpc.aio.insecure_channel(table_service.target) as channel:
        created = await _unary(channel, "CreateTable", pb.CreateTableResponse)(
            pb.CreateTableRequest(
                request_id=str(uuid.uuid4()),
                game=games_pb2.GAME_THREE_FIVE_EIGHT,
                seats=[pb.SeatAssignment(player_id=p) for p in PLAYERS],
            ),
            metadata=call_metadata(token=token("mm", Role.SERVICE)),
        )
        table_id = created.table_id
        # Two devices of ana, one each of bogdan and chiara, two spectators.
        viewers = ["ana", "ana", "bogdan", "chiara", "someone", "else"]
        streams = [_raw_watch(channel, table_id, who) for who in viewers]
        first = [await anext(s) for s in streams]
        views = [pb.WatchTableResponse.FromString(b).view for b in first]
        assert [v.version for v in views] == [created.version] * len(viewers)
        mover_seat = views[0].turn.seats[0]
        mover = PLAYERS[mover_seat]
        mine = next(v for v, who in zip(views, viewers, strict=True) if who == mover)
        reply = await _unary(channel, "SubmitAction", pb.SubmitActionResponse)(
            pb.SubmitActionRequest(
                table_id=table_id,
                request_id=str(uuid.uuid4()),
                action=mine.legal_actions[0],
                expected_version=mine.version,
            ),
            metadata=call_metadata(token=token(mover)),
        )
        async with asyncio.timeout(30):
            second = [await anext(s) for s in streams]
        for stream in streams:
            with contextlib.suppress(Exception):
                await stream.aclose()  # type: ignore[attr-defined]
    for got in (first, second):
        ana, ana_again, bogdan, chiara, spectator, spectator_again = got
        assert ana == ana_again, "two streams of one seat: the same bytes"
        assert spectator == spectator_again
        assert len({ana, bogdan, chiara, spectator}) == 4, "a seat and a spectator never share"
        parsed = [pb.WatchTableResponse.FromString(b).view for b in got]
        assert [v.seat if v.HasField("seat") else None for v in parsed] == [0, 0, 1, 2, None, None]
        for seat_view in parsed[:4]:
            assert seat_view.three_five_eight.hand
        assert not parsed[4].three_five_eight.hand, "a spectator sees no hand"
        assert parsed[0].three_five_eight.hand != parsed[2].three_five_eight.hand
    moved = pb.WatchTableResponse.FromString(second[mover_seat + 1]).view
    assert moved == reply.view
    table_builds = {key: n for key, n in builds.items() if key[0] == table_id}
    assert set(table_builds) >= {
        (table_id, version, seat)
        for version in (created.version, reply.view.version)
        for seat in (0, 1, 2, None)
    }
    assert set(table_builds.values()) == {1}, f"each (version, viewer) built once: {builds}"
