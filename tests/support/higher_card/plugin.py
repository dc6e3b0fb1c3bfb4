"""The test game's plugin: all the platform learns of "higher card wins". Code 99 is
no value of `kozyr.common.v1.Game` — proto3 enums are open, so the wire carries it."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from kozyr.games.info import LEVELS, GameInfo, first_listed
from kozyr.games.plugin import (
    AuditProfile,
    CardPlaces,
    Dealt,
    FairDeal,
    Fields,
    GamePlugin,
    Revealed,
    Text,
    card_fields,
    card_of,
    register,
    seat_list,
)
from kozyr.texts import Texts
from tests.support.higher_card import rules as g
from tests.support.higher_card.view_message import VIEW

CODE = 99

COMMANDS: Mapping[str, Callable[[int, Fields], g.Command]] = {
    "play_card": lambda seat, f: g.PlayCard(seat, card_of(f.get("card", {}))),
}


def action_of(command: g.Command) -> tuple[str, dict[str, Any]]:
    if isinstance(command, g.PlayCard):
        return "play_card", {"card": card_fields(command.card)}
    raise ValueError(f"not a player command: {command!r}")


def fair_deal(event: g.Event) -> FairDeal:
    if isinstance(event, g.CardsDealt):
        return Dealt(event.commitment)
    if isinstance(event, g.DealSeedRevealed):
        return Revealed(event.seed)
    return None


def move_of(event: Any) -> g.Command | None:
    return g.PlayCard(event.seat, event.card) if isinstance(event, g.CardPlayed) else None


def card_places(state: g.State) -> CardPlaces:
    """Hands hidden, the stock face down, played cards public; once a deal's seed is
    revealed, all of it is public."""
    if not state.deal:
        return CardPlaces(((), ()))
    if state.seed_revealed:
        return CardPlaces(((), ()), public=g.DECK)
    held = {c for hand in state.hands for c in hand} | set(state.stock)
    played = tuple(c for c in g.DECK if c not in held)
    return CardPlaces(state.hands, hidden=state.stock, public=played)


STEP_TEXTS: Mapping[str, Text] = {
    "CardPlayed": lambda d: f"seat {d['seat']} plays {d['card']}",
    "RoundWon": lambda d: f"seat {d['seat']} wins the round",
    "DealSeedRevealed": lambda d: f"seed of deal {d['deal']} revealed: {d['seed']}",
    "GameEnded": lambda d: f"game over: scores {seat_list(d['scores'])}",
}

INFO = GameInfo(
    name=Texts(en="Higher card", ro="Cartea mai mare", it="Carta più alta"),
    short="highcard",
    seats=g.SEATS,
    party_max=g.SEATS,
    about=Texts(
        en="Two players; the higher card wins each round.",
        ro="Doi jucători; cartea mai mare câștigă fiecare tură.",
        it="Due giocatori; la carta più alta vince ogni mano.",
    ),
    levels=dict.fromkeys(LEVELS, first_listed),
    turn_names={
        "play": Texts(en="Play a card", ro="Joacă o carte", it="Gioca una carta"),
        "chance": Texts(en="The table deals", ro="Masa împarte", it="Il tavolo distribuisce"),
    },
)
"""Two seats, each for itself, a party of two fills the table; every level plays the
first listed move (the trivial legal-move player)."""

PLUGIN: GamePlugin[g.State, g.Command, g.Event] = GamePlugin(
    id=g.GAME_ID,
    code=CODE,
    rules=g,
    commands=COMMANDS,
    action_of=action_of,
    view_message=VIEW,
    fair_deal=fair_deal,
    info=INFO,
    audit=AuditProfile(
        deal_event="CardsDealt",
        number_field="deal",
        undealt_field="stock",
        result_event="GameEnded",
        deal_from_seed=lambda seed: _deal(seed),
        move_of=move_of,
        result_claim=lambda r: {"scores": r["scores"]},
        deal_word="Deal",
        step_texts=STEP_TEXTS,
        deal_facts=lambda d: f"hands of {g.HAND}",
        result_text=lambda r: f"scores {seat_list(r['scores'])}",
    ),
    deck=g.DECK,
    card_places=card_places,
)


def _deal(seed: bytes) -> tuple[tuple[tuple[Any, ...], ...], tuple[Any, ...]]:
    """The hands and stock a seed deals (what the auditor re-derives)."""
    (dealt,) = g.decide(g.State(), g.DealCards(seed))
    assert isinstance(dealt, g.CardsDealt)
    return dealt.hands, dealt.stock


register(PLUGIN)
