"""The leak checker on public table events: silent on the honest ones, loud on a card or
an unrevealed seed slipped into one (so the e2e check of every public event means
something). A table is opened in-process on the in-memory store; no service runs.
"""

from __future__ import annotations

import copy
from typing import Any

import pytest
from google.protobuf import json_format

from kozyr.eventstore import InMemoryEventStore, QueuedMessage
from kozyr.games import three_five_eight
from kozyr.table.adapters.repository import stream_of
from kozyr.table.app import Actor, TableApp
from kozyr.tablewire.public import decode
from tests.e2e.leaks import THREE_FIVE_EIGHT, LoggedEvent, find_leaks, seen_public

pytestmark = pytest.mark.e2e


async def opened_table() -> tuple[list[LoggedEvent], list[dict[str, Any]]]:
    """The admin history of a new 3-5-8 table and its public events as plain JSON."""
    store = InMemoryEventStore()
    outcome = await TableApp(store).create(
        request_id="r",
        game_id=three_five_eight.GAME_ID,
        options={"turn_seconds": 60},
        seats=["ana", "bogdan", "chiara"],
        actor=Actor("matchmaker", "service"),
    )
    events = await store.read(stream_of(outcome.table.table_id))
    admin = [LoggedEvent(e.position, e.type, e.data) for e in events]
    async with store.outbox_reader(lock_key=1, on_queued=lambda: None) as reader:
        assert await reader.lead()
        entries = await reader.pending(100)
    public = [
        json_format.MessageToDict(decode(entry.item.payload))
        for entry in entries
        if isinstance(entry.item, QueuedMessage)
    ]
    return admin, public


def leaks(admin: list[LoggedEvent], public: list[dict[str, Any]]) -> list[str]:
    seen = [seen_public(data, f"public #{i}") for i, data in enumerate(public)]
    return find_leaks(THREE_FIVE_EIGHT, admin, None, seen)


async def test_honest_public_events_pass() -> None:
    admin, public = await opened_table()
    assert [next(iter(p.keys() - {"tableId"})) for p in public] == ["tableOpened", "turnStarted"]
    assert leaks(admin, public) == []


async def test_a_card_or_a_deal_seed_in_a_public_event_is_caught() -> None:
    admin, public = await opened_table()
    dealt = next(e for e in admin if e.type == "CardsDealt")
    card, seed = dealt.data["hands"][0][0], dealt.data["seed"]
    with_card = copy.deepcopy(public)
    with_card[1]["turnStarted"]["kind"] = f"play {card}"
    with_seed = copy.deepcopy(public)
    with_seed[0]["tableOpened"]["options"]["note"] = seed
    assert any(f"card {card}" in problem for problem in leaks(admin, with_card))
    assert any("seed of a deal" in problem for problem in leaks(admin, with_seed))
