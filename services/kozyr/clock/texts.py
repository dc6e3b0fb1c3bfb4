"""The clock service's player-facing errors, in English, Romanian and Italian."""

from __future__ import annotations

from kozyr.runtime.errors import (
    FailedPrecondition,
    InvalidArgument,
    PermissionDenied,
)
from kozyr.texts import Texts

MAX_PRESENCE_IDS = 100


def unsupported_player_id(player_id: str) -> InvalidArgument:
    return InvalidArgument(
        "INVALID_PLAYER_ID",
        Texts(
            en=f"Player id {player_id!r} cannot have a presence: use 1 to 128 letters, "
            "digits, '_' or '-'.",
            ro=f"Id-ul de jucător {player_id!r} nu poate avea prezență: folosiți între 1 și "
            "128 de litere, cifre, '_' sau '-'.",
            it=f"L'id giocatore {player_id!r} non può avere una presenza: usa da 1 a 128 "
            "lettere, cifre, '_' o '-'.",
        ),
        metadata={"playerId": player_id[:128]},
    )


def bad_presence_query(count: int) -> InvalidArgument:
    return InvalidArgument(
        "INVALID_PLAYER_IDS",
        Texts(
            en=f"Ask for 1 to {MAX_PRESENCE_IDS} player ids (got {count}).",
            ro=f"Cereți între 1 și {MAX_PRESENCE_IDS} id-uri de jucători (primite {count}).",
            it=f"Chiedi da 1 a {MAX_PRESENCE_IDS} id di giocatori (ricevuti {count}).",
        ),
        metadata={"max": str(MAX_PRESENCE_IDS), "count": str(count)},
    )


def voice_not_configured() -> FailedPrecondition:
    return FailedPrecondition(
        "VOICE_NOT_CONFIGURED",
        Texts(
            en="Voice is not available here: the server has no LiveKit configured "
            "(KOZYR_LIVEKIT_URL, KOZYR_LIVEKIT_API_KEY, KOZYR_LIVEKIT_API_SECRET).",
            ro="Vocea nu este disponibilă aici: serverul nu are LiveKit configurat "
            "(KOZYR_LIVEKIT_URL, KOZYR_LIVEKIT_API_KEY, KOZYR_LIVEKIT_API_SECRET).",
            it="La voce non è disponibile qui: il server non ha LiveKit configurato "
            "(KOZYR_LIVEKIT_URL, KOZYR_LIVEKIT_API_KEY, KOZYR_LIVEKIT_API_SECRET).",
        ),
    )


def not_seated(table_id: str) -> PermissionDenied:
    return PermissionDenied(
        "NOT_SEATED",
        Texts(
            en=f"You have no seat at table {table_id}: only its players join its voice.",
            ro=f"Nu aveți loc la masa {table_id}: doar jucătorii ei intră în canalul vocal.",
            it=f"Non hai un posto al tavolo {table_id}: solo i suoi giocatori entrano "
            "nel suo canale vocale.",
        ),
    )


def table_finished(table_id: str) -> FailedPrecondition:
    return FailedPrecondition(
        "TABLE_FINISHED",
        Texts(
            en=f"Table {table_id} has finished: its voice channel is closed.",
            ro=f"Masa {table_id} s-a încheiat: canalul ei vocal este închis.",
            it=f"Il tavolo {table_id} è finito: il suo canale vocale è chiuso.",
        ),
    )
