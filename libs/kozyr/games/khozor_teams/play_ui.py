"""The Khözör table in `kozyr play` (`GameInfo.play_ui`), as one seat sees it, pure:
round, trump, rounds won per team, the opening team and opener, the eight seats by team
with their cards in hand, the reserve, the pile of the current cycle with who led and
who beat what, the own team's signals, the match's winner.

The game's one module that knows the terminal (rich, the table's proto view, kozyr
play's helpers): kozyr play imports it by its name, and nothing of the game imports it
(import-linter: play-ui-apart), so the rules stay pure."""

from __future__ import annotations

from rich.text import Text

from kozyr.api.table.v1 import views_pb2
from kozyr.cli.play.render import cards_text, catalogue_name, seat_name, seat_state
from kozyr.cli.play.texts import label
from kozyr.games.khozor_teams import texts as khozor_texts
from kozyr.texts import Lang

SUITS = {"S": "♠", "H": "♥", "D": "♦", "C": "♣"}


def team_of(seat: int) -> str:
    """Team A sits on the even seats, team B on the odd ones."""
    return "A" if seat % 2 == 0 else "B"


def header(view: views_pb2.TableView, lang: Lang) -> Text:
    """ "Round 2 · Play · Trump ♥ · Rounds won A 1 – B 0 · A opens · Opener: ana"."""
    game = view.khozor_teams
    parts = [
        f"{label('round', lang)} {game.round}",
        catalogue_name(khozor_texts.PHASE_NAMES, game.phase, lang),
    ]
    if game.HasField("trump"):
        parts.append(f"{label('trump', lang)}: {SUITS.get(game.trump, game.trump)}")
    parts.append(f"{label('wins', lang)}: A {game.wins.get('A', 0)} – B {game.wins.get('B', 0)}")
    if game.HasField("opening_team"):
        parts.append(f"{label('team', lang)} {game.opening_team} {label('opening_team', lang)}")
    if game.HasField("opener"):
        parts.append(f"{label('opener', lang)}: {seat_name(view, game.opener, lang)}")
    return Text(" · ".join(parts), style="bold")


def seat_lines(view: views_pb2.TableView, lang: Lang) -> list[Text]:
    """One line per seat, team A's first: name, control and presence, cards in hand,
    and the signals of the viewer's own team."""
    game = view.khozor_teams
    signals = {s.seat: s for s in game.signals}
    lines = []
    for info in sorted(view.seats, key=lambda i: (team_of(i.seat), i.seat)):
        seat = info.seat
        count = game.hand_counts[seat] if seat < len(game.hand_counts) else 0
        shown = ""
        if seat in signals:
            flags = [
                catalogue_name(khozor_texts.SIGNAL_NAMES, key, lang)
                for key, on in (
                    ("three_set", signals[seat].three_set),
                    ("five_set", signals[seat].five_set),
                )
                if on
            ]
            shown = f" · {label('signals', lang)}: {', '.join(flags) or '—'}"
        lines.append(
            Text.assemble(
                (f"{label('team', lang)} {team_of(seat)} · {seat_name(view, seat, lang)}", "bold"),
                " [",
                seat_state(info, lang),
                f"] {count} {label('cards', lang)}{shown}",
            )
        )
    return lines


def pile_lines(view: views_pb2.TableView, lang: Lang) -> list[Text]:
    """The reserve, then the current cycle's pile, play by play."""
    game = view.khozor_teams
    lines = [
        Text(
            f"{label('reserve', lang)}: {game.reserve_count} {label('cards', lang)}"
            f" · {game.sleeping_count} {label('sleeping', lang)}"
        )
    ]
    if game.pile:
        lines.append(Text(f"{label('pile', lang)}:", style="bold"))
        for play in game.pile:
            verb = label("lead" if play.kind == "lead" else "beat", lang)
            lines.append(
                Text.assemble(
                    f"  {seat_name(view, play.seat, lang)} {verb} ", cards_text(play.cards, lang)
                )
            )
    return lines


def result_lines(view: views_pb2.TableView, lang: Lang) -> list[Text]:
    """The match's winner and the rounds won, once it is over."""
    game = view.khozor_teams
    if not view.finished or not game.HasField("match_winner"):
        return []
    return [
        Text(label("game_over", lang), style="bold reverse"),
        Text(
            f"{label('match_winner', lang, team=game.match_winner)} · "
            f"{label('wins', lang)}: A {game.wins.get('A', 0)} – B {game.wins.get('B', 0)}",
            style="bold",
        ),
    ]


def table_lines(view: views_pb2.TableView, lang: Lang) -> list[Text]:
    return [
        header(view, lang),
        *seat_lines(view, lang),
        *pile_lines(view, lang),
        *result_lines(view, lang),
    ]
