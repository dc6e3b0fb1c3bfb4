"""The public table events of a played game, read from NATS as clock, bots and
matchmaking would (a durable consumer on `<root>.public.table.<id>.>`), and what they
must tell: every turn with its deadline, every deal's end, the result — exactly once,
in order, with no hidden card or unrevealed seed (each one through the leak checker).
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from datetime import UTC, datetime

import nats
from google.protobuf import json_format
from nats.js.api import AckPolicy, ConsumerConfig, DeliverPolicy

from kozyr.api.table.v1 import events_pb2
from kozyr.bus.codec import MSG_ID_HEADER
from kozyr.bus.streams import jetstream_name
from kozyr.bus.subjects import PUBLIC_CHANNEL
from kozyr.eventstore import RecordedEvent
from kozyr.tablewire.public import decode
from tests.e2e.checks import expected_result
from tests.e2e.leaks import KHOZOR_TEAMS, find_leaks, seen_public
from tests.e2e.published import stored_events, wait_until_relayed
from tests.e2e.tables import PlayedGame

_CASES = {
    "table_opened": "TableOpened",
    "turn_started": "TurnStarted",
    "turn_ended": "TurnEnded",
    "seat_control_changed": "SeatControlChanged",
    "deal_ended": "DealEnded",
    "table_finished": "TableFinished",
}


@dataclass(frozen=True)
class PublicMessage:
    stream_sequence: int
    subject: str
    msg_id: str
    delivered: int
    event: events_pb2.PublicTableEvent

    @property
    def case(self) -> str:
        name = self.event.WhichOneof("event")
        assert name is not None, self.subject
        return name


async def published_public(nats_url: str, subject_root: str, table_id: str) -> list[PublicMessage]:
    """Every public message of the table, in stream order, acked one by one."""
    nc = await nats.connect(nats_url)
    js = nc.jetstream()
    stream = jetstream_name(PUBLIC_CHANNEL, subject_root)
    durable = f"e2e-public-{uuid.uuid4().hex[:12]}"
    config = ConsumerConfig(
        durable_name=durable,
        filter_subject=f"{subject_root}.{PUBLIC_CHANNEL}.table.{table_id}.>",
        deliver_policy=DeliverPolicy.ALL,
        ack_policy=AckPolicy.EXPLICIT,
    )
    found: list[PublicMessage] = []
    try:
        await js.add_consumer(stream, config)
        subscription = await js.pull_subscribe_bind(durable, stream)
        while True:
            try:
                messages = await subscription.fetch(256, timeout=1.0)
            except TimeoutError:
                break
            for message in messages:
                found.append(
                    PublicMessage(
                        stream_sequence=message.metadata.sequence.stream,
                        subject=message.subject,
                        msg_id=(message.headers or {}).get(MSG_ID_HEADER, ""),
                        delivered=message.metadata.num_delivered,
                        event=decode(message.data),
                    )
                )
                await message.ack()
        await subscription.unsubscribe()
        await js.delete_consumer(stream, durable)
    finally:
        await nc.close()
    return found


async def assert_public_events_tell_the_game(game: PlayedGame) -> None:
    deployment = game.deployment
    await wait_until_relayed(deployment.database_url)
    public = await published_public(deployment.nats_url, deployment.subject_root, game.table_id)
    stored = await stored_events(deployment.database_url, game.table_id)
    assert public, "no public event reached NATS"
    _assert_once_in_order(game, public)
    _assert_turns(public, stored)
    _assert_result(game, public)
    leaks = find_leaks(
        game.game,
        game.admin_history,
        None,
        [
            seen_public(json_format.MessageToDict(m.event), f"public #{i} {m.subject}")
            for i, m in enumerate(public)
        ],
    )
    assert not leaks, leaks[:20]


def _assert_once_in_order(game: PlayedGame, public: list[PublicMessage]) -> None:
    root = f"{game.deployment.subject_root}.{PUBLIC_CHANNEL}.table.{game.table_id}"
    assert [m.subject for m in public] == [f"{root}.{_CASES[m.case]}" for m in public]
    assert all(m.event.table_id == game.table_id for m in public)
    assert len({m.msg_id for m in public}) == len(public), "a Nats-Msg-Id published twice"
    assert all(m.msg_id for m in public)
    assert all(m.delivered == 1 for m in public)
    sequences = [m.stream_sequence for m in public]
    assert sequences == sorted(set(sequences))
    cases = [m.case for m in public]
    assert cases[0] == "table_opened"
    assert cases[-1] == "table_finished"
    assert cases.count("table_opened") == cases.count("table_finished") == 1


def _assert_turns(public: list[PublicMessage], stored: list[RecordedEvent]) -> None:
    """Each TurnStarted is ended once before the next starts, and the turns announced
    are exactly the turns a seat had to take, as the log recorded them (kind, seats,
    deadline)."""
    open_turn: int | None = None
    announced: dict[int, tuple[str, list[int], datetime]] = {}
    for message in public:
        if message.case == "turn_started":
            started = message.event.turn_started
            assert open_turn is None, f"turn {started.number} started over turn {open_turn}"
            open_turn = started.number
            deadline = started.deadline.ToDatetime(tzinfo=UTC)
            announced[started.number] = (started.kind, [s.seat for s in started.seats], deadline)
        elif message.case == "turn_ended":
            assert message.event.turn_ended.number == open_turn
            assert message.event.turn_ended.how != events_pb2.TURN_END_UNSPECIFIED
            open_turn = None
    assert open_turn is None
    recorded: dict[int, tuple[str, list[int], datetime]] = {}
    for event in stored:
        turn, deadline = event.metadata["turn"], event.metadata["deadline"]
        if turn["seats"] and turn["kind"] not in ("chance", "over"):
            when = datetime.fromisoformat(deadline)
            recorded.setdefault(turn["number"], (turn["kind"], turn["seats"], when))
    assert announced == recorded


def _assert_result(game: PlayedGame, public: list[PublicMessage]) -> None:
    """Every deal's end, and the result ratings need, match the final view."""
    deals = [m.event.deal_ended for m in public if m.case == "deal_ended"]
    assert [d.deal for d in deals] == list(range(1, len(deals) + 1))
    finished = public[-1].event.table_finished
    assert [r.player_id for r in finished.results] == game.players
    result = expected_result(game.game, game.admin_final)
    if game.game == KHOZOR_TEAMS:
        wins = [result["wins"]["AB"[seat % 2]] for seat in range(len(game.players))]
        assert len(deals) == sum(result["wins"].values())
        assert [r.score for r in finished.results] == wins
        winners = {r.seat % 2 for r in finished.results if r.place == 1}
        assert winners == {"AB".index(result["winner"])}
    else:
        assert len(deals) == 18
        assert [r.score for r in finished.results] == result["totals"]
        assert [r.place for r in finished.results] == result["places"]
    assert list(deals[-1].scores) == [r.score for r in finished.results]
