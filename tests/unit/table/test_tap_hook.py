"""The tap limit applies to whatever a game's plugin hook `tapped_by` names — the same
hook the fold records taps with — not to a function its rules module happens to have.

A test-only game, "higher card wins" (tests/support/higher_card) under another id,
whose plugin counts every card played as a tap and whose rules know nothing of taps:
with a limit of one tap a minute, a seat's second card within the minute is refused
(TOO_MANY_SIGNALS) and nothing is appended. (Before, the table service looked for
`tapped_by` in the rules module, so such a game had its taps recorded but never
limited.)
"""

from __future__ import annotations

import functools
import random
from collections.abc import Iterator
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from typing import Any, cast

import pytest

from kozyr.eventstore import InMemoryEventStore
from kozyr.games import plugin as plugins
from kozyr.runtime.errors import ResourceExhausted
from kozyr.table.app import Actor, TableApp, TapLimit
from kozyr.table.domain.model import Table
from tests.support.higher_card import PLUGIN
from tests.support.higher_card import rules as g

GAME_ID = "tapping_higher_card"
PLAYERS = ("ana", "bo")
NOW = datetime(2030, 1, 1, tzinfo=UTC)


class _Rules:
    """higher_card's rules under this test's game id (no `tapped_by` among them)."""

    GAME_ID = GAME_ID

    def __getattr__(self, name: str) -> Any:
        return getattr(g, name)


def _card_tap(event: object) -> int | None:
    """Every card played is its seat's tap."""
    return event.seat if isinstance(event, g.CardPlayed) else None


TAPPING = replace(PLUGIN, id=GAME_ID, code=98, rules=cast(Any, _Rules()), tapped_by=_card_tap)


@pytest.fixture
def tapping_game() -> Iterator[None]:
    """The game registered for this test only (every-game tests must not meet it)."""
    plugins.register(TAPPING)
    try:
        yield
    finally:
        plugins._BY_ID.pop(GAME_ID, None)  # no unregister in the product: tests only
        plugins._BY_CODE.pop(TAPPING.code, None)


async def _move(app: TableApp, table: Table, n: int) -> Table:
    """The seat to act plays its first legal card."""
    seat = min(table.game.turn(table.state).seats)
    command = table.game.legal_commands(table.state, seat)[0]
    actor = Actor(PLAYERS[seat], "player")
    outcome = await app.submit(table.table_id, command, request_id=f"m-{n}", actor=actor)
    return outcome.table


@pytest.mark.usefixtures("tapping_game")
async def test_the_limit_counts_the_taps_the_plugin_hook_names() -> None:
    app = TableApp(
        InMemoryEventStore(clock=lambda: NOW),
        clock=lambda: NOW,
        new_seed=functools.partial(random.Random(0).randbytes, 32),
        tap_limit=TapLimit(taps=1, window=timedelta(seconds=60)),
    )
    created = await app.create(
        request_id="t", game_id=GAME_ID, options={}, seats=PLAYERS, actor=Actor("mm", "service")
    )
    table = await _move(app, created.table, 1)  # the leader's first card: his one tap
    table = await _move(app, table, 2)  # the other seat's: its one tap
    assert all(len(table.taps_of(s)) == 1 for s in range(2)), "the fold records each tap"
    with pytest.raises(ResourceExhausted) as refused:  # whoever leads the next round
        await _move(app, table, 3)
    assert refused.value.reason == "TOO_MANY_SIGNALS"
    assert (await app.load(table.table_id)).version == table.version, "nothing appended"
