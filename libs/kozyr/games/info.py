"""What the services around a table know of a game (`GameInfo`): its seats and who
partners whom, the parties that may queue for it, the options a table and a ticket may
carry and their bounds, its computer levels, its names for clients.

Matchmaking seats, balances teams and rates by it; the bots pick a level's player from
it; `kozyr play`, the dispute viewer and the client SDK name and describe the game by
it. None of them names a game (tests/unit/games/test_no_game_names.py): a game is one
package, and its `GameInfo` rides on its plugin (`GamePlugin.info`).

Pure data and pure functions, like the rest of `kozyr.games`: a computer player here sees
the seat's view as the game's view dict and its listed moves as neutral data (the field
name in the `Action` oneof and that message's fields), never a proto.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from kozyr.texts import Texts

Move = tuple[str, Mapping[str, Any]]
"""A listed move as neutral data: its field in the `Action` oneof and that message's fields."""

ComputerPlayer = Callable[[Mapping[str, Any], Sequence[Move]], Move]
"""A computer level's choice: from the seat's view (the game's view dict) and the moves
the view lists for it (never empty), the move it makes — one of them, or on a turn too
wide to list (`GamePlugin.wide_turns`) any legal one. Deterministic, so two bot replicas
reading one view send one move."""

HistoryEntry = tuple[str, Mapping[str, Any]]
"""One event of a seat's history: its type name and its data as redacted for the seat
(the table's `GetHistory(seat)`: nothing of another seat's hidden cards)."""


def never() -> bool:
    """A search budget's clock that never runs out (the world cap alone ends it)."""
    return False


@dataclass(frozen=True, slots=True)
class Decision:
    """What a searching computer player (`Searcher`) is given for one decision: the
    seat's view (the game's view dict) and the moves it lists, the seat, its own redacted
    history of the current deal (or round; empty when it could not be read), the seed of
    the decision's random generator (the same on every replica and retry, so two replicas
    send one move) and its budget — at most `worlds` sampled worlds, and the caller's
    clock, `out_of_time`, asked between worlds (a game reads no clock itself)."""

    view: Mapping[str, Any]
    moves: Sequence[Move]
    seat: int
    history: Sequence[HistoryEntry]
    seed: int
    worlds: int = 1_000
    out_of_time: Callable[[], bool] = never


@dataclass(frozen=True, slots=True)
class Searcher:
    """A level whose player searches (PIMC, `kozyr.games.search`): it needs more than
    the view — the seat's history, a seed and a budget (`Decision`) — and takes time,
    so the bots service reads the history, runs it in a worker and bounds it."""

    choose: Callable[[Decision], Move]


LevelPlayer = ComputerPlayer | Searcher
"""Who plays a computer level: a player on the view alone, or a searching one."""

Announcer = Callable[[Mapping[str, Any], Sequence[Move]], list[Move]]
"""Moves a computer seat makes on its turn before its move, from its view and every
move the view lists (Khözör's true team signals, RULES.md); each is sent on its own."""

LEVELS = ("easy", "normal", "hard")
"""The computer levels of the platform (`kozyr.common.v1.ComputerLevel`), weakest first."""


def first_listed(view: Mapping[str, Any], moves: Sequence[Move]) -> Move:
    """The trivial legal-move player: the first move the view lists (a game lists its
    default first where it has one)."""
    return moves[0]


@dataclass(frozen=True, slots=True)
class GameOption:
    """One field of the game's options message (`CreateTable.options.<game id>`) that a
    table — and, when `ticket`, a queue ticket — may carry.

    A whole-number option (`flag` False) is 0 for "the game's default", else within
    `low`..`high`; a flag is true or false. Matchmaking checks these bounds before a
    ticket is queued (the rules check them again when the table is created).
    """

    name: str
    low: int = 0
    high: int = 0
    flag: bool = False
    ticket: bool = True

    def accepts(self, value: int | bool) -> bool:
        """Whether `value` is one this option may take (0/False: the default)."""
        if self.flag:
            return isinstance(value, bool)
        if isinstance(value, bool) or not isinstance(value, int):
            return False
        return value == 0 or self.low <= value <= self.high


