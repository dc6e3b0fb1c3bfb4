"""Ratings in the event store: one stream per player and game, one event per table.

`rating-<game>-<player key>` holds a `RatingChanged` per table the player finished:
the table, his seat, place and score, his skill before and after. A player's rating is
the last `after`; his history is the stream.

**Each table counted once.** A TableFinished may be delivered again (a redelivery, a
restart, a second replica). Every append carries `request_id = table:<table_id>` on the
player's stream — the store answers a repeat with the first result and appends nothing
— and the update is computed from each player's skill *before* that table: a player
already updated for it (a handling that died half-way) contributes the `before` his
event recorded, the others their current skill. So a second handling computes exactly
what the first did, and completes what the first left undone.

The leaderboard is a read model in memory, fed by this replica's own appends and by
every replica's `RatingChanged` events on NATS (`<root>.rating.>`, published by the
outbox relay; replayed from the start when the replica starts).
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from kozyr.eventstore import (
    Append,
    Appended,
    AppendResult,
    ConcurrencyConflict,
    EventStore,
    NewEvent,
    RecordedEvent,
    Repeated,
    Settled,
    decide_and_append,
)
from kozyr.matchmaking.lobby import Skill
from kozyr.matchmaking.ratings import DEFAULT, SeatOutcome, ordinal, rate

CATEGORY = "rating"
_PLAIN = re.compile(r"[A-Za-z0-9_-]{1,100}")


def player_key(player_id: str) -> str:
    """A stream-id-safe key of a player id: `p_<id>` when it is letters, digits, `_`
    and `-` (readable in SQL), else `h_<sha-256>` (ids may hold any printable
    character). The prefixes keep the two forms apart."""
    if _PLAIN.fullmatch(player_id):
        return f"p_{player_id}"
    return f"h_{hashlib.sha256(player_id.encode()).hexdigest()}"


def stream_of(game: str, player_id: str) -> str:
    return f"{CATEGORY}-{game}-{player_key(player_id)}"


@dataclass(frozen=True, slots=True)
class RatingRecord:
    """A player's rating in one game, as his stream folds."""

    player_id: str
    game: str
    skill: Skill
    tables: int
    version: int

    @property
    def ordinal(self) -> float:
        return ordinal(self.skill)


@dataclass(frozen=True, slots=True)
class RatedTable:
    """One table in a player's rating history."""

    table_id: str
    game: str
    seat: int
    place: int
    score: int
    change: float
    at: datetime
    abandoned: bool = False


def _record(player_id: str, game: str, events: Sequence[RecordedEvent]) -> RatingRecord:
    skill = Skill.decode(events[-1].data["after"]) if events else DEFAULT
    return RatingRecord(player_id, game, skill, len(events), len(events))


def rated_table(event: RecordedEvent) -> RatedTable:
    d = event.data
    before, after = Skill.decode(d["before"]), Skill.decode(d["after"])
    return RatedTable(
        d["table"], d["game"], int(d["seat"]), int(d["place"]), int(d["score"]),
        ordinal(after) - ordinal(before), event.recorded_at, bool(d.get("abandoned")),
    )  # fmt: skip


class Leaderboard:
    """The latest rating of every rated player, per game (a read model)."""

    def __init__(self) -> None:
        self._games: dict[str, dict[str, tuple[int, Skill]]] = {}
        self._sorted: dict[str, list[tuple[str, Skill, int]]] = {}

    def offer(self, player_id: str, game: str, tables: int, skill: Skill) -> None:
        """Keep this rating if it is newer (more tables) than the one known."""
        players = self._games.setdefault(game, {})
        known = players.get(player_id)
        if known is None or known[0] < tables:
            players[player_id] = (tables, skill)
            self._sorted.pop(game, None)

    def offer_event(self, event: RecordedEvent) -> None:
        if event.type == "RatingChanged":
            d = event.data
            self.offer(d["player"], d["game"], event.position, Skill.decode(d["after"]))

    def page(self, game: str, offset: int, size: int) -> list[tuple[str, Skill, int]]:
        """Entries (player, skill, tables) from `offset`, best ordinal first."""
        ranked = self._sorted.get(game)
        if ranked is None:
            players = self._games.get(game, {})
            ranked = sorted(
                ((p, s, n) for p, (n, s) in players.items()),
                key=lambda e: (-ordinal(e[1]), e[0]),
            )
            self._sorted[game] = ranked
        return ranked[offset : offset + size]


