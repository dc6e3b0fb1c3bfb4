"""Human-readable texts of replays and verification reports (one line per step).

Formatters work on the event data as the viewer saw it, so one formatter serves the
moderator (every card) and a seat (cards it did not see are counts).
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import TYPE_CHECKING, Any

from kozyr.games.plugin import Text, cards_text, registered, seat_list
from kozyr.table.audit.games import AuditError, GameProfile, profile_of
from kozyr.table.domain.model import COMPUTER

if TYPE_CHECKING:
    from kozyr.table.audit.replaying import Replay, Step
    from kozyr.table.audit.verifying import AuditReport


def describe_error(error: BaseException) -> str:
    """An exception as one line: its class and message (for problem reasons)."""
    text = str(error).strip("'\"")
    return f"{type(error).__name__}: {text}" if text else type(error).__name__


def as_json(value: Any) -> str:
    """A value as the API and `--json` spell it (`false`, `["AS"]`), never a Python repr."""
    return json.dumps(value, ensure_ascii=False, default=str)


def timestamp(iso: str) -> str:
    """An ISO 8601 time as people read it, date and zone included:
    "2026-11-30 22:57:46 UTC" ("?" when unknown)."""
    if not iso:
        return "?"
    at = datetime.fromisoformat(iso)
    return f"{at:%Y-%m-%d %H:%M:%S} {at.tzname() or 'local time'}"


def player_name(player: str) -> str:
    """A seat's player as texts name it (a computer seat has no player id)."""
    return player if player != COMPUTER else "computer"


_SEAT = re.compile(r"\bseat (\d+)\b")


def with_names(line: str, seats: Sequence[str]) -> str:
    """Every "seat N" of a line followed by its player's name: "seat 1 (bogdan)"."""

    def named(match: re.Match[str]) -> str:
        seat = int(match.group(1))
        if seat >= len(seats):
            return match.group(0)
        return f"{match.group(0)} ({player_name(seats[seat])})"

    return _SEAT.sub(named, line)


def options_text(options: Mapping[str, Any]) -> str:
    """Table options as the API spells them: "must_trump=false, turn_seconds=60"."""
    return ", ".join(f"{k}={as_json(v)}" for k, v in options.items()) or "defaults"


def _created(d: Mapping[str, Any]) -> str:
    return f"table created: game {d['game_id']}, options {options_text(d.get('options', {}))}"


_TEXTS: dict[str, Text] = {
    "TableCreated": _created,
    "SeatControlChanged": lambda d: f"seat {d['seat']} is now played by: {d['control']}",
    "SeatPresenceChanged": lambda d: (
        f"seat {d['seat']} is now " + ("online" if d["online"] else "offline")
    ),
    "ServerSeedCommitted": lambda d: (
        f"server seed of deal {d['deal']} committed: {d['commitment']}"
    ),
    "ClientSeedSet": lambda d: (
        f"seat {d['seat']} set its client seed for deal {d['deal']}: {as_json(d['client_seed'])}"
    ),
    "DealSeeded": lambda d: (
        f"deal {d['deal']} seeded (scheme {d['scheme']}) from client seeds "
        + " / ".join(as_json(c) for c in d["client_seeds"])
    ),
    "ServerSeedRevealed": lambda d: f"server seed of deal {d['deal']} revealed: {d['server_seed']}",
}
"""The table's own events; each game's come from its plugin (`AuditProfile.step_texts`)."""


def _game_text(type_name: str, game_id: str | None) -> Text | None:
    """The formatter of a game event: of `game_id`'s plugin, else of the first
    registered game that has one for this type."""
    if game_id:
        return _profile_text(profile_of(game_id), type_name)
    for plugin in registered():
        text = _profile_text(plugin.audit, type_name)
        if text is not None:
            return text
    return None


def _profile_text(profile: GameProfile, type_name: str) -> Text | None:
    if type_name == profile.deal_event:
        return lambda d: deal_title(profile, d)
    return profile.step_texts.get(type_name)


def deal_title(profile: GameProfile, data: Mapping[str, Any]) -> str:
    """A deal event's one line: "Deal 3: dealer seat 2"."""
    return f"{profile.deal_word} {data[profile.number_field]}: {profile.deal_facts(data)}"


def step_text(type_name: str, data: Mapping[str, Any], game_id: str | None = None) -> str:
    """One line for a step of a `game_id` table, from its data as the viewer saw it."""
    text = _TEXTS.get(type_name) or _game_text(type_name, game_id)
    if text is None:
        fields = ", ".join(f"{k}={as_json(v)}" for k, v in data.items())
        return f"{type_name} {fields}"
    return text(data)


def _deal_header(profile: GameProfile, start: Step) -> list[str]:
    d = start.data
    number = d[profile.number_field]
    when = timestamp(start.recorded_at)
    lines = [f"{profile.deal_word} {number} (#{start.position}, {when}): {profile.deal_facts(d)}"]
    lines.append(f"  commitment {d['commitment']}")
    if "hands" in d:
        lines += [f"  seat {s}: {cards_text(hand)}" for s, hand in enumerate(d["hands"])]
        lines.append(f"  {profile.undealt_field}: {cards_text(d[profile.undealt_field])}")
    elif "hand" in d:
        lines.append(f"  your first six cards: {cards_text(d['hand'])}")
    else:
        lines.append(f"  hands of {seat_list(d['hand_counts'])} cards (cards hidden)")
    return lines


def acting_seat(data: Mapping[str, Any]) -> int | None:
    """The seat that acted in an event (None: an event of no seat's, like a result)."""
    seat = data.get("seat", data.get("giver"))
    return seat if isinstance(seat, int) else None


