"""The web edge's own refusals, in English, Romanian and Italian.

They reach the page as any service's refusal does: a gRPC status with ErrorInfo and
LocalizedMessage details (`grpc-status-details-bin`), the caller's language first.
"""

from __future__ import annotations

from kozyr.runtime.errors import InvalidArgument, ResourceExhausted, Unimplemented
from kozyr.texts import Texts


def unknown_service(path: str) -> Unimplemented:
    return Unimplemented(
        "UNKNOWN_SERVICE",
        Texts(
            en=f"The web edge serves no method {path}: it forwards the table, "
            "matchmaking, bots and clock services only.",
            ro=f"Intrarea web nu servește metoda {path}: transmite doar serviciile mesei "
            "de joc, ale formării partidelor, ale jucătorilor-calculator și ale ceasului.",
            it=f"L'ingresso web non serve il metodo {path}: inoltra solo i servizi del "
            "tavolo, degli abbinamenti, dei giocatori automatici e dell'orologio.",
        ),
        metadata={"path": path[:200]},
    )


def bad_frame(problem: str) -> InvalidArgument:
    return InvalidArgument(
        "BAD_GRPC_WEB_FRAME",
        Texts(
            en=f"The request is not one gRPC-Web message frame: {problem}.",
            ro="Cererea nu este un singur cadru de mesaj gRPC-Web (detaliul, în engleză, "
            "în metadatele erorii).",
            it="La richiesta non è un unico frame di messaggio gRPC-Web (il dettaglio, in "
            "inglese, nei metadati dell'errore).",
        ),
        metadata={"problem": problem},
    )


def bad_header(name: str, problem: str) -> InvalidArgument:
    return InvalidArgument(
        "BAD_HEADER",
        Texts(
            en=f"The header {name} cannot be passed on: {problem}.",
            ro=f"Antetul {name} nu poate fi transmis (detaliul, în engleză, în metadatele erorii).",
            it=f"L'intestazione {name} non può essere inoltrata (il dettaglio, in inglese, "
            "nei metadati dell'errore).",
        ),
        metadata={"header": name, "problem": problem},
    )


def message_too_large(limit: int) -> ResourceExhausted:
    return ResourceExhausted(
        "MESSAGE_TOO_LARGE",
        Texts(
            en=f"The request is larger than {limit} bytes.",
            ro=f"Cererea depășește {limit} octeți.",
            it=f"La richiesta supera {limit} byte.",
        ),
        metadata={"limitBytes": str(limit)},
    )
