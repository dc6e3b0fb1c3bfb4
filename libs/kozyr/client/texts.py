"""Player-facing texts of the services that call the table service (clock, bots,
matchmaking): one wording for the same failure, in every language."""

from __future__ import annotations

from kozyr.runtime.errors import Unavailable
from kozyr.texts import Texts


def table_service_unavailable() -> Unavailable:
    """UNAVAILABLE TABLE_SERVICE_UNAVAILABLE: a call of ours to the table service failed
    for reasons the caller cannot fix (retrying later may work)."""
    return Unavailable(
        "TABLE_SERVICE_UNAVAILABLE",
        Texts(
            en="The table service cannot be reached right now: try again shortly.",
            ro="Serviciul meselor nu poate fi contactat acum: încercați din nou în curând.",
            it="Il servizio dei tavoli non è raggiungibile ora: riprova tra poco.",
        ),
    )
