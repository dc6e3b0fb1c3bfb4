"""Player entropy in every deal: server seed + client seeds, fitted to the table (pure).

Under seed scheme 2 (docs/fair-deal.md §9) a deal's seed is not the service's choice
alone. The service commits to a secret *server seed* for deal `n` (`ServerSeedCommitted`,
its SHA-256 public) before any seat's *client seed* for that deal is final; each seat may
set a client seed for deal `n` (`ClientSeedSet`) until deal `n` starts; the deal's seed
is then `derive_seed(server seed, client seeds in seat order, table id, n)`, recorded
with the client seeds it used (`DealSeeded`), and the server seed is revealed when the
deal ends (`ServerSeedRevealed`). So the service cannot steer a deal without breaking
its commitment, and no seat can steer it without knowing the server seed.

Scheme 1 is the old one (the service's seed alone): tables created before scheme 2 keep
it, their logs carry no seeding event, and they verify as before.

Everything here is pure: the table service supplies fresh server seeds as the game's
chance draws do (`kozyr.table.domain.decision`), and a replay folds these events like any other.
"""

from __future__ import annotations

import hashlib
import hmac
from dataclasses import dataclass

SERVER_ONLY = 1
"""Seed scheme 1: the table service's seed alone (tables created before scheme 2)."""
CLIENT_SEEDS = 2
"""Seed scheme 2: HMAC-SHA-256 of the server seed over every seat's client seed."""
CURRENT_SCHEME = CLIENT_SEEDS
"""The scheme of every table the service opens now."""

DOMAIN = b"kozyr/deal-seed/v2"
"""The derivation's first bytes: a derived seed can never be mistaken for another HMAC."""
DEFAULT_CLIENT_SEED = ""
"""A seat that set nothing contributes the empty client seed, recorded as such: an empty
seed cannot be set on purpose (`MIN_CLIENT_SEED`), so "" always means the default."""
MIN_CLIENT_SEED = 1
MAX_CLIENT_SEED = 64
"""A client seed is 1 to 64 printable ASCII characters (space to tilde): anything a
player can type, the same bytes in every encoding."""


@dataclass(frozen=True, slots=True)
class ServerSeedCommitted:
    """The service's commitment to the server seed of deal `deal`: `commitment` is
    SHA-256(server_seed) in hex, public at once; `server_seed` is shown to no one but a
    moderator until `ServerSeedRevealed` (kozyr.table.domain.history redacts it)."""

    deal: int
    commitment: str
    server_seed: bytes


@dataclass(frozen=True, slots=True)
class ClientSeedSet:
    """A seat's client seed for deal `deal` (the last one set before the deal counts)."""

    seat: int
    deal: int
    client_seed: str


@dataclass(frozen=True, slots=True)
class DealSeeded:
    """Deal `deal` was dealt (the game's deal event right before this one) from
    `derive_seed` of the committed server seed and these `client_seeds`, one per seat in
    seat order, "" where the seat set none."""

    deal: int
    scheme: int
    server_commitment: str
    client_seeds: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class ServerSeedRevealed:
    """Deal `deal` has ended (or will never be dealt: the game is over): its server seed
    is public now, and anyone can re-derive the deal's seed."""

    deal: int
    server_seed: bytes


SeedingEvent = ServerSeedCommitted | ClientSeedSet | DealSeeded | ServerSeedRevealed
SEEDING_EVENTS = (
    ServerSeedCommitted,
    ClientSeedSet,
    DealSeeded,
    ServerSeedRevealed,
)
SECRET_FIELDS = {"ServerSeedCommitted": "server_seed"}
"""Per event type, the field nobody but a moderator may read (histories drop it)."""


@dataclass(frozen=True, slots=True)
class Seeding:
    """A committed server seed not yet revealed, with the client seeds set for its deal
    so far (one per seat, "" for none)."""

    deal: int
    server_seed: bytes
    client_seeds: tuple[str, ...]

    @property
    def commitment(self) -> str:
        return commitment_of(self.server_seed)


