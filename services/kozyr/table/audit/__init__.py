"""Moderator tooling: replay a table's event stream, and verify that it is sound.

Both work on the events exactly as stored (a list of `RecordedEvent`), with no service
running: a disputed game is settled from the log alone (docs/moderation.md).

- `replay(events, seat)` tells the game deal by deal: as the moderator sees it (every
  hand at each deal start, who acted and when), or as one seat saw it — through the
  game's own `redact`, the very redaction of that seat's history, so a seat's replay
  cannot show more than the seat was shown at the table (RULES.md, "what every seat
  may know").
- `verify(events, chain)` asks whether the log is what the rules and the dealer's
  commitments say it must be. Besides the store's hash chain (which only proves that
  nobody changed the rows *without re-hashing*), it re-runs the game: every seed
  against its commitment, every deal re-derived from its seed, every reveal against
  the dealt seed, every move and every chance draw re-decided by the game's decider
  and compared with what was recorded, and the final result against the replayed
  one. A forger who rewrites a score and re-hashes the whole chain is still caught.

Both return values with `to_dict()` (JSON-able) and `to_text()` (for people).

- `open_hand_replay(events)` is what an open-hand spectator may see now: the spectator's
  replay cut at the table's delay, with every hand there (docs/open-hand.md).
- `dispute_page(events, chain, seat, lang)` is the dispute viewer: the replay, the
  deals' fairness proofs and the verdict as one self-contained HTML page (`page`).
"""

from kozyr.table.audit.games import (
    AuditError,
    GameProfile,
    NoOpenHand,
    NoSuchSeat,
    NoSuchViewer,
    commitment_of,
    profile_of,
)
from kozyr.table.audit.page import dispute_page, render_page
from kozyr.table.audit.proofs import DealProof, as_seen, deal_proofs
from kozyr.table.audit.replaying import (
    DealReplay,
    OpenHands,
    Origin,
    Replay,
    Step,
    open_hand_replay,
    replay,
)
from kozyr.table.audit.text import render_replay, render_report, step_text
from kozyr.table.audit.verifying import AuditReport, Check, Problem, verify

__all__ = [
    "AuditError",
    "AuditReport",
    "Check",
    "DealProof",
    "DealReplay",
    "GameProfile",
    "NoOpenHand",
    "NoSuchSeat",
    "NoSuchViewer",
    "OpenHands",
    "Origin",
    "Problem",
    "Replay",
    "Step",
    "as_seen",
    "commitment_of",
    "deal_proofs",
    "dispute_page",
    "open_hand_replay",
    "profile_of",
    "render_page",
    "render_replay",
    "render_report",
    "replay",
    "step_text",
    "verify",
]
