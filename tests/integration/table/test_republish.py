"""Rebuilding the bus from the log: tables played through the real service, their
JetStream streams deleted, `republish` run — the raw and the public streams hold again
exactly what the relay had published (same subjects, same bodies, same order per table),
so any consumer reading them from the start ends in the same state; a second
`republish` stores nothing new."""

from __future__ import annotations

import asyncio
import contextlib
from collections import defaultdict

import nats
import pytest
from nats.js import JetStreamContext
from nats.js.errors import NotFoundError

from kozyr.api.common.v1 import games_pb2, seats_pb2
from kozyr.bus.streams import jetstream_name
from kozyr.client import TableClient
from kozyr.eventstore import PostgresEventStore
from kozyr.runtime.auth import Role
from kozyr.table.adapters.republishing import republish
from tests.e2e.moderation import kozyr_cli
from tests.integration.table.conftest import running_table_service
from tests.support.tables import token

pytestmark = pytest.mark.integration

Copy = dict[str, list[tuple[str, bytes]]]
"""Per table: its messages' (subject, body) in stream order."""


async def _copy(js: JetStreamContext, stream: str) -> Copy:
    """Every message of a stream, grouped by table (the subject's table id)."""
    last = (await js.stream_info(stream)).state.last_seq
    found: Copy = defaultdict(list)
    for sequence in range(1, last + 1):
        message = await js.get_msg(stream, sequence)
        assert message.subject is not None
        table = message.subject.split(".table.")[1].split(".")[0]
        found[table].append((message.subject, message.data or b""))
    return found


async def _played(target: str) -> list[str]:
    """Two tables moved along by expiries and a covered seat taken back."""
    async with (
        TableClient(target, token("clock", Role.SERVICE)) as clock,
        TableClient(target, token("ana")) as ana,
    ):
        tables = []
        for game, seats in (
            (games_pb2.GAME_THREE_FIVE_EIGHT, ["ana", "bo", None]),
            (games_pb2.GAME_KHOZOR_TEAMS, [f"p{i}" for i in range(8)]),
        ):
            table_id = (await clock.create_table(game, seats)).table_id
            for _ in range(6):
                await clock.expire_turn(table_id, (await clock.get_table(table_id)).turn.number)
            tables.append(table_id)
        await clock.set_seat_control(tables[0], 0, seats_pb2.SEAT_CONTROL_COMPUTER)
        await clock.set_seat_presence(tables[0], 1, False)
        mine = await ana.get_table(tables[0])
        if mine.legal_actions:
            await ana.submit(tables[0], mine.legal_actions[0], expected_version=mine.version)
        return tables


async def _relayed(store: PostgresEventStore) -> None:
    """Until the relay has published the whole outbox (within 30 s)."""
    for _ in range(600):
        if not (await store.outbox_backlog()).entries:
            return
        await asyncio.sleep(0.05)
    raise AssertionError("the relay did not publish the outbox")


async def test_deleted_streams_are_rebuilt_from_the_log(
    database_url: str, nats_url: str, subject_root: str
) -> None:
    async with running_table_service(database_url, nats_url, subject_root) as running:
        tables = await _played(running.target)
        await _relayed(running.service.store)
    raw, public = jetstream_name("table", subject_root), jetstream_name("public", subject_root)
    nc = await nats.connect(nats_url)
    js = nc.jetstream()
    try:
        published = {stream: await _copy(js, stream) for stream in (raw, public)}
        assert set(published[public]) == set(tables)
        for stream in (raw, public):
            await js.delete_stream(stream)

        async with PostgresEventStore(database_url) as log:
            first = await republish(log, js, subject_root)
            again = await republish(log, js, subject_root)
        rebuilt = {stream: await _copy(js, stream) for stream in (raw, public)}
        assert rebuilt == published
        assert first.events == sum(len(m) for m in published[raw].values())
        assert first.messages == sum(len(m) for m in published[public].values())
        assert (again.events, again.messages) == (first.events, first.messages)
        for stream in (raw, public):
            stored = (await js.stream_info(stream)).state.messages
            assert stored == sum(len(m) for m in rebuilt[stream].values()), "no twice"

        for stream in (raw, public):
            await js.delete_stream(stream)
        ran = await kozyr_cli(
            database_url, "republish", nats_url=nats_url, subject_root=subject_root
        )
        assert ran.exit_code == 0, ran.stderr
        assert f"republished {first.events} events and {first.messages} public" in ran.stdout
        assert {stream: await _copy(js, stream) for stream in (raw, public)} == published
    finally:
        for stream in (raw, public):
            with contextlib.suppress(NotFoundError):
                await js.delete_stream(stream)
        await nc.close()
