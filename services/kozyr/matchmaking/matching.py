"""Forming matches from the queue: close ratings, parties kept together, fair teams,
computers after a wait. Pure: the lobby and the time in, `MatchDecided` /
`TicketExpired` events out.

**Search expansion** (as FAForever's ladder widens a search): a ticket accepts
partners whose ratings lie within `window(waited)` of each other — `base_gap` at first,
growing by `widen_per_second`, capped at `max_gap`. A group is acceptable when the
spread of its tickets' ratings (max − min of the tickets' mean mu) is within the
window of *every* ticket in it, so a newcomer never drags an old ticket into a worse
match than the newcomer itself would accept.

**Forming.** Oldest ticket first (it has waited longest; its window is the widest): the
nearest unmatched tickets by rating (at most `neighbours`, inside its window) are tried,
closest first, for a full table of the game's seats (`GameInfo.seats`; a party is one
ticket). In a game of two teams (`GameInfo.teams`, e.g. Khözör's two teams of 4) a
party is one team's part, and among the ways to split a group into the two teams, the
one whose predicted win probability (OpenSkill) is closest to 50 % is chosen.

**Computers.** A ticket that has waited `fill_after` seconds, or asked for it, is
matched with whoever acceptable is there and computers take the other seats, at the
level that suits the humans' mean rating (`level_for`) — or at the level the tickets
asked for (`QueueOptions.computer_level`: they are in one pool, so all asked the same).
"""

from __future__ import annotations

import bisect
import hashlib
import itertools
import uuid
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from statistics import median
from typing import Any

from kozyr.games.catalogue import info_of
from kozyr.games.info import GameInfo
from kozyr.matchmaking.decisions import NAMESPACE, Event, decided
from kozyr.matchmaking.events import TicketExpired
from kozyr.matchmaking.lobby import (
    Lobby,
    MatchSeat,
    QueueOptions,
    Skill,
    Ticket,
)
from kozyr.matchmaking.ratings import COMPUTER_SKILLS, win_probability

SEARCH_LIMIT = 1_000
"""Groups tried per anchor ticket at most: a crowded queue stays fast, not exhaustive."""


@dataclass(frozen=True, slots=True)
class MatchRules:
    """How patient the queue is (settings `KOZYR_MATCHMAKING_*`)."""

    fill_after: float = 60.0
    base_gap: float = 3.0
    widen_per_second: float = 0.25
    max_gap: float = 25.0
    ticket_ttl: float = 900.0
    neighbours: int = 12

    def window(self, waited: float) -> float:
        """The rating spread a ticket accepts after waiting `waited` seconds."""
        return min(self.max_gap, self.base_gap + self.widen_per_second * max(0.0, waited))


def level_for(mu: float) -> str:
    """The computer level for humans of mean skill `mu`: the level whose assumed skill
    (`COMPUTER_SKILLS`: easy 18, normal 25, hard 30) is nearest."""
    return min(COMPUTER_SKILLS, key=lambda level: abs(COMPUTER_SKILLS[level].mu - mu))


def match_id(lobby: Lobby, tickets: Sequence[str]) -> str:
    """Derived from the lobby version it is decided at and its tickets: a replica that
    decides the same match at the same version names it alike (and only one append
    of the two can succeed), and a released match's tickets matched again later make
    a new id, hence a new table."""
    key = f"{lobby.version}:{','.join(sorted(tickets))}"
    return str(uuid.uuid5(NAMESPACE, key))


def _waited(ticket: Ticket, now: datetime) -> float:
    return (now - ticket.opened_at).total_seconds()


def estimated_wait(lobby: Lobby, ticket: Ticket, now: datetime, rules: MatchRules) -> timedelta:
    """How much longer the ticket should wait: the median wait of the game's latest
    matches less what it has waited, never beyond the computers' fill."""
    waited = _waited(ticket, now)
    recent = lobby.waits.get(ticket.game)
    typical = median(recent) if recent else rules.fill_after
    left = max(0.0, typical - waited)
    if ticket.fill_now:
        left = 0.0
    return timedelta(seconds=min(left, max(0.0, rules.fill_after - waited)))