@dataclass(frozen=True, slots=True)
class GameInfo:
    """A game as the services around its tables see it.

    - `name`: its display name in every language; `short`: the word a command line takes
      for it (`kozyr play --game <short>`), the game id is accepted too.
    - `seats`: how many seats a table has; `teams`: the seats that play as one side,
      every seat in exactly one team; empty = every seat plays for itself.
    - `party_max`: the largest party that may queue for it (1 = no parties): at most
      the table, and in a team game a team (a party sits in one team).
    - `options`: what a table's and a ticket's game options may be (`GameOption`).
    - `levels`: the computer levels it offers (a subset of `LEVELS`), each with the
      player that plays it on neutral data: a `ComputerPlayer` on the view alone, or a
      `Searcher` given the seat's history, a seed and a budget too (`Decision`).
    - `announce`: what a computer seat makes known on its turn before its move (moves
      of their own, e.g. Khözör's true team signals); None: nothing.
    - `about`: one line describing the game to a player choosing one.
    - `turn_names`: each kind of turn (`Turn.kind`) by its name for players ("Play a
      card"); a client shows the kind itself for one not named.
    - `choice_names`: the values a move carries that are not cards — the names of the
      wire's enum values ("CONTRACT_SPADES", "SIGNAL_THREE_SET") — by their names for
      players; how a client words such a move.
    - `choices`: the turn kinds whose decision is not about cards, each with every
      choice a client shows on its row, the illegal ones too (3-5-8's six contracts,
      used ones included: the table says why one is refused) — or `()`: the moves the
      view lists (Khözör's opener seats on offer). Any other turn: the hand is the row.
    - `play_ui`: the full name of the module holding the game's own drawing of its
      table in `kozyr play` — `table_lines(view: TableView, lang) -> list[rich Text]`,
      conventionally `kozyr.games.<game>.play_ui` — or "" for kozyr play's drawing of
      any game from its view (`render_any`). A name, not an import: kozyr play imports
      it when it draws the game, and the game's rules never load the terminal's
      libraries (import-linter: games-pure, play-ui-apart).
    - `history_starts`: the event types that begin the part of a seat's history a
      searching player reads (`Decision.history`: the current deal or round — 3-5-8's
      `CardsDealt`, Khözör's `RoundDealt`); empty: the whole history.
    """

    name: Texts
    short: str
    seats: int
    party_max: int
    about: Texts
    teams: tuple[tuple[int, ...], ...] = ()
    options: tuple[GameOption, ...] = ()
    levels: Mapping[str, LevelPlayer] = field(
        default_factory=lambda: dict.fromkeys(LEVELS, first_listed)
    )
    announce: Announcer | None = None
    turn_names: Mapping[str, Texts] = field(default_factory=dict)
    choice_names: Mapping[str, Texts] = field(default_factory=dict)
    choices: Mapping[str, tuple[Move, ...]] = field(default_factory=dict)
    play_ui: str = ""
    history_starts: frozenset[str] = frozenset()

    def __post_init__(self) -> None:
        if self.seats < 1:
            raise ValueError(f"a game needs seats, not {self.seats}")
        if self.teams and sorted(s for team in self.teams for s in team) != list(range(self.seats)):
            raise ValueError(f"teams {self.teams} must hold every seat of {self.seats} once")
        room = self.team_size if self.in_teams else self.seats
        if not 1 <= self.party_max <= room:
            raise ValueError(f"a party of up to {self.party_max} fits no side of {room}")
        unknown = set(self.levels) - set(LEVELS)
        if unknown or not self.levels:
            raise ValueError(f"levels {sorted(self.levels)} must be some of {LEVELS}")

    @property
    def sides(self) -> tuple[tuple[int, ...], ...]:
        """Who plays with whom: the teams, or every seat alone."""
        return self.teams or tuple((seat,) for seat in range(self.seats))

    @property
    def team_size(self) -> int:
        """The seats of the largest side (1 when every seat plays for itself)."""
        return max(len(side) for side in self.sides)

    @property
    def in_teams(self) -> bool:
        """Whether some seats play together (their places are the same)."""
        return self.team_size > 1

    def side_of(self, seat: int) -> int:
        """The index in `sides` of the side `seat` plays for."""
        for index, side in enumerate(self.sides):
            if seat in side:
                return index
        raise ValueError(f"no seat {seat} in a game of {self.seats}")

    def turn_name(self, kind: str, lang: str) -> str:
        """A turn kind's name in `lang` (the kind itself when the game names it not)."""
        texts = self.turn_names.get(kind)
        return texts[lang] if texts is not None else kind

    def option(self, name: str) -> GameOption | None:
        """The option of that name, or None when the game has none."""
        return next((o for o in self.options if o.name == name), None)
