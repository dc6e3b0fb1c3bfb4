"""Matchmaking's player-facing errors, in English, Romanian and Italian.

Every refusal is raised before anything is appended, so a refused call changes nothing.
"""

from __future__ import annotations

from datetime import datetime

from kozyr.runtime.errors import (
    FailedPrecondition,
    InvalidArgument,
    NotFound,
    PermissionDenied,
    Unavailable,
)
from kozyr.texts import Texts


def invalid_request_id() -> InvalidArgument:
    return InvalidArgument(
        "INVALID_REQUEST_ID",
        Texts(
            en="request_id must be 1 to 128 printable ASCII characters without spaces.",
            ro="request_id trebuie să aibă între 1 și 128 de caractere ASCII tipăribile, "
            "fără spații.",
            it="request_id deve avere da 1 a 128 caratteri ASCII stampabili, senza spazi.",
        ),
    )


def invalid_game(games: list[str]) -> InvalidArgument:
    """`games`: the ids of the registered games, named by their `Game` value."""
    names = [f"GAME_{game.upper()}" for game in games]
    head, last = ", ".join(names[:-1]), names[-1] if names else ""

    def listed(word: str) -> str:
        return f"{head} {word} {last}" if head else last

    return InvalidArgument(
        "INVALID_GAME",
        Texts(
            en=f"Choose a game: {listed('or')}.",
            ro=f"Alegeți un joc: {listed('sau')}.",
            it=f"Scegli un gioco: {listed('o')}.",
        ),
    )


def options_game_mismatch() -> InvalidArgument:
    return InvalidArgument(
        "OPTIONS_GAME_MISMATCH",
        Texts(
            en="The options given are those of another game.",
            ro="Opțiunile date sunt ale altui joc.",
            it="Le opzioni indicate sono di un altro gioco.",
        ),
    )


def invalid_option(name: str, value: int | bool, low: int, high: int) -> InvalidArgument:
    """A game's option outside its bounds (`GameInfo.options`; a flag is never refused):
    `INVALID_TURN_SECONDS` for the turn's clock, every game's; `INVALID_GAME_OPTION`
    (metadata `option`) for any other."""
    texts = Texts(
        en=f"{name} must be 0 (the default) or {low} to {high} (got {value}).",
        ro=f"{name} trebuie să fie 0 (implicit) sau între {low} și {high} (primit {value}).",
        it=f"{name} deve essere 0 (predefinito) o tra {low} e {high} (ricevuto {value}).",
    )
    if name == "turn_seconds":
        return InvalidArgument("INVALID_TURN_SECONDS", texts, metadata={"turnSeconds": str(value)})
    return InvalidArgument(
        "INVALID_GAME_OPTION", texts, metadata={"option": name, "value": str(value)}
    )


def invalid_cover_after(value: int, low: int, high: int) -> InvalidArgument:
    return InvalidArgument(
        "INVALID_COVER_AFTER",
        Texts(
            en=f"cover_after_seconds must be 0 (the default) or {low} to {high} (got {value}).",
            ro=f"cover_after_seconds trebuie să fie 0 (implicit) sau între {low} și {high} "
            f"(primit {value}).",
            it=f"cover_after_seconds deve essere 0 (predefinito) o tra {low} e {high} "
            f"(ricevuto {value}).",
        ),
        metadata={"coverAfterSeconds": str(value), "min": str(low), "max": str(high)},
    )


def invalid_id(field: str) -> InvalidArgument:
    return InvalidArgument(
        f"INVALID_{field.upper()}",
        Texts(
            en=f"{field} is not one this service gives out.",
            ro=f"{field} nu este unul dat de acest serviciu.",
            it=f"{field} non è uno di quelli dati da questo servizio.",
        ),
    )


def invalid_player_id() -> InvalidArgument:
    return InvalidArgument(
        "INVALID_PLAYER_ID",
        Texts(
            en="player_id must be 1 to 128 printable characters, not only spaces.",
            ro="player_id trebuie să aibă între 1 și 128 de caractere tipăribile, nu doar spații.",
            it="player_id deve avere da 1 a 128 caratteri stampabili, non solo spazi.",
        ),
    )


