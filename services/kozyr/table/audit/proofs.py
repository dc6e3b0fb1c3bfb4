"""The fairness proof of each deal, as a dispute viewer shows it (docs/fair-deal.md).

Every deal is dealt from a seed whose SHA-256, the commitment, is public from the deal
on; the seed is revealed when the deal ends. So anyone can check, deal by deal, that
the revealed seed hashes to the commitment and that dealing from that seed gives the
very hands that were dealt. `deal_proofs` does both checks on the moderator's replay;
`as_seen` keeps of them what a viewer may be shown: the seed only as the viewer's own
replay carries it, and the re-derivation's verdict (yes or no, never the cards).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

from kozyr.table.audit.games import AuditError, GameProfile, commitment_of, profile_of
from kozyr.table.audit.replaying import DealReplay, Replay
from kozyr.table.domain import seeding


@dataclass(frozen=True, slots=True)
class DealProof:
    """One deal's commitment, its seed as the viewer knows it, and the checks.

    `seed` is None while the viewer has not been shown it; `commitment_holds` is then
    None too (nothing to hash). `rederived` says whether dealing from the dealt seed
    gives exactly the recorded hands and talon/reserve (checked on the full log)."""

    number: int
    position: int
    commitment: str
    seed: str | None
    revealed_at: int | None
    commitment_holds: bool | None
    rederived: bool
    derived: bool | None = None
    """Seed scheme 2: whether the revealed server seed hashes to its commitment and, with
    the deal's client seeds, derives the seed (docs/fair-deal.md §9); None under scheme 1
    or while the viewer has not been shown the server seed."""


def deal_proofs(full: Replay) -> list[DealProof]:
    """Each deal's proof from the moderator's replay (every seed and hand in it)."""
    if not full.moderator:
        raise AuditError("deal proofs are checked on the moderator's replay")
    profile = profile_of(full.game_id)
    return [_proof(profile, deal, full.table_id) for deal in full.deals]


def _proof(profile: GameProfile, deal: DealReplay, table_id: str) -> DealProof:
    data = deal.start.data
    seed = bytes.fromhex(data["seed"])
    hands, undealt = profile.deal_from_seed(seed)
    rederived = [[str(c) for c in hand] for hand in hands] == data["hands"] and [
        str(c) for c in undealt
    ] == data[profile.undealt_field]
    reveal = _reveal(profile, deal)
    return DealProof(
        number=deal.number,
        position=deal.start.position,
        commitment=data["commitment"],
        seed=data["seed"],
        revealed_at=reveal,
        commitment_holds=commitment_of(seed) == data["commitment"],
        rederived=rederived,
        derived=_derived(deal, table_id, seed),
    )


def _derived(deal: DealReplay, table_id: str, seed: bytes) -> bool | None:
    """Scheme 2: the deal's seed re-derived from its revealed server seed and its client
    seeds (None: no derivation recorded, or the server seed not revealed to the viewer)."""
    record = _step_data(deal, "DealSeeded")
    revealed = _step_data(deal, "ServerSeedRevealed")
    if record is None or revealed is None:
        return None
    server_seed = bytes.fromhex(revealed["server_seed"])
    client_seeds = tuple(record["client_seeds"])
    return seeding.commitment_of(server_seed) == record["server_commitment"] and (
        seeding.derive_seed(server_seed, client_seeds, table_id, deal.number) == seed
    )


def _step_data(deal: DealReplay, type_name: str) -> dict[str, Any] | None:
    """The data of the deal's first step of `type_name` naming this deal."""
    return next(
        (
            dict(s.data)
            for s in deal.steps
            if s.type == type_name and s.data.get("deal") == deal.number
        ),
        None,
    )


def _reveal(profile: GameProfile, deal: DealReplay) -> int | None:
    """The position where the deal's seed was revealed (None: not yet)."""
    for step in deal.steps:
        if step.type == profile.reveal_event and step.data.get("seed"):
            return step.position
    return None


def as_seen(proofs: Sequence[DealProof], viewer: Replay) -> list[DealProof]:
    """The proofs as `viewer`'s replay may show them: the moderator's whole; a seat's
    with the seed only once its replay carries the reveal (and the commitment checked
    against that very seed). The re-derivation's verdict is a yes or no, no card."""
    if viewer.moderator:
        return list(proofs)
    profile = profile_of(viewer.game_id)
    seen: dict[int, DealReplay] = {deal.number: deal for deal in viewer.deals}
    shown = []
    for proof in proofs:
        deal = seen.get(proof.number)
        if deal is None:  # dealt after an open-hand spectator's cut: not his to see
            continue
        reveal = _reveal(profile, deal)
        seed = None
        if reveal is not None:
            seed = next(s.data["seed"] for s in deal.steps if s.position == reveal)
        holds = None if seed is None else commitment_of(bytes.fromhex(seed)) == proof.commitment
        derived = None
        if seed is not None:
            derived = _derived(deal, viewer.table_id, bytes.fromhex(seed))
        shown.append(
            replace(proof, seed=seed, revealed_at=reveal, commitment_holds=holds, derived=derived)
        )
    return shown
