"""Player-facing texts of Khözör in English, Romanian and Italian.

`ERRORS` holds the rule errors peculiar to this game (the common ones, such as
NOT_YOUR_TURN, live in `kozyr.games.errors.COMMON_TEXTS`). Clients match on the
reason code, never on the text.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Final

from kozyr.games.errors import COMMON_TEXTS, RuleError, rule_error
from kozyr.games.translations import Lang, Texts

ERRORS: Final[Mapping[str, Texts]] = {
    "NOT_ON_OPENING_TEAM": {
        Lang.EN: "Only a player of the opening team can confirm the opener.",
        Lang.RO: "Doar un jucător din echipa care deschide poate confirma cine începe.",
        Lang.IT: "Solo un giocatore della squadra di apertura può confermare chi inizia.",
    },
    "OPENER_NOT_ON_OPENING_TEAM": {
        Lang.EN: "Seat {opener} is not on the opening team.",
        Lang.RO: "Locul {opener} nu face parte din echipa care deschide.",
        Lang.IT: "Il posto {opener} non fa parte della squadra di apertura.",
    },
    "OPENER_ALREADY_CONFIRMED": {
        Lang.EN: "The opener has already been confirmed.",
        Lang.RO: "Cel care începe a fost deja confirmat.",
        Lang.IT: "Chi inizia è già stato confermato.",
    },
    "WRONG_CARD_COUNT": {
        Lang.EN: "Wrong number of cards: this play needs {expected}.",
        Lang.RO: "Număr greșit de cărți: această mutare cere {expected}.",
        Lang.IT: "Numero di carte sbagliato: questa giocata ne richiede {expected}.",
    },
    "INVALID_LEAD": {
        Lang.EN: "A 3-card lead needs a pair; a 5-card lead needs two pairs and one more card.",
        Lang.RO: "O deschidere de 3 cărți cere o pereche; una de 5 cărți cere două perechi"
        " și încă o carte.",
        Lang.IT: "Un'apertura di 3 carte richiede una coppia; una di 5 carte due coppie"
        " e un'altra carta.",
    },
    "LEAD_NEEDS_THREE_CARDS_EACH": {
        Lang.EN: "A 3-card lead needs every player to hold at least 3 cards.",
        Lang.RO: "O deschidere de 3 cărți cere ca fiecare jucător să aibă cel puțin 3 cărți.",
        Lang.IT: "Un'apertura di 3 carte richiede che ogni giocatore abbia almeno 3 carte.",
    },
    "LEAD_NEEDS_FIVE_CARDS_EACH": {
        Lang.EN: "A 5-card lead needs every player to hold at least 5 cards.",
        Lang.RO: "O deschidere de 5 cărți cere ca fiecare jucător să aibă cel puțin 5 cărți.",
        Lang.IT: "Un'apertura di 5 carte richiede che ogni giocatore abbia almeno 5 carte.",
    },
    "LEAD_NEEDS_EMPTY_RESERVE": {
        Lang.EN: "A 5-card lead is allowed only once the reserve is empty.",
        Lang.RO: "O deschidere de 5 cărți este permisă doar după ce rezerva s-a golit.",
        Lang.IT: "Un'apertura di 5 carte è ammessa solo quando la riserva è vuota.",
    },
    "JOKER_NOT_SINGLE": {
        Lang.EN: "Jokers are only played singly.",
        Lang.RO: "Jokerii se joacă doar câte unul.",
        Lang.IT: "I jolly si giocano solo da soli.",
    },
    "DOES_NOT_BEAT": {
        Lang.EN: "Your cards must each beat a different card of the previous play.",
        Lang.RO: "Fiecare carte a ta trebuie să bată o altă carte din mutarea anterioară.",
        Lang.IT: "Ogni tua carta deve battere una carta diversa della giocata precedente.",
    },
    "NOTHING_TO_BEAT": {
        Lang.EN: "There is nothing to beat: lead a new play.",
        Lang.RO: "Nu este nimic de bătut: începe o nouă mutare.",
        Lang.IT: "Non c'è niente da battere: apri una nuova giocata.",
    },
    "MUST_DEFEND": {
        Lang.EN: "Beat the previous play or pick up the pile.",
        Lang.RO: "Bate mutarea anterioară sau ia cărțile de pe masă.",
        Lang.IT: "Batti la giocata precedente o raccogli le carte sul tavolo.",
    },
    "DUPLICATE_CARD": {
        Lang.EN: "{card} is named more than once.",
        Lang.RO: "Cartea {card} apare de mai multe ori.",
        Lang.IT: "La carta {card} è indicata più di una volta.",
    },
    "SIGNAL_NOT_TRUE": {
        Lang.EN: "Your hand does not hold such a set.",
        Lang.RO: "Mâna ta nu conține o astfel de combinație.",
        Lang.IT: "La tua mano non contiene una combinazione simile.",
    },
    "INVALID_SEED": {
        Lang.EN: "The table supplied an invalid seed.",
        Lang.RO: "Masa a furnizat o valoare aleatoare (seed) nevalidă.",
        Lang.IT: "Il tavolo ha fornito un valore casuale (seed) non valido.",
    },
}


REASONS: tuple[str, ...] = (*COMMON_TEXTS, *ERRORS)
"""Every reason code `decide`, `default_command` and `chance_command` may raise."""


def error(reason: str, **params: object) -> RuleError:
    """The RuleError for `reason` (Khözör's or a common one) with its texts in every language."""
    return rule_error(ERRORS, reason, **params)


PHASE_NAMES: Final[Mapping[str, Texts]] = {
    "awaiting_draw": {
        Lang.EN: "Drawing the opening team",
        Lang.RO: "Se trage la sorți echipa care deschide",
        Lang.IT: "Sorteggio della squadra di apertura",
    },
    "awaiting_deal": {
        Lang.EN: "Dealing",
        Lang.RO: "Se împart cărțile",
        Lang.IT: "Distribuzione delle carte",
    },
    "confirm_opener": {
        Lang.EN: "Choosing the opener",
        Lang.RO: "Alegerea celui care începe",
        Lang.IT: "Scelta di chi inizia",
    },
    "play": {Lang.EN: "Play", Lang.RO: "Joc", Lang.IT: "Gioco"},
    "over": {Lang.EN: "Match over", Lang.RO: "Meci încheiat", Lang.IT: "Partita finita"},
}
"""Names of `view()["phase"]` values."""

TURN_KIND_NAMES: Final[Mapping[str, Texts]] = {
    "chance": {
        Lang.EN: "The table deals",
        Lang.RO: "Masa împarte",
        Lang.IT: "Il tavolo distribuisce",
    },
    "confirm_opener": PHASE_NAMES["confirm_opener"],
    "lead": {Lang.EN: "Lead", Lang.RO: "Deschidere", Lang.IT: "Apertura"},
    "defend": {Lang.EN: "Beat or pick up", Lang.RO: "Bate sau ia", Lang.IT: "Batti o raccogli"},
    "over": PHASE_NAMES["over"],
}
"""Names of `turn().kind` values."""

SIGNAL_NAMES: Final[Mapping[str, Texts]] = {
    "three_set": {Lang.EN: "3-set", Lang.RO: "set de 3", Lang.IT: "set da 3"},
    "five_set": {Lang.EN: "5-set", Lang.RO: "set de 5", Lang.IT: "set da 5"},
}