class SeedRefused(ValueError):
    """A client seed the table cannot take; `reason` is its ErrorInfo reason."""

    def __init__(self, reason: str, deal: int, next_deal: int) -> None:
        super().__init__(f"{reason}: deal {deal}, next deal {next_deal}")
        self.reason = reason
        self.deal = deal
        self.next_deal = next_deal


def commitment_of(server_seed: bytes) -> str:
    """SHA-256 of the server seed, lowercase hex (docs/fair-deal.md §5, §9)."""
    return hashlib.sha256(server_seed).hexdigest()


def is_client_seed(text: str) -> bool:
    """1 to 64 printable ASCII characters (space to tilde)."""
    return MIN_CLIENT_SEED <= len(text) <= MAX_CLIENT_SEED and all(" " <= ch <= "~" for ch in text)


def derive_seed(
    server_seed: bytes, client_seeds: tuple[str, ...], table_id: str, deal: int
) -> bytes:
    """The deal's 32-byte seed, byte for byte as docs/fair-deal.md §9 writes it:

    HMAC-SHA-256 with key = the 32-byte server seed over
    DOMAIN ‖ len(table_id) (1 byte) ‖ table_id (ASCII) ‖ deal (4 bytes big-endian) ‖
    number of seats (1 byte) ‖ for each seat in order: len(client seed) (1 byte) ‖ its
    ASCII bytes. The lengths make the message unambiguous (no two inputs share it).
    """
    ident = table_id.encode("ascii")
    message = bytearray(DOMAIN)
    message += bytes([len(ident)]) + ident + deal.to_bytes(4, "big") + bytes([len(client_seeds)])
    for seed in client_seeds:
        raw = seed.encode("ascii")
        message += bytes([len(raw)]) + raw
    return hmac.new(server_seed, bytes(message), hashlib.sha256).digest()


def committed(deal: int, server_seed: bytes) -> ServerSeedCommitted:
    """The commitment event of a fresh server seed for `deal`."""
    return ServerSeedCommitted(deal, commitment_of(server_seed), server_seed)


def pending(seedings: tuple[Seeding, ...], deal: int) -> Seeding | None:
    """The committed, unrevealed server seed of `deal`, if any."""
    return next((s for s in seedings if s.deal == deal), None)


def client_seed_event(
    seedings: tuple[Seeding, ...], dealt: int, seat: int, deal: int, client_seed: str
) -> ClientSeedSet:
    """The event of a seat's client seed for `deal`, or SeedRefused.

    `dealt` is how many deals the table has dealt. Only the next deal takes client seeds,
    and only once its server seed is committed: a deal already dealt is DEAL_ALREADY_STARTED
    (a change then has no effect: it is refused, and the deal stays as it was); a deal
    further ahead, or a table without scheme 2 or past its last deal, is DEAL_NOT_OPEN.
    """
    next_deal = dealt + 1
    if deal <= dealt:
        raise SeedRefused("DEAL_ALREADY_STARTED", deal, next_deal)
    if deal != next_deal or pending(seedings, deal) is None:
        raise SeedRefused("DEAL_NOT_OPEN", deal, next_deal)
    return ClientSeedSet(seat, deal, client_seed)


def with_client_seed(seedings: tuple[Seeding, ...], event: ClientSeedSet) -> tuple[Seeding, ...]:
    """The seedings after a seat set its client seed."""
    return tuple(
        Seeding(
            s.deal,
            s.server_seed,
            tuple(
                event.client_seed if i == event.seat else c for i, c in enumerate(s.client_seeds)
            ),
        )
        if s.deal == event.deal
        else s
        for s in seedings
    )


def seeded(seeding: Seeding, table_id: str) -> tuple[bytes, DealSeeded]:
    """The seed of `seeding`'s deal and the event that records how it was derived."""
    seed = derive_seed(seeding.server_seed, seeding.client_seeds, table_id, seeding.deal)
    return seed, DealSeeded(seeding.deal, CLIENT_SEEDS, seeding.commitment, seeding.client_seeds)
