"""Honest tables verify and replay. Whole games are played through the real TableApp on
the in-memory event store (same hashes and contract as PostgreSQL), with seeded random
legal moves and seeded chance, so every run replays the same games.

The helpers here (`played`, `forged`, `rehashed`, `cards_named`) serve the other
audit test modules too.
"""

from __future__ import annotations

import asyncio
import copy
import dataclasses
import json
import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import cache
from typing import Any

import pytest

from kozyr.eventstore import InMemoryEventStore, RecordedEvent, StreamHead, VerifyReport
from kozyr.eventstore.hashing import GENESIS_HASH, canonical_event, chain_hash
from kozyr.eventstore.verification import verify_events
from kozyr.games import khozor_teams, three_five_eight
from kozyr.games.decider import Decider
from kozyr.table import audit
from kozyr.table.adapters.repository import stream_of
from kozyr.table.app import Actor, TableApp
from kozyr.table.domain.model import Table

PLAYERS = {
    three_five_eight.GAME_ID: ("ana", "bogdan", "chiara"),
    khozor_teams.GAME_ID: tuple(f"p{i}" for i in range(8)),
}
CARD_NAMES = frozenset(str(c) for c in (*three_five_eight.DECK, *khozor_teams.DECK))
SIGNAL_ODDS = 0.05
"""How often a Khözör seat toggles a signal instead of moving (keeps matches finite)."""
TIMEOUT_ODDS = 0.03
"""How often a turn times out and the clock plays the default move."""
MATCHMAKER = Actor("matchmaking", "service")
CLOCK = Actor("clock", "service")


def choose(table: Table, rng: random.Random) -> tuple[int, Any]:
    """A seat whose turn it is and one of its legal commands (signals now and then)."""
    game: Decider[Any, Any, Any] = table.game
    seat = rng.choice(game.turn(table.state).seats)
    commands = game.legal_commands(table.state, seat)
    moves = [c for c in commands if not isinstance(c, khozor_teams.ToggleSignal)]
    return seat, rng.choice(moves if moves and rng.random() > SIGNAL_ODDS else commands)


async def play_to_the_end(app: TableApp, game_id: str, rng: random.Random) -> Table:
    """Create a table, then let its players move (and the clock, now and then, play a
    timed-out turn's default move) until the game is over."""
    created = await app.create(
        request_id=f"create-{rng.random()}",
        game_id=game_id,
        options={},
        seats=PLAYERS[game_id],
        actor=MATCHMAKER,
    )
    table = created.table
    moves = 0
    while not table.is_over:
        moves += 1
        if rng.random() < TIMEOUT_ODDS:
            turn = table.game.turn(table.state)
            outcome = await app.expire_turn(table.table_id, turn.number, CLOCK)
        else:
            seat, command = choose(table, rng)
            player = Actor(table.seats[seat], "player")
            outcome = await app.submit(
                table.table_id, command, request_id=f"move-{moves}", actor=player
            )
        table = outcome.table
    return table


@dataclass(frozen=True)
class Played:
    """A finished table: its final state, its stored events and their chain report."""

    table: Table
    events: tuple[RecordedEvent, ...]
    chain: VerifyReport

    def copy_events(self) -> list[RecordedEvent]:
        """Events whose data and metadata a test may change without touching the cache."""
        return [
            dataclasses.replace(e, data=copy.deepcopy(e.data), metadata=copy.deepcopy(e.metadata))
            for e in self.events
        ]


async def play(game_id: str, seed: int) -> Played:
    rng = random.Random(seed)
    store = InMemoryEventStore()
    table = await play_to_the_end(TableApp(store, new_seed=lambda: rng.randbytes(32)), game_id, rng)
    stream = stream_of(table.table_id)
    return Played(table, tuple(await store.read(stream)), await store.verify(stream))


@cache
def played(game_id: str, seed: int = 1) -> Played:
    """One whole game per (game, seed), played once per test session."""
    return asyncio.run(play(game_id, seed))


def rehashed(events: Sequence[RecordedEvent]) -> tuple[list[RecordedEvent], VerifyReport]:
    """What a forger with database access does after changing rows: recompute every hash
    so that the store's chain holds again. Returns the events and their chain report."""
    out: list[RecordedEvent] = []
    previous = GENESIS_HASH
    for e in events:
        canonical = canonical_event(
            event_id=e.event_id,
            stream=e.stream,
            position=e.position,
            event_type=e.type,
            schema_version=e.schema_version,
            data=e.data,
            metadata=e.metadata,
            recorded_at=e.recorded_at,
        )
        previous = chain_hash(previous, canonical)
        out.append(dataclasses.replace(e, hash=previous.hex()))
    stream = events[0].stream
    head = StreamHead(stream, len(out), previous.hex())
    return out, verify_events(stream, head, out)