class RatingBook:
    def __init__(self, store: EventStore, leaderboard: Leaderboard) -> None:
        self.store = store
        self.leaderboard = leaderboard

    async def read(self, game: str, player_id: str) -> tuple[RatingRecord, list[RecordedEvent]]:
        events = await self.store.read(stream_of(game, player_id))
        return _record(player_id, game, events), events

    async def _tail(self, game: str, player_id: str, count: int) -> list[RecordedEvent]:
        """The last `count` events of the player's stream (a player's history may be long)."""
        stream = stream_of(game, player_id)
        head = await self.store.head(stream)
        if head is None:
            return []
        return await self.store.read(stream, from_version=max(0, head.version - count))

    async def rating(self, game: str, player_id: str) -> RatingRecord:
        events = await self._tail(game, player_id, 1)
        if not events:
            return _record(player_id, game, [])
        skill = Skill.decode(events[-1].data["after"])
        version = events[-1].position
        return RatingRecord(player_id, game, skill, version, version)

    async def skills(self, game: str, players: Sequence[str]) -> dict[str, Skill]:
        return {p: (await self.rating(game, p)).skill for p in players}

    async def history(self, game: str, player_id: str, count: int) -> list[RatedTable]:
        """The player's last `count` rated tables of the game, oldest first."""
        return [rated_table(e) for e in await self._tail(game, player_id, count)]

    async def record(
        self,
        table_id: str,
        game: str,
        seats: Sequence[SeatOutcome],
        abandoned: frozenset[str] = frozenset(),
    ) -> int:
        """Rate one finished table, its leavers (`abandoned`) as last (`ratings.rate`);
        the number of ratings changed now (0 for a repeat).

        ConcurrencyConflict (another table of a player rated at the same moment)
        propagates: the delivery is retried and computes again from the new skills.
        """
        request_id = f"table:{table_id}"
        people = [s for s in seats if s.player_id]
        loaded: dict[str, tuple[RatingRecord, dict[str, Any] | None]] = {}
        for seat in people:
            record, events = await self.read(game, seat.player_id)
            done = next((e.data for e in events if e.data.get("table") == table_id), None)
            loaded[seat.player_id] = (record, done)
        before = {
            p: Skill.decode(done["before"]) if done else record.skill
            for p, (record, done) in loaded.items()
        }
        after = rate(game, seats, before, abandoned)
        changed = 0
        for seat in people:
            record, done = loaded[seat.player_id]
            if done is not None or seat.player_id not in after:
                continue
            data = {
                "table": table_id,
                "game": game,
                "player": seat.player_id,
                "seat": seat.seat,
                "place": seat.place,
                "score": seat.score,
                "before": before[seat.player_id].encode(),
                "after": after[seat.player_id].encode(),
            }
            if seat.player_id in abandoned:
                data["abandoned"] = True
            result = await self._append(game, record, data, request_id)
            if not result.duplicate:
                changed += 1
                self.leaderboard.offer_event(result.events[0])
        return changed

    async def _append(
        self, game: str, record: RatingRecord, data: dict[str, Any], request_id: str
    ) -> AppendResult:
        """One player's RatingChanged at the version his skill was read at — one
        attempt (`decide_and_append`): a conflict means his skill changed, so every
        player's update must be computed again, which only a whole `record` can do."""

        def decide(_: RatingRecord) -> Append[None]:
            return Append(record.version, [NewEvent("RatingChanged", data)], None)

        decided: Appended[None] | Settled[None] | Repeated = await decide_and_append(
            self.store,
            stream_of(game, record.player_id),
            decide,
            load=lambda: self.rating(game, record.player_id),
            known=record,
            request_id=request_id,
            command_fingerprint=request_id,
            attempts=1,
        )
        assert isinstance(decided, Appended), "a rating is never refused nor settled"
        return decided.result


__all__ = ["ConcurrencyConflict", "Leaderboard", "RatingBook", "RatingRecord", "stream_of"]
