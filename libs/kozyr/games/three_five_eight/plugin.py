"""3-5-8 as a plugin of the table platform (`kozyr.games.plugin`): its moves on the wire,
its view message, its fair-deal events and its audit texts. Registered on import."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from kozyr.games import three_five_eight as g
from kozyr.games.cards import Card
from kozyr.games.info import GameInfo, GameOption, Searcher
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
    TrickText,
    card_fields,
    card_of,
    cards_of,
    cards_text,
    hidden_or,
    register,
    seat_list,
)
from kozyr.games.three_five_eight import computer, hard
from kozyr.games.three_five_eight.options import TURN_SECONDS_MAX, TURN_SECONDS_MIN
from kozyr.games.three_five_eight.texts import CONTRACT_NAMES, TURN_KIND_NAMES
from kozyr.texts import Texts

CODE = 1
"""`kozyr.common.v1.Game.GAME_THREE_FIVE_EIGHT`."""

WIRE_MAX_CARDS = 5
"""The most cards a move may name on the wire (the rules then say how many are right)."""

_CONTRACT_PREFIX = "CONTRACT_"
"""`kozyr.table.v1.Contract` names each contract CONTRACT_<Contract member name>."""


def _contract(fields: Fields) -> g.Contract:
    name = fields.get("contract")
    member = name[len(_CONTRACT_PREFIX) :] if isinstance(name, str) else ""
    if not member or member not in g.Contract.__members__:
        raise MalformedAction("INVALID_CONTRACT", "choose one of the six contracts")
    return g.Contract[member]


COMMANDS: Mapping[str, Callable[[int, Fields], g.Command]] = {
    "choose_contract": lambda seat, f: g.ChooseContract(seat, _contract(f)),
    "give_card": lambda seat, f: g.GiveCard(seat, card_of(f.get("card", {}))),
    "discard": lambda seat, f: g.Discard(seat, cards_of(f.get("cards"), WIRE_MAX_CARDS)),
    "play_card": lambda seat, f: g.PlayCard(seat, card_of(f.get("card", {}))),
}


def action_of(command: g.Command) -> tuple[str, dict[str, Any]]:
    """A player command as an `Action` (views list legal moves this way)."""
    match command:
        case g.ChooseContract(contract=contract):
            return "choose_contract", {"contract": _CONTRACT_PREFIX + contract.name}
        case g.GiveCard(card=card):
            return "give_card", {"card": card_fields(card)}
        case g.Discard(cards=cards):
            return "discard", {"cards": [card_fields(c) for c in cards]}
        case g.PlayCard(card=card):
            return "play_card", {"card": card_fields(card)}
    raise ValueError(f"not a player command: {command!r}")


def options_from_wire(fields: Fields) -> dict[str, Any]:
    """`ThreeFiveEightOptions`: must_trump as given, turn_seconds 0 = the default."""
    options: dict[str, Any] = {"must_trump": fields.get("must_trump", False)}
    if fields.get("turn_seconds"):
        options["turn_seconds"] = fields["turn_seconds"]
    return options


def view_to_wire(view: Mapping[str, Any]) -> Mapping[str, Any]:
    """`contracts_used` [[...], ...] → [{"contracts": [...]}, ...]: protobuf holds no
    list of lists, so each inner list is a `ContractList`."""
    data = dict(view)
    used = data.get("contracts_used")
    if isinstance(used, list):
        data["contracts_used"] = [{"contracts": row} for row in used]
    return data


def card_places(state: g.State) -> CardPlaces:
    """Hands hidden; the talon until taken and the discards face down (the declarer saw
    them); tricks face up; an exchanged card known to both its giver and receiver.
    Once the deal's seed is revealed, every card of it is public."""
    d = state.deal
    if d is None:
        return CardPlaces(hands=((),) * g.SEATS)
    hands = d.hands
    hidden = (*(() if d.talon_taken else d.talon), *d.discards)
    public = (*d.trick, *(c for trick in d.completed for c in trick.cards))
    if d.seed_revealed:
        everything = (*(c for h in hands for c in h), *hidden, *public)
        return CardPlaces(((),) * g.SEATS, public=everything)
    seen: list[tuple[Card, ...]] = [() for _ in range(g.SEATS)]
    seen[d.declarer] = d.discards
    for step in d.exchange_log:
        if isinstance(step, g.CardExchanged):
            seen[step.giver] += (step.given,)
            seen[step.receiver] += (step.returned,)
    return CardPlaces(hands, hidden, public, tuple(seen))


def decided_by(event: g.Event) -> int | None:
    """The seat whose decision an event records: a contract, an exchanged card, a
    discard, a card played (the exchange's skips and the talon are the rules' own)."""
    if isinstance(event, g.ContractChosen | g.CardsDiscarded | g.CardPlayed):
        return event.seat
    if isinstance(event, g.CardExchanged):
        return event.giver
    return None


def fair_deal(event: g.Event) -> FairDeal:
    if isinstance(event, g.CardsDealt):
        return Dealt(event.commitment)
    if isinstance(event, g.DealSeedRevealed):
        return Revealed(event.seed)
    return None


def move_of(event: Any) -> g.Command | None:
    """The player command whose first event `event` is (None: not a move's first)."""
    match event:
        case g.ContractChosen(seat=seat, contract=contract):
            return g.ChooseContract(seat, contract)
        case g.CardExchanged(giver=giver, given=given):
            return g.GiveCard(giver, given)
        case g.CardsDiscarded(seat=seat, cards=cards):
            return g.Discard(seat, cards)
        case g.CardPlayed(seat=seat, card=card):
            return g.PlayCard(seat, card)
    return None