def forged(
    game: Played, position: int, change: Callable[[dict[str, Any]], None]
) -> tuple[list[RecordedEvent], VerifyReport]:
    """The game with event `position`'s data changed by `change`, chain re-hashed."""
    events = game.copy_events()
    change(events[position - 1].data)
    return rehashed(events)


def first(game: Played, type_name: str, nth: int = 1) -> RecordedEvent:
    """The nth event of a type (1-based)."""
    return [e for e in game.events if e.type == type_name][nth - 1]


def cards_named(value: Any) -> set[str]:
    """Every card named anywhere in a JSON-able value, texts included (word by word)."""
    if isinstance(value, str):
        return {w.strip(",;:()") for w in value.split()} & CARD_NAMES
    if isinstance(value, dict):
        return set().union(*(cards_named(v) for v in value.values())) if value else set()
    if isinstance(value, list | tuple):
        return set().union(*(cards_named(v) for v in value)) if value else set()
    return set()


GAMES = [three_five_eight.GAME_ID, khozor_teams.GAME_ID]


# ------------------------------------------------------------------------ verify


@pytest.mark.parametrize("game_id", GAMES)
def test_an_honest_table_verifies(game_id: str) -> None:
    game = played(game_id)
    assert game.chain.ok

    report = audit.verify(game.events, game.chain)

    assert report.ok, report.problem
    assert report.problem is None
    assert report.over
    deals = [e for e in game.events if e.type in ("CardsDealt", "RoundDealt")]
    reveals = [e for e in game.events if e.type == "DealSeedRevealed"]
    assert report.deals_rederived == len(deals) > 0
    assert report.seeds_revealed == len(reveals) == len(deals)
    assert report.moves_redecided > 0
    assert report.result == game.table.game.result(game.table.state)
    assert report.result_position == game.events[-1].position
    assert "OK: every check holds." in report.to_text()
    assert json.loads(json.dumps(report.to_dict()))["ok"] is True


def test_a_358_game_has_eighteen_deals_and_every_move_is_redecided() -> None:
    game = played(three_five_eight.GAME_ID)
    report = audit.verify(game.events, game.chain)
    moves = sum(
        e.type in ("ContractChosen", "CardExchanged", "CardsDiscarded", "CardPlayed")
        for e in game.events
    )
    assert report.deals_rederived == three_five_eight.DEALS
    assert report.moves_redecided == moves
    assert report.chance_redecided == three_five_eight.DEALS + 1  # the first dealer's draw


def test_a_table_still_in_progress_verifies_without_a_result() -> None:
    game = played(three_five_eight.GAME_ID)
    middle = [e for e in game.events if e.type == "TrickTaken"][20].position
    events = list(game.events[:middle])
    report = audit.verify(events, rehashed(events)[1])
    assert report.ok, report.problem
    assert not report.over
    assert report.result_position is None
    assert "still in progress" in report.to_text()


# ------------------------------------------------------------------------ replay


@pytest.mark.parametrize("game_id", GAMES)
def test_the_replayed_result_is_the_games_result(game_id: str) -> None:
    game = played(game_id)
    replay = audit.replay(game.events)
    assert replay.over
    assert replay.result == game.table.game.result(game.table.state)
    assert replay.version == len(game.events) == game.table.version
    assert replay.seats == PLAYERS[game_id]
    assert json.loads(json.dumps(replay.to_dict()))["result"] == replay.result


def test_the_moderator_sees_every_hand_of_every_deal_as_dealt() -> None:
    game = played(three_five_eight.GAME_ID)
    replay = audit.replay(game.events)
    dealt = [e for e in game.events if e.type == "CardsDealt"]
    assert [d.number for d in replay.deals] == list(range(1, three_five_eight.DEALS + 1))
    for deal, event in zip(replay.deals, dealt, strict=True):
        hands, talon = three_five_eight.deal_from_seed(bytes.fromhex(event.data["seed"]))
        assert deal.start.data["hands"] == [[str(c) for c in h] for h in hands]
        assert deal.start.data["talon"] == [str(c) for c in talon]
        assert len(deal.tricks) == 16
        assert [t["number"] for t in deal.tricks] == list(range(1, 17))