def acted_for(step: Step, seats: Sequence[str]) -> str | None:
    """Who made a seat's move when it was not the seat's own player (the clock after a
    timeout, a covering bot); None for the player's own moves and for events that are
    no seat's move (a result is nobody's: it follows from the last move)."""
    seat = acting_seat(step.data)
    if step.origin is None or seat is None or not 0 <= seat < len(seats):
        return None
    return None if step.origin.actor == seats[seat] else step.origin.actor


def openers(steps: Sequence[Step]) -> set[int]:
    """The positions of the steps that open an append: a command's first event (the
    events one command causes are stored together, with one time and request)."""
    opening = set()
    previous: tuple[str | None, str] | None = None
    for step in steps:
        key = (step.origin.request_id if step.origin else None, step.recorded_at)
        if key != previous:
            opening.add(step.position)
        previous = key
    return opening


def step_line(step: Step, seats: Sequence[str], opens: bool) -> str:
    """A step's line: "#N text  [date time zone]", with " (by X)" when X made the move
    of a seat that is not X's (the moderator's view only), players named by seat."""
    text = with_names(step_text(step.type, step.data, step.game_id), seats)
    by = acted_for(step, seats) if opens else None
    if step.type == "TableCreated" and step.origin is not None:
        by = step.origin.actor
    mark = f" (by {by})" if by else ""
    return f"#{step.position} {text}  [{timestamp(step.recorded_at)}{mark}]"


def all_steps(r: Replay) -> list[Step]:
    """Every step of a replay in stream order."""
    steps = list(r.opening)
    for deal in r.deals:
        steps += [deal.start, *deal.steps]
    return steps + list(r.ending)


def render_replay(r: Replay) -> str:
    """The human-readable replay: one line per step, each with its time (date and
    zone), seats with their players' names, deals as blocks, the result last."""
    profile = profile_of(r.game_id)
    if r.seat is not None:
        viewer = f"seat {r.seat} ({player_name(r.seats[r.seat])}), what it saw"
    elif r.open_hands is not None:
        viewer = (
            f"open-hand spectator, {r.open_hands.delay} moves behind: what he may see now "
            f"(up to #{r.open_hands.version})"
        )
    else:
        viewer = "spectator, what he saw" if r.spectator else "moderator (every card)"
    players = ", ".join(f"{s}: {player_name(p)}" for s, p in enumerate(r.seats))
    shown_by = openers(all_steps(r))

    def lines_of(steps: Sequence[Step], indent: str) -> list[str]:
        return [indent + step_line(s, r.seats, s.position in shown_by) for s in steps]

    lines = [
        f"Table {r.table_id}  game {r.game_id}  version {r.version}  "
        + ("over" if r.over else "in progress"),
        f"Seats: {players}",
        f"Options: {options_text(r.options)}",
        f"Viewer: {viewer}",
        "",
    ]
    lines += lines_of(r.opening, "")
    for deal in r.deals:
        header = [with_names(line, r.seats) for line in _deal_header(profile, deal.start)]
        lines += ["", *header, *lines_of(deal.steps, "  ")]
    lines += ["", *lines_of(r.ending, "")]
    lines.append(result_line(profile, r.result, r.over))
    if r.open_hands is not None:
        lines.append(f"Open hands at #{r.open_hands.version}:")
        lines += [
            f"  seat {seat} ({player_name(r.seats[seat])}): {' '.join(hand) or '-'}"
            for seat, hand in enumerate(r.open_hands.hands)
        ]
    return "\n".join(lines) + "\n"


def result_line(profile: GameProfile, result: Mapping[str, Any], over: bool) -> str:
    """The result of a finished table, or the standing of one in progress: whether it
    is final is the table's to say (is it over?), never a flag in the figures."""
    if over:
        return f"Result: {profile.result_text(result)}"
    return f"Standing so far (provisional, the game is in progress): {profile.result_text(result)}"


def render_report(report: AuditReport) -> str:
    """The human-readable verdict: what was checked, then OK or the first bad event.

    With a problem, the counts say how far the walk got: it stops at the first bad event.
    """
    chain = report.chain
    chain_text = (
        f"intact ({chain.checked} events, head at version {chain.version})"
        if chain.ok
        else f"BROKEN at #{chain.first_bad_position}: {chain.failure} ({chain.detail})"
    )
    deals = f"{_deal_word(report.game_id).lower()}s"
    lines = [
        f"Stream {report.stream}  game {report.game_id or '?'}  {report.events} events",
        f"  hash chain   {chain_text}",
        f"  seeds        {report.seeds_checked} checked against their commitments; "
        f"{report.seeds_revealed} reveals equal the dealt seeds",
        f"  {deals:<12} {report.deals_rederived} re-derived from their seeds",
        f"  derivation   {report.deals_derived} deal seeds derived from server and client seeds",
        f"  rules        {report.moves_redecided} moves and {report.chance_redecided} "
        "chance draws re-decided and recorded as the rules give them",
    ]
    if report.problem is not None:
        lines.append("  (the checks stop at the first bad event: the counts go up to it)")
        lines.append(f"FAILED at {report.problem}")
        return "\n".join(lines) + "\n"
    if report.over and report.result is not None:
        where = f" (recorded at #{report.result_position})" if report.result_position else ""
        assert report.game_id is not None  # a game that ended is a known game
        result = profile_of(report.game_id).result_text(report.result)
        lines.append(f"  result       {result}{where}")
    else:
        lines.append("  result       none yet: the game is still in progress")
    lines.append("OK: every check holds.")
    return "\n".join(lines) + "\n"


def _deal_word(game_id: str | None) -> str:
    """What the game calls a deal ("Deal" for a stream that names no known game)."""
    try:
        return profile_of(game_id).deal_word if game_id else "Deal"
    except AuditError:
        return "Deal"
