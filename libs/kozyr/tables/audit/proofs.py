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

from kozyr.tables.audit.games import AuditError, GameProfile, commitment_of, profile_of
from kozyr.tables.audit.replaying import DealReplay, Replay


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


def deal_proofs(full: Replay) -> list[DealProof]:
    """Each deal's proof from the moderator's replay (every seed and hand in it)."""
    if full.seat is not None:
        raise AuditError("deal proofs are checked on the moderator's replay")
    profile = profile_of(full.game_id)
    return [_proof(profile, deal) for deal in full.deals]


def _proof(profile: GameProfile, deal: DealReplay) -> DealProof:
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
    if viewer.seat is None:
        return list(proofs)
    profile = profile_of(viewer.game_id)
    seen: dict[int, DealReplay] = {deal.number: deal for deal in viewer.deals}
    shown = []
    for proof in proofs:
        deal = seen.get(proof.number)
        reveal = _reveal(profile, deal) if deal is not None else None
        seed = None
        if deal is not None and reveal is not None:
            seed = next(s.data["seed"] for s in deal.steps if s.position == reveal)
        holds = None if seed is None else commitment_of(bytes.fromhex(seed)) == proof.commitment
        shown.append(replace(proof, seed=seed, revealed_at=reveal, commitment_holds=holds))
    return shown
