"""The table service's own player-facing errors, in English, Romanian and Italian.

Rule refusals come with the games' texts; these are the table's: seats, versions,
contention, unknown tables. Each builder returns the typed error the edge maps.
"""

from __future__ import annotations

from kozyr.runtime.errors import (
    Aborted,
    FailedPrecondition,
    InvalidArgument,
    PermissionDenied,
    ResourceExhausted,
)
from kozyr.tablewire.refusals import table_not_found as table_not_found  # app.py raises it
from kozyr.texts import Texts


def stale_version(expected: int, actual: int) -> Aborted:
    return Aborted(
        "STALE_VERSION",
        Texts(
            en=f"The table moved on (version {actual}, you expected {expected}): reload it.",
            ro=f"Masa a avansat (versiunea {actual}, așteptai {expected}): reîncarc-o.",
            it=f"Il tavolo è andato avanti (versione {actual}, attesa {expected}): ricaricalo.",
        ),
        metadata={"currentVersion": str(actual)},
    )


def too_busy() -> Aborted:
    return Aborted(
        "TOO_MUCH_CONTENTION",
        Texts(
            en="The table is too busy right now: try again.",
            ro="Masa este prea aglomerată acum: încearcă din nou.",
            it="Il tavolo è troppo occupato ora: riprova.",
        ),
    )


def too_many_taps(taps: int, window_seconds: int, retry_seconds: int) -> ResourceExhausted:
    """A seat signalled more often than the tap limit allows (docs/api.md)."""
    return ResourceExhausted(
        "TOO_MANY_SIGNALS",
        Texts(
            en=f"Too many signals: at most {taps} in {window_seconds} seconds. "
            f"Try again in {retry_seconds} s.",
            ro=f"Prea multe semnale: cel mult {taps} în {window_seconds} secunde. "
            f"Încearcă din nou peste {retry_seconds} s.",
            it=f"Troppi segnali: al massimo {taps} in {window_seconds} secondi. "
            f"Riprova tra {retry_seconds} s.",
        ),
        metadata={
            "limit": str(taps),
            "windowSeconds": str(window_seconds),
            "retryAfterSeconds": str(retry_seconds),
        },
    )


def request_id_reused() -> InvalidArgument:
    return InvalidArgument(
        "REQUEST_ID_REUSED",
        Texts(
            en="This request_id was already used for another request.",
            ro="Acest request_id a fost deja folosit pentru o altă cerere.",
            it="Questo request_id è già stato usato per un'altra richiesta.",
        ),
    )


def invalid_seat(seat: int) -> InvalidArgument:
    return InvalidArgument(
        "INVALID_SEAT",
        Texts(
            en=f"There is no seat {seat} at this table.",
            ro=f"Nu există locul {seat} la această masă.",
            it=f"Non c'è il posto {seat} a questo tavolo.",
        ),
    )


def computer_seat(seat: int) -> FailedPrecondition:
    return FailedPrecondition(
        "COMPUTER_SEAT",
        Texts(
            en=f"Seat {seat} has no person: a computer always plays it.",
            ro=f"Locul {seat} nu are un jucător: îl joacă mereu calculatorul.",
            it=f"Il posto {seat} non ha un giocatore: lo gioca sempre il computer.",
        ),
    )


def not_seated() -> PermissionDenied:
    return PermissionDenied(
        "NOT_SEATED",
        Texts(
            en="You have no seat at this table.",
            ro="Nu ai un loc la această masă.",
            it="Non hai un posto a questo tavolo.",
        ),
    )


def not_your_seat() -> PermissionDenied:
    return PermissionDenied(
        "NOT_YOUR_SEAT",
        Texts(
            en="You may only see and act for your own seat.",
            ro="Poți vedea și juca doar pentru locul tău.",
            it="Puoi vedere e giocare solo per il tuo posto.",
        ),
    )


def seat_not_computer(seat: int) -> PermissionDenied:
    return PermissionDenied(
        "SEAT_NOT_COMPUTER",
        Texts(
            en=f"Seat {seat} is played by a person: a service may not act for it, "
            "nor the bots see it.",
            ro=f"Locul {seat} este jucat de o persoană: un serviciu nu poate juca "
            "pentru el, iar roboții nu îl pot vedea.",
            it=f"Il posto {seat} è giocato da una persona: un servizio non può "
            "giocarlo, né i bot vederlo.",
        ),
    )


def seat_required() -> InvalidArgument:
    return InvalidArgument(
        "SEAT_REQUIRED",
        Texts(
            en="Services and admins must name the seat they act for.",
            ro="Serviciile și administratorii trebuie să indice locul pentru care joacă.",
            it="Servizi e amministratori devono indicare il posto per cui giocano.",
        ),
    )


def deal_already_started(deal: int, next_deal: int) -> FailedPrecondition:
    """A client seed for a deal already dealt: it would change nothing, so it is refused."""
    return FailedPrecondition(
        "DEAL_ALREADY_STARTED",
        Texts(
            en=f"Deal {deal} has already been dealt: its seed is fixed. "
            f"Set your client seed for deal {next_deal}.",
            ro=f"Mâna {deal} a fost deja împărțită: sămânța ei este fixată. "
            f"Alege-ți sămânța pentru mâna {next_deal}.",
            it=f"La mano {deal} è già stata distribuita: il suo seme è fissato. "
            f"Scegli il tuo seme per la mano {next_deal}.",
        ),
        metadata={"nextDeal": str(next_deal)},
    )


def deal_not_open(deal: int, next_deal: int) -> FailedPrecondition:
    """A client seed for a deal that takes none now (further ahead, or none to come)."""
    return FailedPrecondition(
        "DEAL_NOT_OPEN",
        Texts(
            en=f"Deal {deal} takes no client seed now: only the next deal "
            f"({next_deal}) does, while this table deals again.",
            ro=f"Mâna {deal} nu primește acum o sămânță: doar următoarea mână "
            f"({next_deal}), cât timp masa mai împarte.",
            it=f"La mano {deal} non accetta ora un seme: solo la prossima mano "
            f"({next_deal}), finché il tavolo distribuisce ancora.",
        ),
        metadata={"nextDeal": str(next_deal)},
    )


def open_hand_off() -> FailedPrecondition:
    """An open-hand view asked of a table opened without the option (docs/open-hand.md)."""
    return FailedPrecondition(
        "OPEN_HAND_OFF",
        Texts(
            en="This table does not show its hands to spectators.",
            ro="Această masă nu arată spectatorilor cărțile din mână.",
            it="Questo tavolo non mostra le carte in mano agli spettatori.",
        ),
    )


def open_hand_seated() -> PermissionDenied:
    """An open-hand view asked by a player of the table (he would see his opponents'
    hands) or by the bots (they play seats)."""
    return PermissionDenied(
        "OPEN_HAND_SEATED",
        Texts(
            en="You play at this table: you may not watch its hands as a spectator.",
            ro="Joci la această masă: nu poți privi cărțile din mână ca spectator.",
            it="Giochi a questo tavolo: non puoi guardare le carte in mano da spettatore.",
        ),
    )


def open_hand_with_seat() -> InvalidArgument:
    """An open-hand view is a spectator's: it names no seat."""
    return InvalidArgument(
        "OPEN_HAND_WITH_SEAT",
        Texts(
            en="An open-hand view is a spectator's: name no seat.",
            ro="Vederea cu cărțile la vedere este a unui spectator: nu indica un loc.",
            it="La vista a carte scoperte è di uno spettatore: non indicare un posto.",
        ),
    )
