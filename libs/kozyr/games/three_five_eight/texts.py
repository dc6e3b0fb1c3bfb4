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
from kozyr.texts import Lang, Texts, in_language

K = TypeVar("K")

ERRORS: Mapping[str, Texts] = {
    "MUST_FOLLOW_SUIT": Texts(
        en="You must follow suit: play a {suit}.",
        ro="Trebuie să răspunzi la culoare: joacă o carte de {suit}.",
        it="Devi rispondere al seme: gioca una carta di {suit}.",
    ),
    "MUST_TRUMP": Texts(
        en="You have no {suit}: with the trump-beat option you must play a trump ({trump}).",
        ro="Nu ai {suit}: cu opțiunea de a bate cu atu trebuie să joci atu ({trump}).",
        it="Non hai {suit}: con l'opzione di taglio devi giocare un atout ({trump}).",
    ),
    "CONTRACT_ALREADY_USED": Texts(
        en="You have already declared this contract in this game.",
        ro="Ai jucat deja acest tip de joc în această partidă.",
        it="Hai già dichiarato questo gioco in questa partita.",
    ),
    "TRUMP_NOT_EXCHANGEABLE": Texts(
        en="Trumps cannot be exchanged.",
        ro="Cărțile de atu nu pot fi schimbate.",
        it="Non si possono cambiare gli atout.",
    ),
    "DISCARD_FOUR_CARDS": Texts(
        en="Discard exactly four different cards from your hand.",
        ro="Pune jos exact patru cărți diferite din mâna ta.",
        it="Scarta esattamente quattro carte diverse dalla tua mano.",
    ),
    "INVALID_SEED": Texts(
        en="A shuffle seed is exactly 32 bytes.",
        ro="Valoarea aleatoare (seed) a amestecării are exact 32 de octeți.",
        it="Il valore casuale (seed) del mescolamento è di esattamente 32 byte.",
    ),
}
"""Reasons specific to 3-5-8; the others (NOT_YOUR_TURN, UNKNOWN_COMMAND…) are
`kozyr.games.errors.COMMON_TEXTS`."""

REASONS: tuple[str, ...] = (*COMMON_TEXTS, *ERRORS)
"""Every reason code `decide`, `default_command` and `chance_command` may raise."""


def error(reason: str, **params: object) -> RuleError:
    """The RuleError for `reason` (3-5-8's or a common one) with its texts in every language."""
    return rule_error(ERRORS, reason, **params)


CONTRACT_NAMES: Mapping[Contract, Texts] = {
    Contract.SPADES: Texts(en="♠ trump", ro="Atu ♠", it="Atout ♠"),
    Contract.HEARTS: Texts(en="♥ trump", ro="Atu ♥", it="Atout ♥"),
    Contract.DIAMONDS: Texts(en="♦ trump", ro="Atu ♦", it="Atout ♦"),
    Contract.CLUBS: Texts(en="♣ trump", ro="Atu ♣", it="Atout ♣"),
    Contract.NO_TRUMP: Texts(en="No trump", ro="Fără atu", it="Senza atout"),
    Contract.MINIMUM_TRICKS: Texts(
        en="Minimum tricks",
        ro="Fără levate",
        it="Minima presa",
    ),
}

PHASE_NAMES: Mapping[Phase, Texts] = {
    Phase.DRAW_DEALER: Texts(
        en="Drawing the first dealer",
        ro="Tragerea la sorți a dealerului",
        it="Sorteggio del mazziere",
    ),
    Phase.DEAL: Texts(en="Dealing", ro="Împărțirea cărților", it="Distribuzione"),
    Phase.CONTRACT: Texts(
        en="Choosing the contract",
        ro="Alegerea jocului",
        it="Scelta del gioco",
    ),
    Phase.EXCHANGE: Texts(
        en="Card exchange",
        ro="Schimbul de cărți",
        it="Cambio carte",
    ),
    Phase.DISCARD: Texts(
        en="Talon and discard",
        ro="Talonul și cărțile puse jos",
        it="Tallone e scarto",
    ),
    Phase.PLAY: Texts(en="Play", ro="Joc", it="Gioco"),
    Phase.OVER: Texts(en="Game over", ro="Joc terminat", it="Partita finita"),
}

ROLE_NAMES: Mapping[Role, Texts] = {
    Role.DECLARER: Texts(en="Declarer", ro="Declarant", it="Dichiarante"),
    Role.THIRD: Texts(
        en="Third player",
        ro="Al treilea jucător",
        it="Terzo giocatore",
    ),
    Role.DEALER: Texts(en="Dealer", ro="Dealer", it="Mazziere"),
}

TURN_KIND_NAMES: Mapping[str, Texts] = {
    "chance": Texts(
        en="The table shuffles",
        ro="Masa amestecă",
        it="Il tavolo mescola",
    ),
    "contract": PHASE_NAMES[Phase.CONTRACT],
    "exchange_give": Texts(
        en="Give a card",
        ro="Dă o carte",
        it="Dai una carta",
    ),
    "discard": Texts(
        en="Discard four cards",
        ro="Pune jos patru cărți",
        it="Scarta quattro carte",
    ),
    "play": Texts(en="Play a card", ro="Joacă o carte", it="Gioca una carta"),
    "over": PHASE_NAMES[Phase.OVER],
}


def name(catalogue: Mapping[K, Texts], key: K, lang: Lang = Lang.EN) -> str:
    """A player-facing name from one of the catalogues above."""
    return in_language(catalogue[key], lang)
