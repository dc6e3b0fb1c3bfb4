"""Khözör as a plugin of the table platform (`kozyr.games.plugin`): its moves on the wire,
its view message, its fair-deal events, private signals and audit texts. Registered on
import."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from kozyr.games import khozor_teams as g
from kozyr.games.info import GameInfo, GameOption, Searcher, first_listed
from kozyr.games.khozor_teams import computer, hard
from kozyr.games.khozor_teams.model import TURN_SECONDS_MAX, TURN_SECONDS_MIN
from kozyr.games.khozor_teams.texts import SIGNAL_NAMES, TURN_KIND_NAMES
from kozyr.games.plugin import (
    AuditProfile,
    CardPlaces,
    Dealt,
    FairDeal,
    Fields,
    GamePlugin,
    MalformedAction,
    Revealed,
    Text,
    card_fields,
    cards_of,
    hidden_or,
    register,
)
from kozyr.texts import Texts

CODE = 2
"""`kozyr.common.v1.Game.GAME_KHOZOR_TEAMS`."""

WIRE_MAX_CARDS = 5
"""The most cards a move names (a lead of two pairs and one)."""

_SIGNAL_PREFIX = "SIGNAL_"
"""`kozyr.table.v1.Signal` names each signal SIGNAL_<SignalKind member name>."""


def _signal(fields: Fields) -> g.SignalKind:
    name = fields.get("signal")
    member = name[len(_SIGNAL_PREFIX) :] if isinstance(name, str) else ""
    if not member or member not in g.SignalKind.__members__:
        raise MalformedAction("INVALID_SIGNAL", "the signal must be THREE_SET or FIVE_SET")
    return g.SignalKind[member]


def _opener(fields: Fields) -> int:
    seat = fields.get("opener_seat", 0)
    if not isinstance(seat, int) or not 0 <= seat < g.SEATS:
        raise MalformedAction("INVALID_SEAT", f"there is no seat {seat} at a Khözör table")
    return seat


COMMANDS: Mapping[str, Callable[[int, Fields], g.Command]] = {
    "confirm_opener": lambda seat, f: g.ConfirmOpener(seat, _opener(f)),
    "lead": lambda seat, f: g.Lead(seat, cards_of(f.get("cards"), WIRE_MAX_CARDS)),
    "beat": lambda seat, f: g.Beat(seat, cards_of(f.get("cards"), WIRE_MAX_CARDS)),
    "pick_up": lambda seat, f: g.PickUp(seat),
    "toggle_signal": lambda seat, f: g.ToggleSignal(seat, _signal(f)),
}


def action_of(command: g.Command) -> tuple[str, dict[str, Any]]:
    """A player command as an `Action` (views list legal moves this way)."""
    match command:
        case g.ConfirmOpener(opener=opener):
            return "confirm_opener", {"opener_seat": opener}
        case g.Lead(cards=cards):
            return "lead", {"cards": [card_fields(c) for c in cards]}
        case g.Beat(cards=cards):
            return "beat", {"cards": [card_fields(c) for c in cards]}
        case g.PickUp():
            return "pick_up", {}
        case g.ToggleSignal(kind=kind):
            return "toggle_signal", {"signal": _SIGNAL_PREFIX + kind.name}
    raise ValueError(f"not a player command: {command!r}")


def card_places(state: g.State) -> CardPlaces:
    """Hands hidden; the reserve and sleeping cards face down for everyone; the pile of
    the cycle face up. Before the first round nothing is dealt."""
    if state.round_no == 0:
        return CardPlaces(hands=((),) * g.SEATS)
    pile = tuple(c for play in state.pile for c in play.cards)
    return CardPlaces(state.hands, hidden=(*state.reserve, *state.sleeping), public=pile)


def decided_by(event: g.Event) -> int | None:
    """The seat whose decision an event records: an opener confirmed, cards led or
    beaten, a pile picked up (signals are taps, not turns)."""
    if isinstance(event, g.OpenerConfirmed | g.CardsLed | g.CardsBeaten | g.PilePickedUp):
        return event.seat
    return None


def fair_deal(event: g.Event) -> FairDeal:
    if isinstance(event, g.RoundDealt):
        return Dealt(event.commitment)
    if isinstance(event, g.DealSeedRevealed):
        return Revealed(event.seed)
    return None


def move_of(event: Any) -> g.Command | None:
    """The player command whose first event `event` is (None: not a move's first)."""
    match event:
        case g.OpenerConfirmed(seat=seat, opener=opener):
            return g.ConfirmOpener(seat, opener)
        case g.CardsLed(seat=seat, cards=cards):
            return g.Lead(seat, cards)
        case g.CardsBeaten(seat=seat, cards=cards):
            return g.Beat(seat, cards)
        case g.PilePickedUp(seat=seat):
            return g.PickUp(seat)
        case g.SignalSet(seat=seat, kind=kind):
            return g.ToggleSignal(seat, kind)
        case g.SignalCleared(seat=seat, kind=kind, reason=g.ClearReason.TAPPED):
            return g.ToggleSignal(seat, kind)
    return None


STEP_TEXTS: Mapping[str, Text] = {
    "OpeningTeamDrawn": lambda d: f"opening team: {d['team']} (seed {d['seed']})",
    "OpenerConfirmed": lambda d: f"seat {d['seat']} names seat {d['opener']} to open",
    "CardsLed": lambda d: f"seat {d['seat']} leads {hidden_or(d, 'cards', 'card_count')}",
    "CardsBeaten": lambda d: f"seat {d['seat']} beats with {hidden_or(d, 'cards', 'card_count')}",
    "PilePickedUp": lambda d: f"seat {d['seat']} picks up {hidden_or(d, 'cards', 'card_count')}",
    "ReserveDrawn": lambda d: (
        f"seat {d['seat']} draws {hidden_or(d, 'cards', 'card_count')} from the reserve"
    ),
    "CycleSlept": lambda d: f"the cycle sleeps ({d['card_count']} cards); seat {d['seat']} leads",
    "SignalSet": lambda d: f"seat {d['seat']} signals {d['kind']}",
    "SignalCleared": lambda d: f"seat {d['seat']} clears {d['kind']} ({d['reason']})",
    "RoundWon": lambda d: f"round {d['round_no']} won by team {d['team']} (seat {d['seat']} out)",
    "MatchWon": lambda d: f"match won by team {d['team']}, {d['wins_a']}-{d['wins_b']}",
    "DealSeedRevealed": lambda d: f"seed of round {d.get('round_no')} revealed: {d['seed']}",
}


def result_text(result: Mapping[str, Any]) -> str:
    wins = result["wins"]
    return f"rounds won A {wins['A']}, B {wins['B']}, winner {result['winner'] or '-'}"


AUDIT: AuditProfile[g.Command] = AuditProfile(
    deal_event="RoundDealt",
    number_field="round_no",
    undealt_field="reserve",
    result_event="MatchWon",
    deal_from_seed=g.deal_from_seed,
    move_of=move_of,
    result_claim=lambda r: {
        "team": r["winner"],
        "wins_a": r["wins"]["A"],
        "wins_b": r["wins"]["B"],
    },
    deal_word="Round",
    step_texts=STEP_TEXTS,
    deal_facts=lambda d: f"trump {d['trump']}, opening team {d['opening_team']}",
    result_text=result_text,
    score_event="RoundWon",
)

INFO = GameInfo(
    name=Texts(en="Khözör", ro="Khözör", it="Khözör"),
    short="khozor",
    play_ui="kozyr.games.khozor_teams.play_ui",
    history_starts=frozenset({"RoundDealt"}),
    seats=g.SEATS,
    party_max=4,
    about=Texts(
        en="Eight players in two teams of four, partners on alternate seats.",
        ro="Opt jucători în două echipe de câte patru, partenerii pe locuri alternate.",
        it="Otto giocatori in due squadre da quattro, i compagni su posti alterni.",
    ),
    teams=(g.Team.A.seats, g.Team.B.seats),
    options=(GameOption("turn_seconds", low=TURN_SECONDS_MIN, high=TURN_SECONDS_MAX),),
    levels={"easy": first_listed, "normal": computer.normal, "hard": Searcher(hard.choose)},
    announce=computer.true_signal_moves,
    turn_names=TURN_KIND_NAMES,
    choices={"confirm_opener": ()},
    choice_names={_SIGNAL_PREFIX + g.SignalKind(key).name: t for key, t in SIGNAL_NAMES.items()},
)

PLUGIN: GamePlugin[g.State, g.Command, g.Event] = GamePlugin(
    id=g.GAME_ID,
    code=CODE,
    rules=g,
    commands=COMMANDS,
    action_of=action_of,
    view_message="kozyr.table.v1.KhozorTeamsView",
    seat_view=g.seat_view,
    fair_deal=fair_deal,
    audit=AUDIT,
    info=INFO,
    audience=g.audience,
    tapped_by=g.tapped_by,
    decided_by=decided_by,
    deck=g.DECK,
    card_places=card_places,
)

register(PLUGIN)