def invalid_page_size(maximum: int, value: int) -> InvalidArgument:
    return InvalidArgument(
        "INVALID_PAGE_SIZE",
        Texts(
            en=f"page_size must be 0 (the default) to {maximum} (got {value}).",
            ro=f"page_size trebuie să fie între 0 (implicit) și {maximum} (primit {value}).",
            it=f"page_size deve essere tra 0 (predefinito) e {maximum} (ricevuto {value}).",
        ),
        metadata={"max": str(maximum)},
    )


def invalid_page_token() -> InvalidArgument:
    return InvalidArgument(
        "INVALID_PAGE_TOKEN",
        Texts(
            en="page_token must be empty (the first page) or the next_page_token of a "
            "previous answer.",
            ro="page_token trebuie să fie gol (prima pagină) sau next_page_token dintr-un "
            "răspuns anterior.",
            it="page_token deve essere vuoto (la prima pagina) o il next_page_token di una "
            "risposta precedente.",
        ),
    )


def player_id_required() -> InvalidArgument:
    return InvalidArgument(
        "PLAYER_ID_REQUIRED",
        Texts(
            en="Name the player (player_id): only players may leave it empty.",
            ro="Numiți jucătorul (player_id): doar jucătorii îl pot lăsa gol.",
            it="Indica il giocatore (player_id): solo i giocatori possono lasciarlo vuoto.",
        ),
    )


def invalid_computer_level(value: int) -> InvalidArgument:
    return InvalidArgument(
        "INVALID_COMPUTER_LEVEL",
        Texts(
            en=f"computer_level must be unspecified (suited to the players), EASY (1), "
            f"NORMAL (2) or HARD (3) (got {value}).",
            ro=f"computer_level trebuie să fie nespecificat (potrivit jucătorilor), EASY (1), "
            f"NORMAL (2) sau HARD (3) (primit {value}).",
            it=f"computer_level deve essere non specificato (adatto ai giocatori), EASY (1), "
            f"NORMAL (2) o HARD (3) (ricevuto {value}).",
        ),
        metadata={"computerLevel": str(value)},
    )


def computer_level_conflict(legacy: int, chosen: int) -> InvalidArgument:
    """The deprecated int computer_level and table.computer_level name two levels."""
    return InvalidArgument(
        "INVALID_COMPUTER_LEVEL",
        Texts(
            en=f"computer_level ({legacy}, deprecated) and table.computer_level ({chosen}) "
            "differ: give table.computer_level only.",
            ro=f"computer_level ({legacy}, învechit) și table.computer_level ({chosen}) "
            "diferă: dați doar table.computer_level.",
            it=f"computer_level ({legacy}, deprecato) e table.computer_level ({chosen}) "
            "sono diversi: indica solo table.computer_level.",
        ),
        metadata={"computerLevel": str(legacy), "tableComputerLevel": str(chosen)},
    )


def already_queued(player_id: str, ticket_id: str) -> FailedPrecondition:
    return FailedPrecondition(
        "ALREADY_QUEUED",
        Texts(
            en=f"{player_id} is already in a queue (ticket {ticket_id}): cancel it first.",
            ro=f"{player_id} este deja într-o coadă (tichetul {ticket_id}): anulați-l întâi.",
            it=f"{player_id} è già in una coda (biglietto {ticket_id}): annullalo prima.",
        ),
        metadata={"playerId": player_id, "ticketId": ticket_id},
    )


def already_seated(player_id: str, table_id: str) -> FailedPrecondition:
    return FailedPrecondition(
        "ALREADY_SEATED",
        Texts(
            en=f"{player_id} is seated at table {table_id}, which is not finished: go back to it.",
            ro=f"{player_id} are loc la masa {table_id}, care nu s-a încheiat: "
            "întoarceți-vă la ea.",
            it=f"{player_id} siede al tavolo {table_id}, che non è finito: tornaci.",
        ),
        metadata={"playerId": player_id, "tableId": table_id},
    )


def already_placing(player_id: str) -> FailedPrecondition:
    return FailedPrecondition(
        "ALREADY_PLACING",
        Texts(
            en=f"A table is being opened for {player_id} right now: wait for it.",
            ro=f"Chiar acum se deschide o masă pentru {player_id}: așteptați-o.",
            it=f"Proprio ora si sta aprendo un tavolo per {player_id}: aspettalo.",
        ),
        metadata={"playerId": player_id},
    )


