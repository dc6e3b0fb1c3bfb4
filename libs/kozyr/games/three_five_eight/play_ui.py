"""The 3-5-8 table in `kozyr play` (`GameInfo.play_ui`), as one seat sees it, pure: the
deal and its contract, every seat's role, target, tricks, cards, total and contracts
left, the trick on the table with who played what, the last trick, the declarer's talon
and discards, the result.

The game's one module that knows the terminal (rich, the table's proto view, kozyr
play's helpers): kozyr play imports it by its name, and nothing of the game imports it
(import-linter: play-ui-apart), so the rules stay pure."""

from __future__ import annotations

from rich.text import Text

from kozyr.api.table.v1 import views_pb2
from kozyr.cli.play.render import card_text, cards_text, seat_name, seat_state
from kozyr.cli.play.texts import label
from kozyr.games.three_five_eight import texts as tfe_texts
from kozyr.games.three_five_eight.model import Contract, Phase, Role
from kozyr.texts import Lang

CONTRACT_ORDER = ("S", "H", "D", "C", "NT", "MT")
SHORT = {"S": "♠", "H": "♥", "D": "♦", "C": "♣", "NT": "NT", "MT": "MT"}


def contract_name(code: str, lang: Lang) -> str:
    """A contract code of the 3-5-8 view ("S", "NT" …) by its name in `lang`."""
    try:
        return tfe_texts.name(tfe_texts.CONTRACT_NAMES, Contract(code), lang)
    except ValueError:
        return code


def contracts_left(game: views_pb2.ThreeFiveEightView, seat: int) -> list[str]:
    """The contracts `seat` has not declared yet in this game, in the rules' order."""
    used = set(game.contracts_used[seat].contracts) if seat < len(game.contracts_used) else set()
    return [c for c in CONTRACT_ORDER if c not in used]


def header(view: views_pb2.TableView, lang: Lang) -> Text:
    """ "Deal 3/18 · Play · Contract ♥ trump · Trump ♥"."""
    game = view.three_five_eight
    try:
        phase = tfe_texts.name(tfe_texts.PHASE_NAMES, Phase(game.phase), lang)
    except ValueError:
        phase = game.phase
    parts = [f"{label('deal', lang)} {game.deal_number}/{game.deals_total}", phase]
    if game.HasField("contract"):
        parts.append(f"{label('contract', lang)}: {contract_name(game.contract, lang)}")
        trump = SHORT[game.trump] if game.HasField("trump") else label("no_trump", lang)
        parts.append(f"{label('trump', lang)}: {trump}")
    return Text(" · ".join(parts), style="bold")


def seat_lines(view: views_pb2.TableView, lang: Lang) -> list[Text]:
    """One line per seat: name, control and presence, role, tricks of target, cards in
    hand, total points, contracts left."""
    game = view.three_five_eight
    lines = []
    for info in view.seats:
        seat = info.seat
        role = ""
        if seat < len(game.roles) and game.roles[seat]:
            role = tfe_texts.name(tfe_texts.ROLE_NAMES, Role(game.roles[seat]), lang)
        tricks = game.tricks[seat] if seat < len(game.tricks) else 0
        target = (
            f" {label('target', lang)} {game.targets[seat]}" if seat < len(game.targets) else ""
        )
        count = game.hand_counts[seat] if seat < len(game.hand_counts) else 0
        total = game.totals[seat] if seat < len(game.totals) else 0
        left = " ".join(SHORT[c] for c in contracts_left(game, seat))
        lines.append(
            Text.assemble(
                (f"{label('seat', lang)} {seat} {seat_name(view, seat, lang)}", "bold"),
                " [",
                seat_state(info, lang),
                f"] {role} · {label('tricks', lang)} {tricks}{target}",
                f" · {count} {label('cards', lang)}",
                f" · {total} {label('points', lang)} · {label('contracts_left', lang)}: {left}",
            )
        )
    return lines


def trick_lines(view: views_pb2.TableView, lang: Lang) -> list[Text]:
    """The trick on the table (who played what), then the last completed trick."""
    game = view.three_five_eight
    lines = []
    if game.trick:
        played = Text("  ").join(
            Text.assemble(f"{seat_name(view, t.seat, lang)}: ", card_text(t.card, lang))
            for t in game.trick
        )
        lines.append(
            Text.assemble((f"{label('trick', lang)} {game.tricks_played + 1}: ", "bold"), played)
        )
    if game.HasField("last_trick") and game.last_trick.cards:
        last = game.last_trick
        played = Text("  ").join(
            Text.assemble(f"{seat_name(view, t.seat, lang)}: ", card_text(t.card, lang))
            for t in last.cards
        )
        winner = seat_name(view, last.winner, lang)
        lines.append(
            Text.assemble(
                f"{label('last_trick', lang)} {last.number}: ",
                played,
                f" — {label('taken_by', lang)} {winner}",
            )
        )
    lines.extend(exchange_lines(view, lang))
    if game.talon:
        lines.append(Text.assemble(f"{label('talon', lang)}: ", cards_text(game.talon, lang)))
    if game.discards:
        lines.append(Text.assemble(f"{label('discards', lang)}: ", cards_text(game.discards, lang)))
    return lines


def exchange_lines(view: views_pb2.TableView, lang: Lang) -> list[Text]:
    """The exchange's cards this seat gave or got (the others' are hidden from it)."""
    game = view.three_five_eight
    if not game.HasField("exchange"):
        return []
    lines = []
    for step in game.exchange.steps:
        if not step.HasField("given"):
            continue
        giver, receiver = seat_name(view, step.giver, lang), seat_name(view, step.receiver, lang)
        returned = card_text(step.returned, lang) if step.HasField("returned") else Text("…")
        lines.append(
            Text.assemble(
                f"{label('exchange', lang)}: {giver} → {receiver} ",
                card_text(step.given, lang),
                " ← ",
                returned,
            )
        )
    return lines


def last_deal_line(view: views_pb2.TableView, lang: Lang) -> list[Text]:
    """The points each seat scored in the last finished deal."""
    game = view.three_five_eight
    if not game.deal_scores:
        return []
    last = game.deal_scores[-1]
    points = " · ".join(
        f"{seat_name(view, seat, lang)} {value:+d}" for seat, value in enumerate(last.points)
    )
    return [
        Text(f"{label('deal', lang)} {last.deal} ({contract_name(last.contract, lang)}): {points}")
    ]


def result_lines(view: views_pb2.TableView, lang: Lang) -> list[Text]:
    """The final places and totals, once the game is over."""
    game = view.three_five_eight
    if not view.finished or not game.result.totals:
        return []
    lines = [Text(label("game_over", lang), style="bold reverse")]
    order = sorted(range(len(game.result.totals)), key=lambda s: game.result.places[s])
    for seat in order:
        lines.append(
            Text(
                f"{game.result.places[seat]}. {label('place', lang)}: {seat_name(view, seat, lang)}"
                f" — {game.result.totals[seat]} {label('points', lang)}",
                style="bold" if seat in game.result.winners else "",
            )
        )
    return lines


def table_lines(view: views_pb2.TableView, lang: Lang) -> list[Text]:
    """The whole table, top to bottom (the hand is drawn by the screen's hand row)."""
    return [
        header(view, lang),
        *seat_lines(view, lang),
        *trick_lines(view, lang),
        *last_deal_line(view, lang),
        *result_lines(view, lang),
    ]
