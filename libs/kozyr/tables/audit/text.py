"""Human-readable texts of replays and verification reports (one line per step).

Formatters work on the event data as the viewer saw it, so one formatter serves the
moderator (every card) and a seat (cards it did not see are counts).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from kozyr.games.plugin import Text, cards_text, registered, seat_list
from kozyr.tables.audit.games import AuditError, GameProfile, profile_of
from kozyr.tables.model import COMPUTER

if TYPE_CHECKING:
    from kozyr.tables.audit.replaying import Replay, Step
    from kozyr.tables.audit.verifying import AuditReport


def describe_error(error: BaseException) -> str:
    """An exception as one line: its class and message (for problem reasons)."""
    text = str(error).strip("'\"")
    return f"{type(error).__name__}: {text}" if text else type(error).__name__


def _created(d: Mapping[str, Any]) -> str:
    options = ", ".join(f"{k}={v}" for k, v in d.get("options", {}).items()) or "defaults"
    return f"table created: game {d['game_id']}, options {options}"


_TEXTS: dict[str, Text] = {
    "TableCreated": _created,
    "SeatControlChanged": lambda d: f"seat {d['seat']} is now played by: {d['control']}",
    "SeatPresenceChanged": lambda d: (
        f"seat {d['seat']} is now " + ("online" if d["online"] else "offline")
    ),
}
"""The table's own events; each game's come from its plugin (`AuditProfile.step_texts`)."""


def _game_text(type_name: str, game_id: str | None) -> Text | None:
    """The formatter of a game event: of `game_id`'s plugin, else of the first
    registered game that has one for this type."""
    if game_id:
        return profile_of(game_id).step_texts.get(type_name)
    for plugin in registered():
        text = plugin.audit.step_texts.get(type_name)
        if text is not None:
            return text
    return None


def step_text(type_name: str, data: Mapping[str, Any], game_id: str | None = None) -> str:
    """One line for a step of a `game_id` table, from its data as the viewer saw it."""
    text = _TEXTS.get(type_name) or _game_text(type_name, game_id)
    if text is None:
        fields = ", ".join(f"{k}={v}" for k, v in data.items())
        return f"{type_name} {fields}"
    return text(data)


def _deal_header(profile: GameProfile, start: Step) -> list[str]:
    d = start.data
    number = d[profile.number_field]
    lines = [f"{profile.deal_word} {number} (#{start.position}): {profile.deal_facts(d)}"]
    lines.append(f"  commitment {d['commitment']}")
    if "hands" in d:
        lines += [f"  seat {s}: {cards_text(hand)}" for s, hand in enumerate(d["hands"])]
        lines.append(f"  {profile.undealt_field}: {cards_text(d[profile.undealt_field])}")
    elif "hand" in d:
        lines.append(f"  your first six cards: {cards_text(d['hand'])}")
    else:
        lines.append(f"  hands of {seat_list(d['hand_counts'])} cards (cards hidden)")
    return lines


def _acting_seat(data: Mapping[str, Any]) -> int | None:
    seat = data.get("seat", data.get("giver"))
    return seat if isinstance(seat, int) else None


def _by(step: Step, seats: Sequence[str]) -> str:
    """ " (by X)" when someone else than the seat's own player caused the step."""
    if step.origin is None:
        return ""
    seat = _acting_seat(step.data)
    player = seats[seat] if seat is not None and 0 <= seat < len(seats) else None
    origin = step.origin
    return "" if origin.actor == player else f" (by {origin.actor})"


def _when(step: Step, seats: Sequence[str]) -> str:
    assert step.origin is not None
    return f"  [{step.origin.recorded_at[11:19]}{_by(step, seats)}]"


def _step_lines(
    steps: Sequence[Step], indent: str, seats: Sequence[str], profile: GameProfile
) -> list[str]:
    """One line per step (a trick's cards on the trick's line, for a game with tricks).
    For the moderator, each command's line ends with its time and, when the seat's own
    player did not make it, who did; inside a trick, each card played for a seat by
    someone else is marked."""
    lines = []
    previous: str | None = None
    plays: list[Step] = []
    trick = profile.trick
    for step in steps:
        request = step.origin.request_id if step.origin else None
        opens, previous = step.origin is not None and request != previous, request
        if trick is not None and step.type == trick.play_event:
            plays.append(step)
            continue
        if trick is not None and step.type == trick.trick_event:
            text = trick.text(step.data, [_by(p, seats) for p in plays])
            plays = []
        else:
            text = step_text(step.type, step.data, step.game_id)
        lines.append(f"{indent}#{step.position} {text}{_when(step, seats) if opens else ''}")
    return lines


def render_replay(r: Replay) -> str:
    """The human-readable replay: one line per step, deals as blocks, the result last."""
    profile = profile_of(r.game_id)
    viewer = "moderator (every card)" if r.seat is None else f"seat {r.seat} (what it saw)"
    players = ", ".join(
        f"{s}: {p if p != COMPUTER else '(computer)'}" for s, p in enumerate(r.seats)
    )
    lines = [
        f"Table {r.table_id}  game {r.game_id}  version {r.version}  "
        + ("over" if r.over else "in progress"),
        f"Seats: {players}",
        f"Viewer: {viewer}",
        "",
    ]
    lines += _step_lines(r.opening, "", r.seats, profile)
    for deal in r.deals:
        header = _deal_header(profile, deal.start)
        lines += ["", *header, *_step_lines(deal.steps, "  ", r.seats, profile)]
    lines += ["", *_step_lines(r.ending, "", r.seats, profile)]
    lines.append(f"Result: {profile.result_text(r.result)}")
    return "\n".join(lines) + "\n"


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