def ticket_not_found(ticket_id: str) -> NotFound:
    return NotFound(
        "TICKET_NOT_FOUND",
        Texts(
            en=f"There is no ticket {ticket_id}.",
            ro=f"Nu există tichetul {ticket_id}.",
            it=f"Non esiste il biglietto {ticket_id}.",
        ),
    )


def not_your_ticket(ticket_id: str) -> PermissionDenied:
    return PermissionDenied(
        "NOT_YOUR_TICKET",
        Texts(
            en=f"Ticket {ticket_id} is not yours.",
            ro=f"Tichetul {ticket_id} nu este al dumneavoastră.",
            it=f"Il biglietto {ticket_id} non è tuo.",
        ),
    )


def ticket_placing(ticket_id: str) -> FailedPrecondition:
    return FailedPrecondition(
        "TICKET_PLACING",
        Texts(
            en=f"Ticket {ticket_id} is matched and its table is being opened: too late to cancel.",
            ro=f"Tichetul {ticket_id} are deja o potrivire și masa se deschide: e prea târziu "
            "pentru anulare.",
            it=f"Il biglietto {ticket_id} ha già una partita e il tavolo si sta aprendo: "
            "troppo tardi per annullare.",
        ),
    )


def ticket_over(ticket_id: str, state: str) -> FailedPrecondition:
    return FailedPrecondition(
        "TICKET_OVER",
        Texts(
            en=f"Ticket {ticket_id} is over ({state}).",
            ro=f"Tichetul {ticket_id} s-a încheiat ({state}).",
            it=f"Il biglietto {ticket_id} è concluso ({state}).",
        ),
        metadata={"state": state},
    )


def already_in_party(party_id: str) -> FailedPrecondition:
    return FailedPrecondition(
        "ALREADY_IN_PARTY",
        Texts(
            en=f"You are already in party {party_id}: leave it first.",
            ro=f"Sunteți deja în grupul {party_id}: părăsiți-l întâi.",
            it=f"Sei già nel gruppo {party_id}: lascialo prima.",
        ),
        metadata={"partyId": party_id},
    )


def already_in_this_party(party_id: str) -> FailedPrecondition:
    return FailedPrecondition(
        "ALREADY_IN_THIS_PARTY",
        Texts(
            en=f"You are already in this party ({party_id}): there is nothing to join.",
            ro=f"Sunteți deja în acest grup ({party_id}): nu aveți la ce să vă alăturați.",
            it=f"Sei già in questo gruppo ({party_id}): non c'è niente a cui unirti.",
        ),
        metadata={"partyId": party_id},
    )


def not_your_player(player_id: str) -> PermissionDenied:
    return PermissionDenied(
        "NOT_YOUR_PLAYER",
        Texts(
            en=f"You may list only your own tables, not those of player {player_id}: "
            "leave player_id empty.",
            ro=f"Puteți vedea doar mesele dumneavoastră, nu pe cele ale jucătorului "
            f"{player_id}: lăsați player_id gol.",
            it=f"Puoi elencare solo i tuoi tavoli, non quelli del giocatore {player_id}: "
            "lascia player_id vuoto.",
        ),
        metadata={"playerId": player_id},
    )


def party_not_found(what: str) -> NotFound:
    return NotFound(
        "PARTY_NOT_FOUND",
        Texts(
            en=f"There is no party {what}.",
            ro=f"Nu există grupul {what}.",
            it=f"Non esiste il gruppo {what}.",
        ),
    )


def not_in_party() -> FailedPrecondition:
    return FailedPrecondition(
        "NOT_IN_PARTY",
        Texts(
            en="You are in no party.",
            ro="Nu sunteți în niciun grup.",
            it="Non sei in nessun gruppo.",
        ),
    )


def not_party_leader(party_id: str) -> PermissionDenied:
    return PermissionDenied(
        "NOT_PARTY_LEADER",
        Texts(
            en=f"Only the leader of party {party_id} may do this.",
            ro=f"Doar liderul grupului {party_id} poate face asta.",
            it=f"Solo il capo del gruppo {party_id} può farlo.",
        ),
    )