def when(event: RecordedEvent) -> str:
    """The time of an event as the text writes it: date, time and zone."""
    return f"{event.recorded_at:%Y-%m-%d %H:%M:%S} UTC"


def play_line(game: Played, play: RecordedEvent) -> str:
    """The moderator's text line of one card played: the seat with its player, the card,
    the time, and who played it when that was not the seat's own player (the clock)."""
    seat = play.data["seat"]
    by = " (by clock)" if play.metadata["actor"] == "clock" else ""
    player = PLAYERS[game.table.game_id][seat]
    return (
        f"  #{play.position} seat {seat} ({player}) plays {play.data['card']}  [{when(play)}{by}]"
    )


def test_the_358_text_tells_deals_tricks_and_result() -> None:
    game = played(three_five_eight.GAME_ID)
    replay = audit.replay(game.events)
    text = replay.to_text()
    first_deal = replay.deals[0]
    assert f"Deal 1 (#{first_deal.start.position}, {when(game.events[2])})" in text
    assert "Deal 18 (" in text
    for seat, hand in enumerate(first_deal.start.data["hands"]):
        assert f"seat {seat} ({PLAYERS[game.table.game_id][seat]}): {' '.join(hand)}" in text
    lines = text.splitlines()
    for play in [e for e in game.events if e.type == "CardPlayed"]:
        assert play_line(game, play) in lines
    for trick in [e for e in game.events if e.type == "TrickTaken"]:
        assert any(line.startswith(f"  #{trick.position} trick ") for line in lines)
    totals = " / ".join(str(t) for t in replay.result["totals"])
    assert f"Result: totals {totals}" in text


def test_the_khozor_replay_goes_play_by_play() -> None:
    game = played(khozor_teams.GAME_ID)
    replay = audit.replay(game.events)
    text = replay.to_text()
    led = first(game, "CardsLed")
    seat = led.data["seat"]
    assert (
        f"#{led.position} seat {seat} (p{seat}) leads {' '.join(led.data['cards'])}"
        f"  [{when(led)}" in text
    )
    rounds = [e for e in game.events if e.type == "RoundDealt"]
    assert [d.number for d in replay.deals] == list(range(1, len(rounds) + 1))
    steps = sum(len(d.steps) + 1 for d in replay.deals)
    assert steps + len(replay.opening) + len(replay.ending) == len(game.events)
    winner = replay.result["winner"]
    assert f"winner {winner}" in text
    assert replay.ending[-1].type == "MatchWon"


def test_the_moderator_text_tells_who_played_when_it_was_not_the_seats_player() -> None:
    game = played(three_five_eight.GAME_ID)
    text = audit.replay(game.events).to_text()
    plays = [e for e in game.events if e.type == "CardPlayed"]
    assert {e.metadata["actor"] for e in plays} == {"clock", *PLAYERS[game.table.game_id]}
    assert text.count(" (by clock)]") >= sum(e.metadata["actor"] == "clock" for e in plays)
    assert " (by ana)" not in text  # a player's own moves need no mention
    chosen = first(game, "ContractChosen", 5)
    clock = chosen.metadata["actor"] == "clock"
    seat = chosen.data["seat"]
    assert (
        f"#{chosen.position} seat {seat} ({PLAYERS[game.table.game_id][seat]}) declares"
        f" {chosen.data['contract']}  [{when(chosen)}{' (by clock)' if clock else ''}]"
    ) in text
    replayed = audit.replay(game.events).to_dict()["deals"][0]["steps"][0]
    assert replayed["origin"]["actor"] == game.events[replayed["position"] - 1].metadata["actor"]
    assert audit.replay(game.events, 0).to_dict()["deals"][0]["steps"][0]["origin"] is None


def test_a_seat_that_does_not_exist_is_refused() -> None:
    game = played(three_five_eight.GAME_ID)
    with pytest.raises(audit.NoSuchSeat, match="seats 0-2"):
        audit.replay(game.events, seat=3)


def test_a_stream_that_is_no_table_cannot_be_replayed() -> None:
    game = played(three_five_eight.GAME_ID)
    with pytest.raises(audit.AuditError, match="#2"):
        audit.replay(game.events[1:])
    with pytest.raises(audit.AuditError, match="no events"):
        audit.replay([])
