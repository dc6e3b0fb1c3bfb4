"""Player-facing texts of 3-5-8 in English, Romanian and Italian.

Rule errors are matched by their reason code; the texts are only for people. The
placeholders are filled with language-neutral values (suit symbols), so one set of
params serves every language; params not named in a template are still carried by
the RuleError for clients that format their own messages.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TypeVar

from kozyr.games.errors import COMMON_TEXTS, RuleError, rule_error
from kozyr.games.three_five_eight.model import Contract, Phase, Role
from kozyr.games.translations import Lang, Texts, in_language

K = TypeVar("K")

ERRORS: Mapping[str, Texts] = {
    "MUST_FOLLOW_SUIT": {
        Lang.EN: "You must follow suit: play a {suit}.",
        Lang.RO: "Trebuie să răspunzi la culoare: joacă o carte de {suit}.",
        Lang.IT: "Devi rispondere al seme: gioca una carta di {suit}.",
    },
    "MUST_TRUMP": {
        Lang.EN: "You have no {suit}: with the trump-beat option you must play a trump ({trump}).",
        Lang.RO: "Nu ai {suit}: cu opțiunea de a bate cu atu trebuie să joci atu ({trump}).",
        Lang.IT: "Non hai {suit}: con l'opzione di taglio devi giocare un atout ({trump}).",
    },
    "CONTRACT_ALREADY_USED": {
        Lang.EN: "You have already declared this contract in this game.",
        Lang.RO: "Ai jucat deja acest tip de joc în această partidă.",
        Lang.IT: "Hai già dichiarato questo gioco in questa partita.",
    },
    "TRUMP_NOT_EXCHANGEABLE": {
        Lang.EN: "Trumps cannot be exchanged.",
        Lang.RO: "Cărțile de atu nu pot fi schimbate.",
        Lang.IT: "Non si possono cambiare gli atout.",
    },
    "DISCARD_FOUR_CARDS": {
        Lang.EN: "Discard exactly four different cards from your hand.",
        Lang.RO: "Pune jos exact patru cărți diferite din mâna ta.",
        Lang.IT: "Scarta esattamente quattro carte diverse dalla tua mano.",
    },
    "INVALID_SEED": {
        Lang.EN: "A shuffle seed is exactly 32 bytes.",
        Lang.RO: "Valoarea aleatoare (seed) a amestecării are exact 32 de octeți.",
        Lang.IT: "Il valore casuale (seed) del mescolamento è di esattamente 32 byte.",
    },
}
"""Reasons specific to 3-5-8; the others (NOT_YOUR_TURN, UNKNOWN_COMMAND…) are
`kozyr.games.errors.COMMON_TEXTS`."""

REASONS: tuple[str, ...] = (*COMMON_TEXTS, *ERRORS)
"""Every reason code `decide`, `default_command` and `chance_command` may raise."""


def error(reason: str, **params: object) -> RuleError:
    """The RuleError for `reason` (3-5-8's or a common one) with its texts in every language."""
    return rule_error(ERRORS, reason, **params)


CONTRACT_NAMES: Mapping[Contract, Texts] = {
    Contract.SPADES: {Lang.EN: "♠ trump", Lang.RO: "Atu ♠", Lang.IT: "Atout ♠"},
    Contract.HEARTS: {Lang.EN: "♥ trump", Lang.RO: "Atu ♥", Lang.IT: "Atout ♥"},
    Contract.DIAMONDS: {Lang.EN: "♦ trump", Lang.RO: "Atu ♦", Lang.IT: "Atout ♦"},
    Contract.CLUBS: {Lang.EN: "♣ trump", Lang.RO: "Atu ♣", Lang.IT: "Atout ♣"},
    Contract.NO_TRUMP: {Lang.EN: "No trump", Lang.RO: "Fără atu", Lang.IT: "Senza atout"},
    Contract.MINIMUM_TRICKS: {
        Lang.EN: "Minimum tricks",
        Lang.RO: "Fără levate",
        Lang.IT: "Minima presa",
    },
}

PHASE_NAMES: Mapping[Phase, Texts] = {
    Phase.DRAW_DEALER: {
        Lang.EN: "Drawing the first dealer",
        Lang.RO: "Tragerea la sorți a dealerului",
        Lang.IT: "Sorteggio del mazziere",
    },
    Phase.DEAL: {Lang.EN: "Dealing", Lang.RO: "Împărțirea cărților", Lang.IT: "Distribuzione"},
    Phase.CONTRACT: {
        Lang.EN: "Choosing the contract",
        Lang.RO: "Alegerea jocului",
        Lang.IT: "Scelta del gioco",
    },
    Phase.EXCHANGE: {
        Lang.EN: "Card exchange",
        Lang.RO: "Schimbul de cărți",
        Lang.IT: "Cambio carte",
    },
    Phase.DISCARD: {
        Lang.EN: "Talon and discard",
        Lang.RO: "Talonul și cărțile puse jos",
        Lang.IT: "Tallone e scarto",
    },
    Phase.PLAY: {Lang.EN: "Play", Lang.RO: "Joc", Lang.IT: "Gioco"},
    Phase.OVER: {Lang.EN: "Game over", Lang.RO: "Joc terminat", Lang.IT: "Partita finita"},
}

ROLE_NAMES: Mapping[Role, Texts] = {
    Role.DECLARER: {Lang.EN: "Declarer", Lang.RO: "Declarant", Lang.IT: "Dichiarante"},
    Role.THIRD: {
        Lang.EN: "Third player",
        Lang.RO: "Al treilea jucător",
        Lang.IT: "Terzo giocatore",
    },
    Role.DEALER: {Lang.EN: "Dealer", Lang.RO: "Dealer", Lang.IT: "Mazziere"},
}

TURN_KIND_NAMES: Mapping[str, Texts] = {
    "chance": {
        Lang.EN: "The table shuffles",
        Lang.RO: "Masa amestecă",
        Lang.IT: "Il tavolo mescola",
    },
    "contract": PHASE_NAMES[Phase.CONTRACT],
    "exchange_give": {
        Lang.EN: "Give a card",
        Lang.RO: "Dă o carte",
        Lang.IT: "Dai una carta",
    },
    "discard": {
        Lang.EN: "Discard four cards",
        Lang.RO: "Pune jos patru cărți",
        Lang.IT: "Scarta quattro carte",
    },
    "play": {Lang.EN: "Play a card", Lang.RO: "Joacă o carte", Lang.IT: "Gioca una carta"},
    "over": PHASE_NAMES[Phase.OVER],
}


def name(catalogue: Mapping[K, Texts], key: K, lang: Lang = Lang.EN) -> str:
    """A player-facing name from one of the catalogues above."""
    return in_language(catalogue[key], lang)