def party_full(limit: int) -> FailedPrecondition:
    return FailedPrecondition(
        "PARTY_FULL",
        Texts(
            en=f"The party is full ({limit} players at most).",
            ro=f"Grupul este complet (cel mult {limit} jucători).",
            it=f"Il gruppo è al completo (al massimo {limit} giocatori).",
        ),
        metadata={"limit": str(limit)},
    )


def party_too_big(size: int, limit: int, game: str) -> FailedPrecondition:
    return FailedPrecondition(
        "PARTY_TOO_BIG",
        Texts(
            en=f"A party of {size} cannot queue for {game}: at most {limit}.",
            ro=f"Un grup de {size} nu poate intra la {game}: cel mult {limit}.",
            it=f"Un gruppo di {size} non può mettersi in coda per {game}: al massimo {limit}.",
        ),
        metadata={"size": str(size), "limit": str(limit)},
    )


def party_queued(ticket_id: str) -> FailedPrecondition:
    return FailedPrecondition(
        "PARTY_IN_QUEUE",
        Texts(
            en=f"The party is in a queue (ticket {ticket_id}): cancel it first.",
            ro=f"Grupul este într-o coadă (tichetul {ticket_id}): anulați-l întâi.",
            it=f"Il gruppo è in coda (biglietto {ticket_id}): annullalo prima.",
        ),
        metadata={"ticketId": ticket_id},
    )


def table_not_full(players: int, seats: int) -> FailedPrecondition:
    return FailedPrecondition(
        "TABLE_NOT_FULL",
        Texts(
            en=f"The party fills {players} of {seats} seats: ask for computers "
            "(fill_with_computers) or bring more friends.",
            ro=f"Grupul ocupă {players} din {seats} locuri: cereți calculatoare "
            "(fill_with_computers) sau aduceți mai mulți prieteni.",
            it=f"Il gruppo occupa {players} posti su {seats}: chiedi dei computer "
            "(fill_with_computers) o porta altri amici.",
        ),
    )


def abandon_cooldown(player_id: str, until: datetime) -> FailedPrecondition:
    when = until.strftime("%Y-%m-%d %H:%M:%S UTC")
    return FailedPrecondition(
        "ABANDON_COOLDOWN",
        Texts(
            en=f"{player_id} left rated tables before their end: he may join a queue "
            f"again at {when}.",
            ro=f"{player_id} a părăsit mese cotate înainte de final: poate intra din nou "
            f"într-o coadă la {when}.",
            it=f"{player_id} ha lasciato tavoli classificati prima della fine: potrà "
            f"rientrare in una coda alle {when}.",
        ),
        metadata={"playerId": player_id, "until": until.isoformat()},
    )


def invalid_lift_reason() -> InvalidArgument:
    return InvalidArgument(
        "INVALID_LIFT_REASON",
        Texts(
            en="reason must say why the penalty is lifted: 1 to 500 printable characters.",
            ro="reason trebuie să spună de ce se ridică penalizarea: între 1 și 500 de "
            "caractere tipăribile.",
            it="reason deve dire perché la penalità è revocata: da 1 a 500 caratteri stampabili.",
        ),
    )


def busy() -> Unavailable:
    return Unavailable(
        "LOBBY_BUSY",
        Texts(
            en="The queue is very busy right now: try again shortly.",
            ro="Coada este foarte aglomerată acum: încercați din nou în curând.",
            it="La coda è molto affollata ora: riprova tra poco.",
        ),
    )


def table_opening() -> Unavailable:
    """UNAVAILABLE, retryable: the private table is still being opened (the table service
    is slow). Its opening goes on; the same request id asked again returns it."""
    return Unavailable(
        "TABLE_OPENING",
        Texts(
            en="Your table is still being opened: ask again shortly with the same request_id.",
            ro="Masa dumneavoastră încă se deschide: cereți-o din nou în curând, cu același "
            "request_id.",
            it="Il tuo tavolo si sta ancora aprendo: richiedilo tra poco con lo stesso request_id.",
        ),
    )
