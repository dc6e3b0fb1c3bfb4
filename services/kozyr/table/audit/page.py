"""The dispute viewer: a whole table as one self-contained HTML page.

`render_page` turns a `Replay` (the moderator's, or one seat's — already redacted by
the table service's own history redaction) and its deals' fairness proofs into one
page a moderator can read, keep and send: deal by deal, the hands at the start, every
event with its time (date, time and zone), seat, player and, for the moderator, who
made the move; exchanges, scores, the result, and the fairness proof of every deal.

The page is built with the standard library's `html.escape` only; its style is inline
and it has no script and no link to anything outside itself, so it opens offline and
shows the same thing wherever it is opened. Every row that quotes the log carries the
event's position (`data-position`), the `#N` of `kozyr replay` and `kozyr verify`.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from datetime import datetime
from html import escape

from kozyr.eventstore import RecordedEvent, VerifyReport
from kozyr.games.plugin import cards_text
from kozyr.table.audit.games import GameProfile, profile_of
from kozyr.table.audit.labels import LABELS, label
from kozyr.table.audit.proofs import DealProof, as_seen, deal_proofs
from kozyr.table.audit.replaying import DealReplay, Replay, Step, open_hand_replay, replay
from kozyr.table.audit.text import (
    acted_for,
    acting_seat,
    all_steps,
    openers,
    options_text,
    player_name,
    step_text,
    timestamp,
    with_names,
)
from kozyr.table.audit.verifying import verify
from kozyr.table.domain.model import COMPUTER
from kozyr.texts import Lang

STYLE = """
body { font: 15px/1.45 system-ui, sans-serif; margin: 1.5rem auto; max-width: 72rem;
       padding: 0 1rem; color: #1d1d1f; background: #fff; }
h1 { font-size: 1.6rem; margin-bottom: .2rem; }
h2 { font-size: 1.25rem; margin-top: 2rem; border-bottom: 2px solid #2b5d8a; }
h3 { font-size: 1.05rem; margin: 1rem 0 .3rem; }
table { border-collapse: collapse; width: 100%; margin: .3rem 0 1rem; }
th, td { border: 1px solid #c9d3dd; padding: .2rem .45rem; text-align: left;
         vertical-align: top; }
th { background: #e8eef4; }
dl.facts { display: grid; grid-template-columns: max-content 1fr; gap: .15rem 1rem; }
dl.facts dt { font-weight: 600; }
dl.facts dd { margin: 0; }
td time { white-space: nowrap; }
.mono, .cards { font-family: ui-monospace, monospace; }
.hash { font-family: ui-monospace, monospace; font-size: .8rem; word-break: break-all; }
tr.trick td { background: #f3f7e9; }
tr.score td { background: #fff4d6; font-weight: 600; }
tr.reveal td { background: #eef0fb; }
td.other { color: #b3261e; font-weight: 600; }
.yes { color: #1b6e2a; font-weight: 600; }
.no { color: #b3261e; font-weight: 600; }
nav ol { columns: 6 8rem; padding-left: 1.2rem; }
"""


def dispute_page(
    events: Sequence[RecordedEvent],
    chain: VerifyReport,
    seat: int | None = None,
    lang: Lang = Lang.EN,
    *,
    spectator: bool = False,
    open_hand: bool = False,
) -> str:
    """The page of a table's stream for the moderator, or as `seat` saw it, or a
    spectator (`open_hand`: an open-hand one, now, cut at the table's delay): the replay
    (a seat's or spectator's through the table service's own redaction), each deal's
    fairness proof as that viewer may see it, and `verify`'s verdict on the whole log
    (`chain` is the store's report of the same stream). AuditError if the stream does
    not fold; NoSuchViewer for a seat or an open hand the table does not have."""
    everything = replay(events)
    if open_hand:
        viewer = open_hand_replay(events)
    elif seat is None and not spectator:
        viewer = everything
    else:
        viewer = replay(events, seat, spectator=spectator)
    report = verify(events, chain)
    problem = report.problem
    verdict = (True, "", 0) if problem is None else (False, problem.check.value, problem.position)
    return render_page(viewer, as_seen(deal_proofs(everything), viewer), lang, verdict)


def render_page(
    replay: Replay,
    proofs: Sequence[DealProof],
    lang: Lang = Lang.EN,
    verified: tuple[bool, str, int] | None = None,
) -> str:
    """The page of `replay` in `lang`. `proofs` are the deals' fairness proofs as this
    viewer may see them (`proofs.as_seen`); `verified` is `kozyr verify`'s verdict
    (ok, failed check, its position), shown when given."""
    page = _Page(replay, profile_of(replay.game_id), lang)
    return page.render(proofs, verified)


class _Page:
    """One page being written: the replay, its game's texts, the language."""

    def __init__(self, replay: Replay, profile: GameProfile, lang: Lang) -> None:
        self.r = replay
        self.profile = profile
        self.lang = lang
        self.openers = openers(all_steps(replay))

    def t(self, key: str, **params: object) -> str:
        """A label, escaped for the page."""
        return escape(label(key, self.lang, **params))

    def player(self, seat: int) -> str:
        name = self.r.seats[seat]
        return escape(name) if name != COMPUTER else self.t("computer")

    def deal_word(self) -> str:
        return self.t(self.profile.deal_word)

    def render(self, proofs: Sequence[DealProof], verified: tuple[bool, str, int] | None) -> str:
        r = self.r
        title = f"{self.t('title')}: {self.t('table')} {escape(r.table_id)}"
        parts = [
            "<!DOCTYPE html>",
            f'<html lang="{self.lang.value}">',
            "<head>",
            '<meta charset="utf-8">',
            '<meta name="viewport" content="width=device-width, initial-scale=1">',
            f"<title>{title}</title>",
            f"<style>{STYLE}</style>",
            "</head>",
            "<body>",
            "<header>",
            f"<h1>{title}</h1>",
            self.facts(),
            "</header>",
            "<main>",
            self.players(),
            self.contents(),
            self.section("opening", self.t("opening"), self.steps_table(r.opening)),
            *(self.deal(deal) for deal in r.deals),
            self.section("end", self.t("end"), self.steps_table(r.ending)) if r.ending else "",
            self.scores(),
            self.open_hands(),
            self.fairness(proofs, verified),
            "</main>",
            "</body>",
            "</html>",
        ]
        return "\n".join(part for part in parts if part) + "\n"

    # ------------------------------------------------------------------ header

    def facts(self) -> str:
        r = self.r
        if r.seat is not None:
            viewer = escape(
                label("seat_view", self.lang, seat=r.seat, player=player_name(r.seats[r.seat]))
            )
        elif r.open_hands is not None:
            viewer = escape(
                label("open_hand_view", self.lang, delay=r.open_hands.delay,
                      position=r.open_hands.version)
            )  # fmt: skip
        else:
            viewer = self.t("spectator" if r.spectator else "moderator")
        options = (
            f'<span class="mono">{escape(options_text(r.options))}</span>'
            if r.options
            else self.t("defaults")
        )
        facts = [
            (self.t("game"), escape(r.game_id)),
            (self.t("status"), self.t("finished" if r.over else "in_progress")),
            (self.t("events"), str(r.version)),
            (self.t("viewer"), viewer),
            (self.t("options"), options),
        ]
        items = "".join(f"<dt>{k}</dt><dd>{v}</dd>" for k, v in facts)
        return f'<dl class="facts">{items}</dl><p>{self.t("times")}</p>'

    def players(self) -> str:
        rows = [[str(seat), self.player(seat)] for seat in range(len(self.r.seats))]
        return self.section(
            "players", self.t("players"), _table([self.t("seat"), self.t("player")], rows)
        )

    def contents(self) -> str:
        word = self.deal_word()
        links = [f'<li><a href="#deal-{d.number}">{word} {d.number}</a></li>' for d in self.r.deals]
        links += [
            f'<li><a href="#scores">{self.t("scores")}</a></li>',
            f'<li><a href="#fairness">{self.t("fairness")}</a></li>',
        ]
        return f'<nav aria-label="{self.t("contents")}"><ol>{"".join(links)}</ol></nav>'

    @staticmethod
    def section(anchor: str, heading: str, body: str) -> str:
        return f'<section id="{anchor}"><h2>{heading}</h2>{body}</section>'

    # ------------------------------------------------------------------ deals

    def deal(self, deal: DealReplay) -> str:
        start = deal.start
        facts = with_names(self.profile.deal_facts(start.data), self.r.seats)
        intro = (
            f'<p data-position="{start.position}">#{start.position} · {escape(facts)} · '
            f"{self.t('dealt_at')} {_time(start.recorded_at)}</p>"
            f'<p>{self.t("commitment")}: <span class="hash">'
            f"{escape(start.data['commitment'])}</span></p>"
        )
        body = (
            intro
            + f"<h3>{self.t('hands')}</h3>"
            + self.hands(start)
            + f"<h3>{self.t('play')}</h3>"
            + self.steps_table(deal.steps)
        )
        return self.section(f"deal-{deal.number}", f"{self.deal_word()} {deal.number}", body)

    def hands(self, start: Step) -> str:
        """Every hand as dealt (moderator), or the seat's own first cards and the
        others' counts, exactly as the seat's redacted deal event has them."""
        d = start.data
        rows = []
        for seat in range(len(self.r.seats)):
            if "hands" in d:
                cards = f'<span class="cards">{escape(cards_text(d["hands"][seat]))}</span>'
            elif seat == self.r.seat and "hand" in d:
                cards = (
                    f'{self.t("own_hand")}: <span class="cards">'
                    f"{escape(cards_text(d['hand']))}</span>"
                )
            else:
                counts = d.get("hand_counts") or ["?"] * len(self.r.seats)
                cards = self.t("hidden", count=counts[seat])
            rows.append([str(seat), self.player(seat), cards])
        undealt = self.profile.undealt_field
        if undealt in d:
            shown = f'<span class="cards">{escape(cards_text(d[undealt]))}</span>'
        else:
            shown = self.t("hidden", count=d.get(f"{undealt}_count", "?"))
        rows.append(["", self.t(undealt) if undealt in LABELS else escape(undealt), shown])
        head = [self.t("seat"), self.t("player"), self.t("cards")]
        return _table(head, rows, position=start.position)

    def steps_table(self, steps: Sequence[Step]) -> str:
        if not steps:
            return ""
        head = [self.t("position"), self.t("time"), self.t("seat"), self.t("player")]
        head.append(self.t("event"))
        if self.r.moderator:
            head.append(self.t("made_by"))
        rows = "".join(self.step_row(step) for step in steps)
        return f"<table>{_head(head)}<tbody>{rows}</tbody></table>"

    def step_row(self, step: Step) -> str:
        seat = acting_seat(step.data)
        known = seat is not None and 0 <= seat < len(self.r.seats)
        text = with_names(step_text(step.type, step.data, step.game_id), self.r.seats)
        cells = [
            f"<td>{step.position}</td>",
            f"<td>{_time(step.recorded_at)}</td>",
            f"<td>{seat if known else ''}</td>",
            f"<td>{self.player(seat) if known and seat is not None else ''}</td>",
            f"<td>{escape(text)}</td>",
        ]
        if self.r.moderator:
            cells.append(self.made_by(step))
        kind = self.kind(step.type)
        css = f' class="{kind}"' if kind else ""
        return f'<tr data-position="{step.position}"{css}>{"".join(cells)}</tr>'

    def made_by(self, step: Step) -> str:
        """Who sent the command (on the row of its first event): marked when it was not
        the seat's own player (the clock after a timeout, a covering bot)."""
        if step.origin is None or step.position not in self.openers:
            return "<td></td>"
        other = acted_for(step, self.r.seats)
        who = escape(f"{step.origin.actor} ({step.origin.role})")
        return f'<td class="other">{who}</td>' if other else f"<td>{who}</td>"

    def kind(self, type_name: str) -> str:
        p = self.profile
        if p.trick is not None and type_name == p.trick.trick_event:
            return "trick"
        if type_name in (p.score_event, p.result_event):
            return "score"
        return "reveal" if type_name == p.reveal_event else ""

    # ------------------------------------------------------------------ results

    def result(self) -> str:
        key = "result" if self.r.over else "standing"
        text = with_names(self.profile.result_text(self.r.result), self.r.seats)
        return f'<p class="result"><strong>{self.t(key)}:</strong> {escape(text)}</p>'

    def scores(self) -> str:
        """One row per deal: the event that scored it, then the result."""
        rows = []
        for deal in self.r.deals:
            for step in deal.steps:
                if step.type == self.profile.score_event:
                    text = with_names(step_text(step.type, step.data, step.game_id), self.r.seats)
                    rows.append((step.position, [str(deal.number), escape(text)]))
        table = "".join(
            f'<tr data-position="{position}">{"".join(f"<td>{c}</td>" for c in cells)}</tr>'
            for position, cells in rows
        )
        head = _head([self.deal_word(), self.t("score")])
        body = (f"<table>{head}<tbody>{table}</tbody></table>" if rows else "") + self.result()
        return self.section("scores", self.t("scores"), body)

    def open_hands(self) -> str:
        """An open-hand spectator's page: every seat's hand where his view is."""
        shown = self.r.open_hands
        if shown is None:
            return ""
        rows = [
            [str(seat), self.player(seat), f'<span class="cards">{escape(cards_text(hand))}</span>']
            for seat, hand in enumerate(shown.hands)
        ]
        head = [self.t("seat"), self.t("player"), self.t("cards")]
        heading = escape(label("open_hands", self.lang, position=shown.version))
        return self.section("open-hands", heading, _table(head, rows, position=shown.version))

    def fairness(self, proofs: Sequence[DealProof], verified: tuple[bool, str, int] | None) -> str:
        rows = "".join(self.proof_row(p) for p in proofs)
        head = _head(
            [
                self.deal_word(),
                self.t("commitment"),
                self.t("seed"),
                self.t("commitment_holds"),
                self.t("rederived"),
                self.t("derived"),
            ]
        )
        body = f"<p>{self.t('fairness_intro')}</p><table>{head}<tbody>{rows}</tbody></table>"
        if verified is not None:
            ok, check, position = verified
            verdict = (
                self.t("verify_ok")
                if ok
                else self.t("verify_failed", check=check, position=position)
            )
            css = "yes" if ok else "no"
            body += f'<p>{self.t("verified")}: <span class="{css}">{verdict}</span></p>'
        return self.section("fairness", self.t("fairness"), body)

    def proof_row(self, proof: DealProof) -> str:
        seed = (
            f'<span class="hash">{escape(proof.seed)}</span>'
            if proof.seed
            else self.t("not_revealed")
        )
        cells = [
            f"<td>{proof.number}</td>",
            f'<td class="hash">{escape(proof.commitment)}</td>',
            f"<td>{seed}</td>",
            self.verdict(proof.commitment_holds),
            self.verdict(proof.rederived),
            self.verdict(proof.derived),
        ]
        position = proof.revealed_at or proof.position
        return f'<tr data-position="{position}">{"".join(cells)}</tr>'

    def verdict(self, value: bool | None) -> str:
        if value is None:
            return f"<td>{self.t('unknown')}</td>"
        return (
            f'<td class="yes">{self.t("yes")}</td>'
            if value
            else f'<td class="no">{self.t("no")}</td>'
        )


def _time(iso: str) -> str:
    """A `<time>` element: people read date, time and zone; machines get the instant
    (HTML allows at most milliseconds in it)."""
    if not iso:
        return "?"
    machine = datetime.fromisoformat(iso).isoformat(timespec="milliseconds")
    return f'<time datetime="{machine}">{escape(timestamp(iso))}</time>'


def _head(cells: Iterable[str]) -> str:
    return "<thead><tr>" + "".join(f"<th>{c}</th>" for c in cells) + "</tr></thead>"


def _table(head: Sequence[str], rows: Sequence[Sequence[str]], position: int | None = None) -> str:
    """A table of already escaped cells; `position` marks every row with its event."""
    mark = f' data-position="{position}"' if position is not None else ""
    body = "".join(f"<tr{mark}>" + "".join(f"<td>{c}</td>" for c in row) + "</tr>" for row in rows)
    return f"<table>{_head(head)}<tbody>{body}</tbody></table>"
