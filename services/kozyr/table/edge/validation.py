"""Shape checks of incoming requests: INVALID_ARGUMENT before anything is read or written."""

from __future__ import annotations

import re

from kozyr.runtime.errors import InvalidArgument
from kozyr.table.domain.seeding import MAX_CLIENT_SEED, is_client_seed
from kozyr.tablewire.refusals import (
    table_id as table_id,  # the table API checks ids as the clock does
)
from kozyr.texts import Texts

MAX_REQUEST_ID = 128
MAX_PLAYER_ID = 128
MAX_PAGE = 1000
DEFAULT_PAGE = 200
_REQUEST_ID = re.compile(r"[\x21-\x7e]{1,128}")


def request_id(value: str) -> str:
    if not _REQUEST_ID.fullmatch(value):
        raise InvalidArgument(
            "INVALID_REQUEST_ID",
            f"request_id must be 1 to {MAX_REQUEST_ID} printable ASCII characters",
        )
    return value


def player_id(value: str) -> str:
    """1 to 128 printable characters, at least one of them visible (not only spaces):
    the id is shown to the other players and stored with every event."""
    if len(value) > MAX_PLAYER_ID or not value.isprintable() or not value.strip():
        raise InvalidArgument(
            "INVALID_PLAYER_ID",
            Texts(
                en=f"A player id is 1 to {MAX_PLAYER_ID} printable characters, not only spaces.",
                ro=f"Un id de jucător are între 1 și {MAX_PLAYER_ID} caractere "
                "afișabile, nu doar spații.",
                it=f"Un id giocatore ha da 1 a {MAX_PLAYER_ID} caratteri stampabili, "
                "non solo spazi.",
            ),
        )
    return value


def version(value: int, field: str) -> int:
    if value < 0:
        raise InvalidArgument("INVALID_VERSION", f"{field} cannot be negative")
    return value


def page_size(value: int) -> int:
    if value < 0:
        raise InvalidArgument("INVALID_PAGE_SIZE", "page_size cannot be negative")
    return min(value or DEFAULT_PAGE, MAX_PAGE)


def client_seed(value: str) -> str:
    """1 to 64 printable ASCII characters (docs/fair-deal.md §9): the bytes the deal's
    derivation hashes are then the same whatever a client's encoding."""
    if not is_client_seed(value):
        raise InvalidArgument(
            "INVALID_CLIENT_SEED",
            Texts(
                en=f"A client seed is 1 to {MAX_CLIENT_SEED} printable ASCII characters "
                "(letters, digits, punctuation, spaces).",
                ro=f"O sămânță de client are între 1 și {MAX_CLIENT_SEED} caractere ASCII "
                "afișabile (litere, cifre, punctuație, spații).",
                it=f"Un seme del client ha da 1 a {MAX_CLIENT_SEED} caratteri ASCII "
                "stampabili (lettere, cifre, punteggiatura, spazi).",
            ),
        )
    return value
