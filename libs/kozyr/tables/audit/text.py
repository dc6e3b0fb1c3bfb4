"""Human-readable texts of replays and verification reports (one line per step).

Formatters work on the event data as the viewer saw it, so one formatter serves the
moderator (every card) and a seat (cards it did not see are counts).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from kozyr.games import khozor_teams
from kozyr.tables.audit.games import REVEAL_EVENT, GameProfile, profile_of
from kozyr.tables.model import COMPUTER

if TYPE_CHECKING:
    from kozyr.tables.audit.replaying import Replay, Step
    from kozyr.tables.audit.verifying import AuditReport


def describe_error(error: BaseException) -> str:
    """An exception as one line: its class and message (for problem reasons)."""
    text = str(error).strip("'\"")
    return f"{type(error).__name__}: {text}" if text else type(error).__name__


def _cards(cards: Sequence[str]) -> str:
    return " ".join(cards) if cards else "-"


def _hidden_or(data: Mapping[str, Any], key: str, count_key: str) -> str:
    cards = data.get(key)
    if isinstance(cards, list):
        return _cards(cards)
    count = data.get(count_key, "?")
    return f"{count} card" if count == 1 else f"{count} cards"


def _seat_list(values: Sequence[Any]) -> str:
    return " / ".join(str(v) for v in values)


def _trick(d: Mapping[str, Any], marks: Sequence[str] = ()) -> str:
    leader, cards = int(d["leader"]), d["cards"]
    marks = list(marks) + [""] * (len(cards) - len(marks))
    plays = ", ".join(
        f"seat {(leader + i) % 3} {c}{mark}"
        for i, (c, mark) in enumerate(zip(cards, marks, strict=False))
    )
    return f"trick {d['number']}: {plays} -> seat {d['winner']}"


def _exchanged(d: Mapping[str, Any]) -> str:
    who = f"seat {d['giver']} gives seat {d['receiver']}"
    if d.get("given") is None:
        return f"{who} a card (exchange step {d['number']}, cards hidden)"
    return f"{who} {d['given']}, gets back {d['returned']}"


def _hands_completed(d: Mapping[str, Any]) -> str:
    if "rests" in d:
        rests = "; ".join(f"seat {s}: {_cards(r)}" for s, r in enumerate(d["rests"]))
        return f"hands completed (last ten cards) {rests}"
    return f"your last ten cards: {_cards(d.get('cards', []))}"


def _scored(d: Mapping[str, Any]) -> str:
    return (
        f"deal {d['deal']} scored: contract {d['contract']}, targets {_seat_list(d['targets'])},"
        f" tricks {_seat_list(d['tricks'])}, points {_seat_list(d['points'])},"
        f" totals {_seat_list(d['totals'])}"
    )


def _revealed(d: Mapping[str, Any]) -> str:
    which = f"deal {d['deal']}" if "deal" in d else f"round {d.get('round_no')}"
    return f"seed of {which} revealed: {d['seed']}"


def _created(d: Mapping[str, Any]) -> str:
    options = ", ".join(f"{k}={v}" for k, v in d.get("options", {}).items()) or "defaults"
    return f"table created: game {d['game_id']}, options {options}"


_TEXTS: dict[str, Callable[[Mapping[str, Any]], str]] = {
    "TableCreated": _created,
    "SeatControlChanged": lambda d: f"seat {d['seat']} is now played by: {d['control']}",
    # 3-5-8
    "FirstDealerDrawn": lambda d: f"first dealer: seat {d['dealer']} (seed {d['seed']})",
    "ContractChosen": lambda d: f"seat {d['seat']} declares {d['contract']}",
    "HandsCompleted": _hands_completed,
    "ExchangePlanned": lambda d: (
        "exchange: "
        + (
            "; ".join(
                f"seat {t['giver']} gives {t['count']} to seat {t['receiver']}"
                for t in d["transfers"]
            )
            or "none"
        )
    ),
    "CardExchanged": _exchanged,
    "ExchangeSkipped": lambda d: (
        f"seat {d['giver']} holds only trumps: skips {d['count']} to seat {d['receiver']}"
    ),
    "TalonTaken": lambda d: f"seat {d['seat']} takes the talon: {_hidden_or(d, 'cards', 'count')}",
    "CardsDiscarded": lambda d: f"seat {d['seat']} discards {_hidden_or(d, 'cards', 'count')}",
    "CardPlayed": lambda d: f"seat {d['seat']} plays {d['card']}",  # (texts: in its trick)
    "TrickTaken": _trick,
    "DealScored": _scored,
    "GameEnded": lambda d: (
        f"game over: totals {_seat_list(d['totals'])}, places {_seat_list(d['places'])}"
    ),
    # Khözör
    "OpeningTeamDrawn": lambda d: f"opening team: {d['team']} (seed {d['seed']})",
    "OpenerConfirmed": lambda d: f"seat {d['seat']} names seat {d['opener']} to open",
    "CardsLed": lambda d: f"seat {d['seat']} leads {_hidden_or(d, 'cards', 'card_count')}",
    "CardsBeaten": lambda d: f"seat {d['seat']} beats with {_hidden_or(d, 'cards', 'card_count')}",
    "PilePickedUp": lambda d: f"seat {d['seat']} picks up {_hidden_or(d, 'cards', 'card_count')}",
    "ReserveDrawn": lambda d: (
        f"seat {d['seat']} draws {_hidden_or(d, 'cards', 'card_count')} from the reserve"
    ),
    "CycleSlept": lambda d: f"the cycle sleeps ({d['card_count']} cards); seat {d['seat']} leads",
    "SignalSet": lambda d: f"seat {d['seat']} signals {d['kind']}",
    "SignalCleared": lambda d: f"seat {d['seat']} clears {d['kind']} ({d['reason']})",
    "RoundWon": lambda d: f"round {d['round_no']} won by team {d['team']} (seat {d['seat']} out)",
    "MatchWon": lambda d: f"match won by team {d['team']}, {d['wins_a']}-{d['wins_b']}",
    # both
    REVEAL_EVENT: _revealed,
}


def step_text(type_name: str, data: Mapping[str, Any]) -> str:
    """One line for a step, from its data as the viewer saw it."""
    text = _TEXTS.get(type_name)
    if text is None:
        fields = ", ".join(f"{k}={v}" for k, v in data.items())
        return f"{type_name} {fields}"
    return text(data)


def _deal_header(profile: GameProfile, start: Step) -> list[str]:
    d = start.data
    number = d[profile.number_field]
    if "dealer" in d:
        facts = f"dealer seat {d['dealer']}"
    else:
        facts = f"trump {d['trump']}, opening team {d['opening_team']}"
    lines = [f"{profile.deal_word} {number} (#{start.position}): {facts}"]
    lines.append(f"  commitment {d['commitment']}")
    if "hands" in d:
        lines += [f"  seat {s}: {_cards(hand)}" for s, hand in enumerate(d["hands"])]
        lines.append(f"  {profile.undealt_field}: {_cards(d[profile.undealt_field])}")
    elif "hand" in d:
        lines.append(f"  your first six cards: {_cards(d['hand'])}")
    else:
        lines.append(f"  hands of {_seat_list(d['hand_counts'])} cards (cards hidden)")
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


def _step_lines(steps: Sequence[Step], indent: str, seats: Sequence[str]) -> list[str]:
    """One line per step (a trick's cards on the trick's line). For the moderator, each
    command's line ends with its time and, when the seat's own player did not make it,
    who did; inside a trick, each card played for a seat by someone else is marked."""
    lines = []
    previous: str | None = None
    plays: list[Step] = []
    for step in steps:
        request = step.origin.request_id if step.origin else None
        opens, previous = step.origin is not None and request != previous, request
        if step.type == "CardPlayed":
            plays.append(step)
            continue
        if step.type == "TrickTaken":
            text = _trick(step.data, [_by(p, seats) for p in plays])
            plays = []
        else:
            text = step_text(step.type, step.data)
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
    lines += _step_lines(r.opening, "", r.seats)
    for deal in r.deals:
        header = _deal_header(profile, deal.start)
        lines += ["", *header, *_step_lines(deal.steps, "  ", r.seats)]
    lines += ["", *_step_lines(r.ending, "", r.seats)]
    lines.append(f"Result: {_result_text(r.result)}")
    return "\n".join(lines) + "\n"


def _result_text(result: Mapping[str, Any]) -> str:
    if "totals" in result:
        return (
            f"totals {_seat_list(result['totals'])}, places {_seat_list(result['places'])},"
            f" winners {_seat_list(result['winners']) or '-'}"
            + ("" if result.get("final") else " (provisional)")
        )
    wins = result["wins"]
    return f"rounds won A {wins['A']}, B {wins['B']}, winner {result['winner'] or '-'}"


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
    deals = "rounds" if report.game_id == khozor_teams.GAME_ID else "deals"
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
        lines.append(f"  result       {_result_text(report.result)}{where}")
    else:
        lines.append("  result       none yet: the game is still in progress")
    lines.append("OK: every check holds.")
    return "\n".join(lines) + "\n"
