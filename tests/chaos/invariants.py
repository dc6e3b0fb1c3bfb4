"""What must hold after every fault, whatever the timing was.

- Every move the service acknowledged is in the log exactly once (one contiguous run
  of events per request id, in every table's stream), and the load's tables hold no
  scenario move nobody sent.
- JetStream holds, per table, exactly the events table's stream: same events in the
  same order, no duplicate and no gap (the relay caught up after the fault).
- `kozyr verify` passes for every table (the load's are over; tables the computers
  play may still be in play); every client's watch stream ended on the finished table
  without gap or repeat.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass

import asyncpg

from kozyr.cli.tables import read_table
from kozyr.infra import libpq_dsn
from kozyr.table import audit
from kozyr.table.adapters.repository import STREAM_PREFIX, stream_of
from tests.chaos.load import Load
from tests.chaos.stack import Stack
from tests.chaos.template import PREFILL_REQUEST, SUBJECT_ROOT
from tests.e2e.checks import watch_problems
from tests.e2e.published import published_tables, wait_until_relayed

_EVENTS = """
SELECT stream, position, event_id::text, type, metadata->>'request_id'
  FROM events ORDER BY global_position
"""


@dataclass(frozen=True)
class Logged:
    """One row of the events table."""

    stream: str
    position: int
    event_id: str
    type: str
    request_id: str


async def logged_events(database_url: str) -> list[Logged]:
    connection = await asyncpg.connect(libpq_dsn(database_url))
    try:
        return [Logged(*row) for row in await connection.fetch(_EVENTS)]
    finally:
        await connection.close()


def request_runs(events: list[Logged]) -> dict[tuple[str, str], list[tuple[int, int]]]:
    """(stream, request id) → the runs of consecutive positions its events occupy."""
    runs: dict[tuple[str, str], list[tuple[int, int]]] = defaultdict(list)
    last: dict[str, Logged] = {}
    for event in events:
        before = last.get(event.stream)
        key = (event.stream, event.request_id)
        if before is not None and before.request_id == event.request_id:
            first, _ = runs[key][-1]
            runs[key][-1] = (first, event.position)
        else:
            runs[key].append((event.position, event.position))
        last[event.stream] = event
    return runs


def assert_positions_dense(events: list[Logged]) -> None:
    """Each stream's positions are 1, 2, 3, … in log order."""
    by_stream: dict[str, list[int]] = defaultdict(list)
    for event in events:
        by_stream[event.stream].append(event.position)
    bad = {s: p for s, p in by_stream.items() if p != list(range(1, len(p) + 1))}
    assert not bad, f"streams with a gap or reorder: {sorted(bad)}"


def assert_acknowledged_exactly_once(load: Load, events: list[Logged]) -> None:
    """Acknowledged moves = the scenario's moves in the log, each appended once."""
    assert_positions_dense(events)
    runs = request_runs(events)
    repeated = {key: spans for key, spans in runs.items() if len(spans) > 1}
    assert not repeated, f"a request appended more than once: {repeated}"
    acknowledged = {}
    for client in load.clients:
        for ack in client.log.acknowledged:
            acknowledged[(stream_of(client.table_id), ack.request_id)] = ack
    lost = sorted(key for key in acknowledged if key not in runs)
    assert not lost, f"{len(lost)} acknowledged moves are not in the log: {lost[:10]}"
    played = {stream_of(table.table_id) for table in load.stack.tables}
    scenario = {k for k in runs if k[0] in played and not k[1].startswith(PREFILL_REQUEST)}
    invented = sorted(scenario - acknowledged.keys())
    assert not invented, f"{len(invented)} moves in the log nobody got an answer for: {invented}"
    assert acknowledged, "no move was acknowledged"


async def assert_jetstream_equals_events(stack: Stack, events: list[Logged]) -> None:
    """Once the outbox is empty: JetStream's table messages are the events table (those
    appended after the template, on a cluster whose JetStream started empty)."""
    await wait_until_relayed(stack.database_url)
    if stack.since_template:
        events = [e for e in events if not e.request_id.startswith(PREFILL_REQUEST)]
    published = await published_tables(stack.nats_url, SUBJECT_ROOT)
    ids = [p.msg_id for p in published]
    assert len(set(ids)) == len(ids), "a Nats-Msg-Id published twice"
    in_stream: dict[str, list[tuple[int, str, str]]] = defaultdict(list)
    for message in published:
        event = message.event
        in_stream[event.stream].append((event.position, str(event.event_id), message.msg_id))
        table_id = event.stream.removeprefix(STREAM_PREFIX)
        assert message.subject == f"{SUBJECT_ROOT}.table.{table_id}.{event.type}"
    logged: dict[str, list[tuple[int, str, str]]] = defaultdict(list)
    for row in events:
        logged[row.stream].append((row.position, row.event_id, row.event_id))
    assert sorted(in_stream) == sorted(logged), "JetStream and the log hold different tables"
    differ = [s for s in logged if in_stream[s] != logged[s]]
    assert not differ, f"JetStream differs from the log (duplicate, gap or order) in {differ}"


async def assert_every_table_verifies(stack: Stack, in_play: Sequence[str] = ()) -> None:
    """`kozyr verify`'s own path (the CLI's reader and the audit) for every table: the
    load's, over, and the tables `in_play`."""
    over = {table.table_id for table in stack.tables}
    for table_id in [*over, *in_play]:
        stream = await read_table(stack.database_url, table_id)
        report = audit.verify(stream.events, stream.chain)
        summary = report.to_dict()
        assert report.ok, f"{table_id}: {summary['problem']}"
        assert summary["over"] is True or table_id not in over, f"{table_id} is not over"


def assert_watchers_saw_the_end(load: Load) -> None:
    """Every client resumed its watch where it left off and saw its game end."""
    problems = {c.log.player_id: watch_problems(c.log) for c in load.clients}
    assert not any(problems.values()), {k: v for k, v in problems.items() if v}


async def assert_nothing_lost_or_invented(load: Load, in_play: Sequence[str] = ()) -> int:
    """Every check of this module, after the games ended and once nothing appends any
    more (the outbox emptied first); `in_play`: tables not played by the load (the
    computers') that must verify too. Returns how many events were checked."""
    stack = load.stack
    assert_watchers_saw_the_end(load)
    await wait_until_relayed(stack.database_url)
    events = await logged_events(stack.database_url)
    assert_acknowledged_exactly_once(load, events)
    await assert_jetstream_equals_events(stack, events)
    await assert_every_table_verifies(stack, in_play)
    return len(events)
