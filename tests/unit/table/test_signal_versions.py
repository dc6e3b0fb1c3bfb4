"""A Khözör table's numbers per viewer, for every seat 0..7 and the spectator: each
seat's version, the log positions hidden from it, its history's numbers and events,
its view and its pinned moves count its own team's signals and never the other
team's (docs/api.md, "Versions"); the spectator counts none.

Every seat is checked, seat 0 included: seat 0 is a seat like any other, never the
spectator (None), which is the slip a truthiness test of a seat number makes. Both
teams signal, a different number of times, so a viewer that counts the other team's
signals, or none, or all of them, is caught whichever seat it is. (A test that took
its seats from a random deal would look at seat 0 only now and then.)
"""

from __future__ import annotations

import pytest

from kozyr.games.khozor_teams import ConfirmOpener, Team, ToggleSignal, team_of
from kozyr.runtime.errors import Aborted, FailedPrecondition
from kozyr.table.app import Actor, TableApp
from kozyr.table.domain.model import Table
from kozyr.table.edge.shown import table_view
from tests.support.tables import khozor_tables, signal_taps

VIEWERS: list[int | None] = [*range(8), None]
"""Every seat, then the spectator."""
TAPS = (Team.A, Team.B, Team.A, Team.A)
"""Who taps, in order: team A's signaller three times (set, clear, set), team B's once."""


async def signalling_table() -> tuple[TableApp, Table, dict[Team, ToggleSignal]]:
    """The first seeded table where a seat of each team holds a set: its tap per team."""
    deals = 0
    async for app, table in khozor_tables():
        taps = {team: [t for s in team.seats for t in signal_taps(table, s)] for team in Team}
        if all(taps.values()):
            return app, table, {team: found[0] for team, found in taps.items()}
        deals += 1
        if deals == 100:  # a deal with a set on each team is common: the first few do
            break
    raise AssertionError("a hundred deals without a set on each team")


def _hidden(positions: dict[Team, list[int]], seat: int | None) -> list[int]:
    """The log positions `seat` may not see: every signal but its own team's."""
    own = team_of(seat) if seat is not None else None
    return sorted(p for team, found in positions.items() if team is not own for p in found)


@pytest.fixture
async def signalled() -> tuple[TableApp, Table, dict[Team, ToggleSignal], dict[Team, list[int]]]:
    """A table after TAPS: the app, the table, each team's tap, each team's positions."""
    app, table, taps = await signalling_table()
    positions: dict[Team, list[int]] = {Team.A: [], Team.B: []}
    for number, team in enumerate(TAPS):
        tap = taps[team]
        outcome = await app.submit(
            table.table_id,
            tap,
            request_id=f"tap-{number}",
            actor=Actor(table.seats[tap.seat], "player"),
        )
        table = outcome.table
        positions[team].append(table.version)
    return app, table, taps, positions


async def test_every_seat_s_version_and_history_count_its_own_team_s_signals_only(
    signalled: tuple[TableApp, Table, dict[Team, ToggleSignal], dict[Team, list[int]]],
) -> None:
    app, table, taps, positions = signalled
    assert sum(map(len, positions.values())) == len(TAPS)
    for seat in VIEWERS:
        hidden = _hidden(positions, seat)
        assert table.hidden_from(seat) == hidden, seat
        version = table.version_for(seat)
        assert version == table.version - len(hidden), seat
        shown = [p for p in range(1, table.version + 1) if p not in hidden]

        whole = await app.history(table, seat, 0, 1000)
        assert [number for number, _ in whole] == list(range(1, version + 1)), seat
        assert [event.position for _, event in whole] == shown, seat
        paged: list[int] = []  # one event a page: each page resumes after the last number
        while len(paged) < version:
            page = await app.history(table, seat, len(paged), 1)
            assert [number for number, _ in page] == [len(paged) + 1], seat
            paged += [event.position for _, event in page]
        assert paged == shown, seat
        assert await app.history(table, seat, version, 1000) == [], seat

        view = table_view(table, seat)
        assert view.version == version, seat
        set_by = {s.seat for s in view.khozor_teams.signals if s.three_set or s.five_set}
        assert set_by == ({taps[team_of(seat)].seat} if seat is not None else set()), seat


async def test_every_seat_s_pinned_move_is_stale_only_by_what_that_seat_saw(
    signalled: tuple[TableApp, Table, dict[Team, ToggleSignal], dict[Team, list[int]]],
) -> None:
    """A move pinned to the seat's own version is decided (here refused by the rules:
    the pin was accepted); pinned one below, it is ABORTED with the seat's version."""
    app, table, _, positions = signalled
    opening = table.game.turn(table.state).seats
    outsider = next(s for s in range(8) if s not in opening)  # never a valid opener
    for seat in range(8):
        version = table.version - len(_hidden(positions, seat))
        actor = Actor(table.seats[seat], "player")
        probe = ConfirmOpener(seat, outsider)
        with pytest.raises(FailedPrecondition):
            await app.submit(
                table.table_id,
                probe,
                request_id=f"pinned-{seat}",
                actor=actor,
                expected_version=version,
                viewer=seat,
            )
        with pytest.raises(Aborted) as stale:
            await app.submit(
                table.table_id,
                probe,
                request_id=f"stale-{seat}",
                actor=actor,
                expected_version=version - 1,
                viewer=seat,
            )
        assert stale.value.metadata["currentVersion"] == str(version), seat
