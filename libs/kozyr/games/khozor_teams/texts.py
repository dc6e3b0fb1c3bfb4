"""Player-facing texts of Khözör in English, Romanian and Italian.

`ERRORS` holds the rule errors peculiar to this game (the common ones, such as
NOT_YOUR_TURN, live in `kozyr.games.errors.COMMON_TEXTS`). Clients match on the
reason code, never on the text.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Final

from kozyr.games.errors import COMMON_TEXTS, RuleError, rule_error
from kozyr.texts import Texts

ERRORS: Final[Mapping[str, Texts]] = {
    "NOT_ON_OPENING_TEAM": Texts(
        en="Only a player of the opening team can confirm the opener.",
        ro="Doar un jucător din echipa care deschide poate confirma cine începe.",
        it="Solo un giocatore della squadra di apertura può confermare chi inizia.",
    ),
    "OPENER_NOT_ON_OPENING_TEAM": Texts(
        en="Seat {opener} is not on the opening team.",
        ro="Locul {opener} nu face parte din echipa care deschide.",
        it="Il posto {opener} non fa parte della squadra di apertura.",
    ),
    "OPENER_ALREADY_CONFIRMED": Texts(
        en="The opener has already been confirmed.",
        ro="Cel care începe a fost deja confirmat.",
        it="Chi inizia è già stato confermato.",
    ),
    "WRONG_CARD_COUNT": Texts(
        en="Wrong number of cards: this play needs {expected}.",
        ro="Număr greșit de cărți: această mutare cere {expected}.",
        it="Numero di carte sbagliato: questa giocata ne richiede {expected}.",
    ),
    "INVALID_LEAD": Texts(
        en="A 3-card lead needs a pair; a 5-card lead needs two pairs and one more card.",
        ro="O deschidere de 3 cărți cere o pereche; una de 5 cărți cere două perechi"
        " și încă o carte.",
        it="Un'apertura di 3 carte richiede una coppia; una di 5 carte due coppie"
        " e un'altra carta.",
    ),
    "LEAD_NEEDS_THREE_CARDS_EACH": Texts(
        en="A 3-card lead needs every player to hold at least 3 cards.",
        ro="O deschidere de 3 cărți cere ca fiecare jucător să aibă cel puțin 3 cărți.",
        it="Un'apertura di 3 carte richiede che ogni giocatore abbia almeno 3 carte.",
    ),
    "LEAD_NEEDS_FIVE_CARDS_EACH": Texts(
        en="A 5-card lead needs every player to hold at least 5 cards.",
        ro="O deschidere de 5 cărți cere ca fiecare jucător să aibă cel puțin 5 cărți.",
        it="Un'apertura di 5 carte richiede che ogni giocatore abbia almeno 5 carte.",
    ),
    "LEAD_NEEDS_EMPTY_RESERVE": Texts(
        en="A 5-card lead is allowed only once the reserve is empty.",
        ro="O deschidere de 5 cărți este permisă doar după ce rezerva s-a golit.",
        it="Un'apertura di 5 carte è ammessa solo quando la riserva è vuota.",
    ),
    "JOKER_NOT_SINGLE": Texts(
        en="Jokers are only played singly.",
        ro="Jokerii se joacă doar câte unul.",
        it="I jolly si giocano solo da soli.",
    ),
    "DOES_NOT_BEAT": Texts(
        en="Your cards must each beat a different card of the previous play.",
        ro="Fiecare carte a ta trebuie să bată o altă carte din mutarea anterioară.",
        it="Ogni tua carta deve battere una carta diversa della giocata precedente.",
    ),
    "NOTHING_TO_BEAT": Texts(
        en="There is nothing to beat: lead a new play.",
        ro="Nu este nimic de bătut: începe o nouă mutare.",
        it="Non c'è niente da battere: apri una nuova giocata.",
    ),
    "MUST_DEFEND": Texts(
        en="Beat the previous play or pick up the pile.",
        ro="Bate mutarea anterioară sau ia cărțile de pe masă.",
        it="Batti la giocata precedente o raccogli le carte sul tavolo.",
    ),
    "DUPLICATE_CARD": Texts(
        en="{card} is named more than once.",
        ro="Cartea {card} apare de mai multe ori.",
        it="La carta {card} è indicata più di una volta.",
    ),
    "SIGNAL_NOT_TRUE": Texts(
        en="Your hand does not hold such a set.",
        ro="Mâna ta nu conține o astfel de combinație.",
        it="La tua mano non contiene una combinazione simile.",
    ),
    "INVALID_SEED": Texts(
        en="The table supplied an invalid seed.",
        ro="Masa a furnizat o valoare aleatoare (seed) nevalidă.",
        it="Il tavolo ha fornito un valore casuale (seed) non valido.",
    ),
}


REASONS: tuple[str, ...] = (*COMMON_TEXTS, *ERRORS)
"""Every reason code `decide`, `default_command` and `chance_command` may raise."""


def error(reason: str, **params: object) -> RuleError:
    """The RuleError for `reason` (Khözör's or a common one) with its texts in every language."""
    return rule_error(ERRORS, reason, **params)


PHASE_NAMES: Final[Mapping[str, Texts]] = {
    "awaiting_draw": Texts(
        en="Drawing the opening team",
        ro="Se trage la sorți echipa care deschide",
        it="Sorteggio della squadra di apertura",
    ),
    "awaiting_deal": Texts(
        en="Dealing",
        ro="Se împart cărțile",
        it="Distribuzione delle carte",
    ),
    "confirm_opener": Texts(
        en="Choosing the opener",
        ro="Alegerea celui care începe",
        it="Scelta di chi inizia",
    ),
    "play": Texts(en="Play", ro="Joc", it="Gioco"),
    "over": Texts(en="Match over", ro="Meci încheiat", it="Partita finita"),
}
"""Names of `view()["phase"]` values."""

TURN_KIND_NAMES: Final[Mapping[str, Texts]] = {
    "chance": Texts(
        en="The table deals",
        ro="Masa împarte",
        it="Il tavolo distribuisce",
    ),
    "confirm_opener": PHASE_NAMES["confirm_opener"],
    "lead": Texts(en="Lead", ro="Deschidere", it="Apertura"),
    "defend": Texts(en="Beat or pick up", ro="Bate sau ia", it="Batti o raccogli"),
    "over": PHASE_NAMES["over"],
}
"""Names of `turn().kind` values."""

SIGNAL_NAMES: Final[Mapping[str, Texts]] = {
    "three_set": Texts(en="3-set", ro="set de 3", it="set da 3"),
    "five_set": Texts(en="5-set", ro="set de 5", it="set da 5"),
}
