"""The rules' typed errors: a stable reason code plus texts in every language.

`RuleError` is an illegal (or malformed) command, `OptionsError` bad table options; the
service maps both to gRPC statuses. `COMMON_TEXTS` holds the reasons every game shares;
each game's `texts.error(reason, **params)` is `rule_error` over its own catalogue.
"""

from __future__ import annotations

from collections.abc import Mapping

from kozyr.games.translations import text_param
from kozyr.texts import Lang, Texts, in_language, parse_lang


class GameError(Exception):
    """Base of the rules' typed errors; the service maps them to gRPC statuses."""

    reason: str = "GAME_ERROR"


class OptionsError(GameError):
    """Table options that are unknown or out of range (the table cannot be created)."""

    reason = "INVALID_OPTIONS"


class RuleError(GameError):
    """An illegal command: a stable reason code plus a message in every language.

    `reason` is what clients and tests match on (never the text). `texts` are
    templates; `message(lang)` fills them with `params`, each written for the
    language: a `Card` by `card_name`, a tuple as alternatives joined by the
    language's "or" — so no English word or card letter ends up in another language.
    """

    def __init__(self, reason: str, texts: Texts, **params: object) -> None:
        self.reason = reason
        self.texts = texts
        self.params = params
        super().__init__(f"{reason}: {self.message(Lang.EN)}")

    def message(self, lang: Lang | str = Lang.EN) -> str:
        lang = lang if isinstance(lang, Lang) else parse_lang(lang)
        template = in_language(self.texts, lang)
        return template.format(**{k: text_param(v, lang) for k, v in self.params.items()})


# Reasons common to both games. Game modules add their own catalogues.
COMMON_TEXTS: Mapping[str, Texts] = {
    "NOT_YOUR_TURN": Texts(
        en="It is not your turn.",
        ro="Nu este rândul tău.",
        it="Non è il tuo turno.",
    ),
    "GAME_OVER": Texts(
        en="The game is over.",
        ro="Jocul s-a terminat.",
        it="La partita è finita.",
    ),
    "WRONG_PHASE": Texts(
        en="This move is not possible now.",
        ro="Această mutare nu este posibilă acum.",
        it="Questa mossa non è possibile ora.",
    ),
    "CARD_NOT_IN_HAND": Texts(
        en="You do not hold {card}.",
        ro="Nu ai cartea {card}.",
        it="Non hai la carta {card}.",
    ),
    "INVALID_SEAT": Texts(
        en="There is no seat {seat} at this table.",
        ro="Nu există locul {seat} la această masă.",
        it="Non c'è il posto {seat} a questo tavolo.",
    ),
    "NOT_A_PLAYER_MOVE": Texts(
        en="Only the table itself makes this move.",
        ro="Doar masa face această mutare.",
        it="Solo il tavolo fa questa mossa.",
    ),
    "UNKNOWN_COMMAND": Texts(
        en="This game has no such move.",
        ro="Acest joc nu are o asemenea mutare.",
        it="Questo gioco non prevede questa mossa.",
    ),
    "MALFORMED_COMMAND": Texts(
        en="This move is malformed.",
        ro="Această mutare este formulată greșit.",
        it="Questa mossa è formulata male.",
    ),
}


def rule_error(catalogue: Mapping[str, Texts], reason: str, **params: object) -> RuleError:
    """Build the RuleError for `reason` from a game catalogue (falling back to common).

    Each game's `texts.error(reason, **params)` is this function over its own catalogue.
    """
    texts = catalogue.get(reason) or COMMON_TEXTS[reason]
    return RuleError(reason, texts, **params)
