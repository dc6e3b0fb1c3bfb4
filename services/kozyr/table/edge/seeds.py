"""Seed scheme 2 on the wire: the deals' public records in a view (docs/fair-deal.md §9).

Kept apart from the view builder so the fairness records have one home: what a deal
shows of its seeding (the server commitment at once, the client seeds once the deal is
dealt, the server seed once it has ended) and the next deal open to client seeds.
"""

from __future__ import annotations

from typing import Any

from kozyr.table.domain.model import DealProof, Table


def deal_records(table: Table) -> list[dict[str, Any]]:
    """`TableView.deals`: every deal so far, as its public proof stands now."""
    return [_record(d) for d in table.deals]


def next_deal_record(table: Table) -> dict[str, Any] | None:
    """`TableView.next_deal`: the next deal while it takes client seeds, else None."""
    upcoming = table.next_seeding
    if upcoming is None:
        return None
    return {
        "number": upcoming.deal,
        "scheme": table.seed_scheme,
        "server_commitment": upcoming.commitment,
        "client_seeds": list(upcoming.client_seeds),
    }


def _record(deal: DealProof) -> dict[str, Any]:
    return {
        "number": deal.number,
        "commitment": deal.commitment,
        "seed": deal.seed or "",
        "scheme": deal.scheme,
        "server_commitment": deal.server_commitment,
        "client_seeds": list(deal.client_seeds),
        "server_seed": deal.server_seed or "",
    }