@dataclass(slots=True)
class _Pool:
    """The searching tickets of one game and options, by rating."""

    tickets: list[Ticket]
    by_mu: list[Ticket]
    mus: list[float]

    @staticmethod
    def of(tickets: list[Ticket]) -> _Pool:
        by_mu = sorted(tickets, key=lambda t: (t.mu, t.opened_at, t.ticket_id))
        return _Pool(tickets, by_mu, [t.mu for t in by_mu])

    def take(self, ticket: Ticket) -> None:
        """The ticket is matched (or expired): it is no one's neighbour any more."""
        index = bisect.bisect_left(self.mus, ticket.mu)
        while self.by_mu[index] is not ticket:
            index += 1
        del self.by_mu[index], self.mus[index]

    def nearest(self, anchor: Ticket, gap: float, used: set[str], limit: int) -> list[Ticket]:
        """Up to `limit` unused tickets within `gap` of the anchor's rating, closest first."""
        mu = anchor.mu
        mus, tickets = self.mus, self.by_mu
        right = bisect.bisect_left(mus, mu)
        left = right - 1
        found: list[Ticket] = []
        while len(found) < limit:
            below = mu - mus[left] if left >= 0 else None
            above = mus[right] - mu if right < len(mus) else None
            if below is None and above is None:
                break
            if above is None or (below is not None and below <= above):
                pick, distance, left = tickets[left], below, left - 1
            else:
                pick, distance, right = tickets[right], above, right + 1
            assert distance is not None
            if distance > gap:
                break
            if pick.ticket_id != anchor.ticket_id and pick.ticket_id not in used:
                found.append(pick)
        return found


def find_matches(lobby: Lobby, now: datetime, rules: MatchRules) -> list[Event]:
    """Every match the queue allows now, and the tickets that waited too long."""
    events: list[Event] = []
    pools: dict[tuple[str, QueueOptions], list[Ticket]] = {}
    for ticket in lobby.searching():
        pools.setdefault((ticket.game, ticket.options), []).append(ticket)
    for (game, options), tickets in pools.items():
        events += _pool_matches(lobby, game, options, _Pool.of(tickets), now, rules)
    return events


def _pool_matches(
    lobby: Lobby,
    game: str,
    options: QueueOptions,
    pool: _Pool,
    now: datetime,
    rules: MatchRules,
) -> list[Event]:
    events: list[Event] = []
    used: set[str] = set()
    for anchor in pool.tickets:
        if anchor.ticket_id in used:
            continue
        waited = _waited(anchor, now)
        if waited >= rules.ticket_ttl:
            used.add(anchor.ticket_id)
            pool.take(anchor)
            events.append(TicketExpired(anchor.ticket_id))
            continue
        near = pool.nearest(anchor, rules.window(waited), used, rules.neighbours)
        group = _full_group(game, anchor, near, now, rules)
        if group is None and (anchor.fill_now or waited >= rules.fill_after):
            group = _partial_group(game, anchor, near, now, rules)
        if group is None:
            continue
        tickets = tuple(t.ticket_id for t in group)
        mid = match_id(lobby, tickets)
        events.append(decided(mid, game, options, arrange(game, group, mid), tickets, now))
        used.update(tickets)
        for ticket in group:
            pool.take(ticket)
    return events


def _acceptable(group: Sequence[Ticket], now: datetime, rules: MatchRules) -> bool:
    mus = [t.mu for t in group]
    spread = max(mus) - min(mus)
    return all(spread <= rules.window(_waited(t, now)) for t in group)


def splittable(sizes: Sequence[int], team_size: int) -> bool:
    """Whether tickets of these sizes (parties whole) make two sides of at most
    `team_size` players."""
    total = sum(sizes)
    if total > 2 * team_size:
        return False
    reachable = {0}
    for size in sizes:
        reachable |= {r + size for r in reachable if r + size <= team_size}
    return any(total - r <= team_size for r in reachable)


def _two_teams(info: GameInfo) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """The two teams of a team game: the only team games the queue seats."""
    if len(info.sides) != 2:
        raise ValueError(f"the queue seats two teams, not {len(info.sides)}")
    return info.sides[0], info.sides[1]


def _fits(game: str, group: Sequence[Ticket], full: bool) -> bool:
    """The group's players fit the table (all seats taken when `full`), parties whole."""
    info = info_of(game)
    size = sum(t.size for t in group)
    if full and size != info.seats:
        return False
    if not info.in_teams:
        return size <= info.seats
    _two_teams(info)
    return splittable([t.size for t in group], info.team_size)


def _may_fill(anchor: Ticket, near: list[Ticket], seats: int, window: float) -> bool:
    """Whether any stretch of ratings `window` wide around the anchor holds enough
    players for a table — a quick bound that spares the search a hopeless queue."""
    ordered = sorted([anchor, *near], key=lambda t: t.mu)
    for i, low in enumerate(ordered):
        if low.mu > anchor.mu:
            break
        players = 0
        for ticket in ordered[i:]:
            if ticket.mu - low.mu > window:
                break
            players += ticket.size
        if players >= seats:
            return True
    return False


