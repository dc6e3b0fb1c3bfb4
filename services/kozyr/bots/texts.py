"""The bots service's player-facing errors (SuggestAction), in English, Romanian and
Italian. A table's own refusals (malformed or unknown table, a bad token) are passed on
as the table service wrote them."""

from __future__ import annotations

import math

from kozyr.runtime.errors import (
    FailedPrecondition,
    PermissionDenied,
    ResourceExhausted,
)
from kozyr.texts import Texts


def not_seated(table_id: str) -> PermissionDenied:
    return PermissionDenied(
        "NOT_SEATED",
        Texts(
            en=f"You have no seat at table {table_id}: hints are for its players.",
            ro=f"Nu aveți loc la masa {table_id}: sugestiile sunt pentru jucătorii ei.",
            it=f"Non hai un posto al tavolo {table_id}: i suggerimenti sono per i suoi giocatori.",
        ),
    )


def hints_not_allowed(table_id: str) -> FailedPrecondition:
    """The table was opened without hints (TableOptions.hints_off: matchmaking's rated
    queue tables), so that nobody lets the computer play his rated game."""
    return FailedPrecondition(
        "HINTS_NOT_ALLOWED",
        Texts(
            en=f"Table {table_id} is a rated table: hints are off there. They are on at "
            "private and unrated tables.",
            ro=f"Masa {table_id} este o masă cu clasament: sugestiile sunt oprite acolo. "
            "Sunt disponibile la mesele private și la cele fără clasament.",
            it=f"Il tavolo {table_id} è un tavolo classificato: lì i suggerimenti sono "
            "disattivati. Sono attivi ai tavoli privati e non classificati.",
        ),
    )


def table_finished(table_id: str) -> FailedPrecondition:
    return FailedPrecondition(
        "TABLE_FINISHED",
        Texts(
            en=f"Table {table_id} has finished: there is no move to suggest.",
            ro=f"Masa {table_id} s-a încheiat: nu există nicio mutare de sugerat.",
            it=f"Il tavolo {table_id} è finito: non c'è nessuna mossa da suggerire.",
        ),
    )


def not_your_turn(table_id: str, version: int) -> FailedPrecondition:
    return FailedPrecondition(
        "NOT_YOUR_TURN",
        Texts(
            en=f"It is not your turn at table {table_id}: a hint is for a move you can make now.",
            ro=f"Nu este rândul dumneavoastră la masa {table_id}: o sugestie este pentru "
            "o mutare pe care o puteți face acum.",
            it=f"Non è il tuo turno al tavolo {table_id}: un suggerimento è per una mossa "
            "che puoi fare adesso.",
        ),
        metadata={"viewVersion": str(version)},
    )


def too_many_hints(per_second: float, burst: int, retry_seconds: float) -> ResourceExhausted:
    """A player asked for hints faster than the limit (docs/api.md, "The bots API")."""
    wait = max(1, math.ceil(retry_seconds))
    return ResourceExhausted(
        "TOO_MANY_HINTS",
        Texts(
            en=f"Too many hints: at most {burst} at once, then {per_second:g} per second. "
            f"Try again in {wait} s.",
            ro=f"Prea multe sugestii: cel mult {burst} deodată, apoi {per_second:g} pe "
            f"secundă. Încercați din nou peste {wait} s.",
            it=f"Troppi suggerimenti: al massimo {burst} insieme, poi {per_second:g} al "
            f"secondo. Riprova tra {wait} s.",
        ),
        metadata={
            "burst": str(burst),
            "perSecond": f"{per_second:g}",
            "retryAfterSeconds": f"{retry_seconds:.3f}",
        },
    )