def _trick(d: Mapping[str, Any]) -> str:
    leader = int(d["leader"])
    plays = ", ".join(f"seat {(leader + i) % g.SEATS} {c}" for i, c in enumerate(d["cards"]))
    return f"trick {d['number']}: {plays} -> seat {d['winner']}"


def _exchanged(d: Mapping[str, Any]) -> str:
    who = f"seat {d['giver']} gives seat {d['receiver']}"
    if d.get("given") is None:
        return f"{who} a card (exchange step {d['number']}, cards hidden)"
    return f"{who} {d['given']}, gets back {d['returned']}"


def _hands_completed(d: Mapping[str, Any]) -> str:
    if "rests" in d:
        rests = "; ".join(f"seat {s}: {cards_text(r)}" for s, r in enumerate(d["rests"]))
        return f"hands completed (last ten cards) {rests}"
    return f"your last ten cards: {cards_text(d.get('cards', []))}"


def _scored(d: Mapping[str, Any]) -> str:
    return (
        f"deal {d['deal']} scored: contract {d['contract']}, targets {seat_list(d['targets'])},"
        f" tricks {seat_list(d['tricks'])}, points {seat_list(d['points'])},"
        f" totals {seat_list(d['totals'])}"
    )


def _planned(d: Mapping[str, Any]) -> str:
    transfers = "; ".join(
        f"seat {t['giver']} gives {t['count']} to seat {t['receiver']}" for t in d["transfers"]
    )
    return f"exchange: {transfers or 'none'}"


STEP_TEXTS: Mapping[str, Text] = {
    "FirstDealerDrawn": lambda d: f"first dealer: seat {d['dealer']} (seed {d['seed']})",
    "ContractChosen": lambda d: f"seat {d['seat']} declares {d['contract']}",
    "HandsCompleted": _hands_completed,
    "ExchangePlanned": _planned,
    "CardExchanged": _exchanged,
    "ExchangeSkipped": lambda d: (
        f"seat {d['giver']} holds only trumps: skips {d['count']} to seat {d['receiver']}"
    ),
    "TalonTaken": lambda d: f"seat {d['seat']} takes the talon: {hidden_or(d, 'cards', 'count')}",
    "CardsDiscarded": lambda d: f"seat {d['seat']} discards {hidden_or(d, 'cards', 'count')}",
    "CardPlayed": lambda d: f"seat {d['seat']} plays {d['card']}",
    "TrickTaken": _trick,
    "DealScored": _scored,
    "GameEnded": lambda d: (
        f"game over: totals {seat_list(d['totals'])}, places {seat_list(d['places'])}"
    ),
    "DealSeedRevealed": lambda d: f"seed of deal {d['deal']} revealed: {d['seed']}",
}


def result_text(result: Mapping[str, Any]) -> str:
    return (
        f"totals {seat_list(result['totals'])}, places {seat_list(result['places'])},"
        f" winners {seat_list(result['winners']) or '-'}"
    )


AUDIT: AuditProfile[g.Command] = AuditProfile(
    deal_event="CardsDealt",
    number_field="deal",
    undealt_field="talon",
    result_event="GameEnded",
    deal_from_seed=g.deal_from_seed,
    move_of=move_of,
    result_claim=lambda r: {"totals": r["totals"], "places": r["places"]},
    deal_word="Deal",
    step_texts=STEP_TEXTS,
    deal_facts=lambda d: f"dealer seat {d['dealer']}",
    result_text=result_text,
    trick=TrickText(play_event="CardPlayed", trick_event="TrickTaken"),
    score_event="DealScored",
)

INFO = GameInfo(
    name=Texts(en="3-5-8", ro="3-5-8", it="3-5-8"),
    short="358",
    play_ui="kozyr.games.three_five_eight.play_ui",
    history_starts=frozenset({"CardsDealt"}),
    seats=g.SEATS,
    party_max=g.SEATS,
    about=Texts(
        en="Three players, each for himself: 8, 5 and 3 tricks to make.",
        ro="Trei jucători, fiecare pentru sine: 8, 5 și 3 levate de făcut.",
        it="Tre giocatori, ognuno per sé: 8, 5 e 3 prese da fare.",
    ),
    options=(
        GameOption("must_trump", flag=True),
        GameOption("turn_seconds", low=TURN_SECONDS_MIN, high=TURN_SECONDS_MAX),
    ),
    levels={"easy": computer.easy, "normal": computer.normal, "hard": Searcher(hard.choose)},
    turn_names=TURN_KIND_NAMES,
    choice_names={f"{_CONTRACT_PREFIX}{c.name}": t for c, t in CONTRACT_NAMES.items()},
    choices={
        "contract": tuple(
            ("choose_contract", {"contract": f"{_CONTRACT_PREFIX}{c.name}"}) for c in g.Contract
        )
    },
)

PLUGIN: GamePlugin[g.State, g.Command, g.Event] = GamePlugin(
    id=g.GAME_ID,
    code=CODE,
    rules=g,
    commands=COMMANDS,
    action_of=action_of,
    view_message="kozyr.table.v1.ThreeFiveEightView",
    seat_view=g.seat_view,
    fair_deal=fair_deal,
    audit=AUDIT,
    info=INFO,
    options_from_wire=options_from_wire,
    view_to_wire=view_to_wire,
    wide_turns=frozenset({"discard"}),
    decided_by=decided_by,
    deck=g.DECK,
    card_places=card_places,
)

register(PLUGIN)
