"""A client that drops its watch stream must not take the table service down.

Regression test. Found by the e2e games (the restarted service of the crash test died
at the end of a game, "Fatal Python error: Segmentation fault" in its log): when a
client cancelled WatchTable while the server's stream generator waited at its `yield`,
gRPC abandoned the generator and asyncio closed it later, in another task, after the
call was freed; the logging interceptor then called `context.peer()` on the freed call
(a use after free in grpc core) and reset its ContextVar tokens from a foreign Context.
Any player could do it. Fixed in c3c759b (streaming handlers are drained in the call's
own task); on the code before that this test fails within a second or two.
"""

from __future__ import annotations

import asyncio

import grpc
import pytest

from kozyr.api.common.v1 import games_pb2
from kozyr.client import TableClient
from kozyr.runtime.auth import Role
from tests.e2e.conftest import Deployment
from tests.support.tables import token

pytestmark = pytest.mark.e2e

ROUNDS = 10
WATCHERS = 10
LOG_FAULTS = ("Fatal Python error", "Traceback", "Task exception was never retrieved")


async def _watch_one_view_and_leave(target: str, table_id: str) -> None:
    async with TableClient(target, token("ana")) as client:
        stream = client.watch(table_id)
        await anext(stream)
        await stream.aclose()


async def test_dropped_watch_streams_leave_the_service_up(table_deployment: Deployment) -> None:
    target = table_deployment.target
    async with TableClient(target, token("matchmaker", Role.SERVICE)) as matchmaker:
        created = await matchmaker.create_table(
            games_pb2.GAME_THREE_FIVE_EIGHT, ["ana", "bogdan", "chiara"]
        )
    service = table_deployment.service
    try:
        for _ in range(ROUNDS):
            await asyncio.gather(
                *(_watch_one_view_and_leave(target, created.table_id) for _ in range(WATCHERS))
            )
        async with TableClient(target, token("ana")) as client:
            view = await client.get_table(created.table_id)
    except grpc.aio.AioRpcError as error:
        pytest.fail(f"the service stopped answering ({error.code()}):\n{service.log_tail()}")
    assert view.version == created.version
    assert service.running, service.log_tail()
    log = service.log_path.read_text(errors="replace")
    assert not [fault for fault in LOG_FAULTS if fault in log], service.log_tail()