def _full_groups(
    anchor: Ticket, near: list[Ticket], seats: int, now: datetime, rules: MatchRules
) -> Iterator[list[Ticket]]:
    """Acceptable groups of exactly `seats` players holding the anchor, closest partners
    first. A branch stops as soon as its spread passes the narrowest window in it
    (adding tickets only widens the spread and narrows the windows), or when the
    tickets left cannot fill the table."""
    first = rules.window(_waited(anchor, now))
    if not _may_fill(anchor, near, seats, first):
        return
    left = [0] * (len(near) + 1)
    for i in range(len(near) - 1, -1, -1):
        left[i] = left[i + 1] + near[i].size
    tried = 0

    def grow(
        group: list[Ticket], size: int, start: int, low: float, high: float, window: float
    ) -> Iterator[list[Ticket]]:
        nonlocal tried
        tried += 1
        if tried > SEARCH_LIMIT:
            return
        if size == seats:
            yield group
            return
        if size + left[start] < seats:
            return
        for i in range(start, len(near)):
            ticket = near[i]
            if size + ticket.size > seats:
                continue
            lo, hi = min(low, ticket.mu), max(high, ticket.mu)
            narrowest = min(window, rules.window(_waited(ticket, now)))
            if hi - lo <= narrowest:
                yield from grow([*group, ticket], size + ticket.size, i + 1, lo, hi, narrowest)

    yield from grow([anchor], anchor.size, 0, anchor.mu, anchor.mu, first)


def _full_group(
    game: str, anchor: Ticket, near: list[Ticket], now: datetime, rules: MatchRules
) -> list[Ticket] | None:
    for group in _full_groups(anchor, near, info_of(game).seats, now, rules):
        if _fits(game, group, full=True):
            return group
    return None


def _partial_group(
    game: str, anchor: Ticket, near: list[Ticket], now: datetime, rules: MatchRules
) -> list[Ticket]:
    """The anchor with the nearest acceptable partners that fit; computers do the rest."""
    group = [anchor]
    for ticket in near:
        candidate = [*group, ticket]
        if _acceptable(candidate, now, rules) and _fits(game, candidate, full=False):
            group = candidate
    return group


def best_split(
    group: Sequence[Ticket], level: str | None = None, team_size: int = 4
) -> tuple[list[Ticket], list[Ticket], float] | None:
    """Two teams: the tickets (parties whole) split into two sides of at most
    `team_size` players, computers of `level` making each up to `team_size`, with the
    predicted win probability of the first side closest to 50 %. None if no split fits."""
    level = level or group[0].options.computer_level or level_for(_mean_mu(group))
    computer = COMPUTER_SKILLS[level]
    best: tuple[list[Ticket], list[Ticket], float] | None = None
    first, rest = group[0], list(group[1:])
    for mask in range(1 << len(rest)):
        side_a = [first, *(t for i, t in enumerate(rest) if mask >> i & 1)]
        side_b = [t for i, t in enumerate(rest) if not mask >> i & 1]
        if sum(t.size for t in side_a) > team_size or sum(t.size for t in side_b) > team_size:
            continue
        p = win_probability(_team(side_a, computer, team_size), _team(side_b, computer, team_size))
        if best is None or abs(p - 0.5) < abs(best[2] - 0.5):
            best = (side_a, side_b, p)
    return best


def _team(side: Sequence[Ticket], computer: Skill, team_size: int) -> list[Skill]:
    skills = [t.skills[p] for t in side for p in t.players]
    return skills + [computer] * (team_size - len(skills))


def _mean_mu(group: Sequence[Ticket]) -> float:
    mus = [t.skills[p].mu for t in group for p in t.players]
    return sum(mus) / len(mus)


def _order(key: str, items: list[Any]) -> list[Any]:
    """A fair, reproducible order: by a hash of the match id and each item's name."""
    return sorted(items, key=lambda item: hashlib.sha256(f"{key}:{item}".encode()).digest())


def arrange(game: str, group: Sequence[Ticket], key: str) -> list[MatchSeat]:
    """Who sits where. Every seat for itself (3-5-8): humans and computers at seats in
    a hash order of the match. Two teams (Khözör): the balanced split's sides on the
    two teams' seats (`GameInfo.teams`), computers filling each side."""
    info = info_of(game)
    level = group[0].options.computer_level or level_for(_mean_mu(group))
    humans = {p: t.ticket_id for t in group for p in t.players}
    if not info.in_teams:
        names = [("player", p) for p in humans]
        names += [("computer", str(i)) for i in range(info.seats - len(humans))]
        return [
            MatchSeat(player_id=name, ticket_id=humans[name])
            if kind == "player"
            else MatchSeat(level=level)
            for kind, name in _order(key, names)
        ]
    teams = _two_teams(info)
    split = best_split(group, level, info.team_size)
    assert split is not None, "the group was checked by _fits"
    sides = _order(key, [0, 1])
    seats: list[MatchSeat] = [MatchSeat(level=level)] * info.seats
    for side, tickets in zip(sides, split[:2], strict=True):
        players = _order(key, [p for t in tickets for p in t.players])
        for seat, player in itertools.zip_longest(teams[side], players):
            if player is not None:
                seats[seat] = MatchSeat(player_id=player, ticket_id=humans[player])
    return seats
