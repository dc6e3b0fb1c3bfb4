"""A game is one plugin: everything the table platform knows of a game, in one typed value.

Each game package builds its `GamePlugin` next to its rules and registers it on import
(like OpenSpiel's `pyspiel.register_game`); the table library, the table service, the
auditor and the client look games up here and hold no game-specific code. Adding a game
is writing its rules and its plugin — not one line of the service changes (the test-only
game of tests/support proves it).

The plugin speaks the wire only as neutral data, because this package imports no I/O
library and nothing of kozyr but itself (no protobuf): a move is the name of its field in
the `Action` oneof plus that message's fields as a mapping (`Fields`), a view is a dict
plus the full name of the proto message it fills, table options are the fields of the
CreateTable options message named after the game id.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar

from kozyr.games.cards import Card, CardParseError, parse_card
from kozyr.games.decider import Decider
from kozyr.games.errors import GameError
from kozyr.games.info import GameInfo

S = TypeVar("S")
C = TypeVar("C")
E = TypeVar("E")

Fields = Mapping[str, Any]
"""A proto message as neutral data: field name → value; a nested message is a mapping,
a repeated field a list, an enum its value's name (e.g. "CONTRACT_SPADES")."""

Text = Callable[[Mapping[str, Any]], str]
"""One line of the auditor's replay, from an event's data as the viewer saw it."""


class MalformedAction(GameError):
    """A move that does not even say something (an unknown card text, an enum value out of
    range): the service refuses it as INVALID_ARGUMENT before any rule runs."""

    def __init__(self, reason: str, message: str) -> None:
        self.reason = reason
        super().__init__(message)


def card_of(fields: Fields) -> Card:
    """A `kozyr.common.v1.Card` ({"code": "10H"}) → Card, or MalformedAction."""
    code = str(fields.get("code", ""))
    try:
        return parse_card(code)
    except CardParseError:
        shown = code if len(code) <= 8 else f"{code[:8]}…"
        raise MalformedAction("INVALID_CARD", f"{shown!r} is not a card") from None


def cards_of(items: Any, most: int) -> tuple[Card, ...]:
    """A repeated `Card` field → cards: 1 to `most` of them, or MalformedAction."""
    if not items or len(items) > most:
        raise MalformedAction("INVALID_CARD_COUNT", f"a move names 1 to {most} cards")
    return tuple(card_of(item) for item in items)


def card_fields(card: Card) -> dict[str, Any]:
    """The `Card` message of `card` as neutral data."""
    return {"code": str(card)}


def cards_text(cards: Any) -> str:
    """Cards for a replay line: "AS 10H", or "-" for none."""
    return " ".join(cards) if cards else "-"


def hidden_or(data: Mapping[str, Any], key: str, count_key: str) -> str:
    """The cards under `key`, or their count where the viewer did not see them."""
    cards = data.get(key)
    if isinstance(cards, list):
        return cards_text(cards)
    count = data.get(count_key, "?")
    return f"{count} card" if count == 1 else f"{count} cards"


def seat_list(values: Any) -> str:
    """Per-seat figures for a replay line: "1 / 2 / 3"."""
    return " / ".join(str(v) for v in values)


@dataclass(frozen=True, slots=True)
class Dealt:
    """A deal began; its `commitment` (SHA-256 of the seed, hex) is public at once."""

    commitment: str


@dataclass(frozen=True, slots=True)
class Revealed:
    """The last deal ended; its `seed` is public now (docs/fair-deal.md)."""

    seed: bytes


FairDeal = Dealt | Revealed | None


@dataclass(frozen=True, slots=True)
class CardPlaces:
    """Where every dealt card of a game is, and who may know it — what the generic
    property suite checks every game against (conservation, no leak in any view).

    `hands[s]`: seat s's hand, hidden from the other seats; `hidden`: face down and
    nobody's to see (a talon, a reserve, sleeping cards); `public`: face up (tricks, a
    pile). `seen[s]`: cards outside seat s's hand that s may know all the same (a card
    it gave away, its own discards). Empty everywhere before the first deal.
    """

    hands: tuple[tuple[Card, ...], ...]
    hidden: tuple[Card, ...] = ()
    public: tuple[Card, ...] = ()
    seen: tuple[tuple[Card, ...], ...] = ()

    def all(self) -> list[Card]:
        return [*(c for hand in self.hands for c in hand), *self.hidden, *self.public]


@dataclass(frozen=True, slots=True)
class TrickText:
    """A game with tricks: the event of one card played and the event of a trick taken
    (the replay lists a deal's tricks; both have their lines in `step_texts`)."""

    play_event: str
    trick_event: str


@dataclass(frozen=True, slots=True)
class AuditProfile(Generic[C]):
    """What the auditor (`kozyr.table.audit`) must know of a game beyond its decider.

    `deal_event` is the type of the game's deal event, `number_field` the field that
    numbers deals in it and in the reveal event (`reveal_event`), `undealt_field` the
    cards left over (talon/reserve), `deal_word` what texts call a deal. `move_of` names
    the player command that must have produced an event which opens a move (the first
    event `decide` returns for it); None for events that only follow another one.
    `result_claim` projects `result(state)` onto the fields of the recorded final result
    event. The texts: one formatter per event type (`step_texts`), the facts of a deal's
    header (`deal_facts`), the result line (`result_text`), tricks (`trick`, optional).
    `score_event` is the event that scores a deal (a dispute viewer lists them as the
    deal's score; "" for a game without one).
    """

    deal_event: str
    number_field: str
    undealt_field: str
    result_event: str
    deal_from_seed: Callable[[bytes], tuple[tuple[tuple[Any, ...], ...], tuple[Any, ...]]]
    move_of: Callable[[Any], C | None]
    result_claim: Callable[[Mapping[str, Any]], dict[str, Any]]
    deal_word: str
    step_texts: Mapping[str, Text]
    deal_facts: Text
    result_text: Text
    reveal_event: str = "DealSeedRevealed"
    trick: TrickText | None = None
    score_event: str = ""


def _set_fields(fields: Fields) -> dict[str, Any]:
    """Proto3's convention: a zero, empty or false field was not given (the default)."""
    return {k: v for k, v in fields.items() if v not in (0, "", False, None, [], {})}


def _same(view: Mapping[str, Any]) -> Mapping[str, Any]:
    return view


@dataclass(frozen=True, slots=True)
class GamePlugin(Generic[S, C, E]):
    """One game, as the platform sees it. mypy checks `rules` against `Decider` with the
    game's own state, command and event types, and every hook below against them.

    - `id`: the game id (the decider's GAME_ID), also the name of the game's field in the
      CreateTable `options` oneof; `code`: its number in `kozyr.common.v1.Game` (proto3
      enums are open: a game not in the enum yet still has a number).
    - `options_from_wire`: the fields of the game's options message → the options
      mapping `rules.initial_state` parses, validates and completes with defaults.
    - `commands`: the `Action` oneof's field names this game accepts, each with the
      builder of the command from (seat, that message's fields); builders raise
      MalformedAction. `action_of`: a player command → (field name, fields), for the
      legal moves a view lists.
    - `view_message`: the full name of the proto message of `rules.view`'s dict, after
      `view_to_wire` (for a shape protobuf cannot hold). `view_to_wire` converts key by
      key: a view's part converts as it does inside the whole view (the table converts
      each viewer's `seat_view` part alone, and keeps no copy of the shared part).
    - `seat_view`: the keys of `rules.view(state, seat)` that differ from viewer to
      viewer, as that viewer sees them (None: the spectator's), when the rest of the
      view is the same for every viewer: `view(state, seat) == view(state, None) |
      seat_view(state, seat)` (property-tested). The table then builds the rest once per
      version for all its viewers. None: each viewer's view is built whole.
    - `wide_turns`: turn kinds whose legal moves are too many to list: views offer the
      default move there; any other legal choice is still accepted.
    - `fair_deal`: what an event means for the table's public deal records.
    - `audience` (who may see an event, None: everyone) and `tapped_by` (the seat whose
      at-will tap an event is, for the tap limit): optional hooks, None when the game
      has no private events or taps.
    - `decided_by`: the seat whose turn an event takes (its decision: a contract, a
      card played, a pile picked up), for the table's per-seat turn tally (docs/leavers.md);
      None for the table's own consequences. Optional: a game without it tallies nothing.
    - `deck` and `card_places`: the game's cards and where they are in a state (see
      `CardPlaces`); the invariants every game is property-tested against.
    - `info`: what the services around the table know of the game — seats, teams,
      parties, options and their bounds, computer levels, names (`kozyr.games.info`).
    """

    id: str
    code: int
    rules: Decider[S, C, E]
    commands: Mapping[str, Callable[[int, Fields], C]]
    action_of: Callable[[C], tuple[str, dict[str, Any]]]
    view_message: str
    fair_deal: Callable[[E], FairDeal]
    audit: AuditProfile[C]
    info: GameInfo
    options_from_wire: Callable[[Fields], dict[str, Any]] = _set_fields
    view_to_wire: Callable[[Mapping[str, Any]], Mapping[str, Any]] = _same
    seat_view: Callable[[S, int | None], dict[str, Any]] | None = None
    wide_turns: frozenset[str] = field(default_factory=frozenset)
    audience: Callable[[E], tuple[int, ...] | None] | None = None
    tapped_by: Callable[[E], int | None] | None = None
    decided_by: Callable[[E], int | None] | None = None
    deck: tuple[Card, ...] = ()
    card_places: Callable[[S], CardPlaces] | None = None

    def command_of(self, kind: str, seat: int, fields: Fields) -> C:
        """The command of an `Action` whose oneof field `kind` holds `fields`."""
        builder = self.commands.get(kind)
        if builder is None:
            raise MalformedAction("WRONG_GAME_ACTION", f"{kind} is not a move of {self.id}")
        return builder(seat, fields)

    def listed_moves(self, state: S, seat: int) -> list[C]:
        """The moves a view lists for `seat`: every legal one, or only the default on a
        turn too wide to list (`wide_turns`)."""
        turn = self.rules.turn(state)
        if turn.kind in self.wide_turns and seat in turn.seats:
            return [self.rules.default_command(state, seat)]
        return self.rules.legal_commands(state, seat)


AnyPlugin = GamePlugin[Any, Any, Any]
"""A plugin whose types the caller does not know (a table of any game)."""

_BY_ID: dict[str, AnyPlugin] = {}
_BY_CODE: dict[int, AnyPlugin] = {}


class UnknownGame(KeyError):
    """A game id or code that no registered plugin has."""


def register(plugin: AnyPlugin) -> None:
    """Make a game playable; registering the same plugin again is a no-op (re-imports)."""
    for known in (_BY_ID.get(plugin.id), _BY_CODE.get(plugin.code)):
        if known is not None and known is not plugin:
            raise ValueError(
                f"{plugin.id} (code {plugin.code}) clashes with {known.id} (code {known.code})"
            )
    if plugin.id != plugin.rules.GAME_ID:
        raise ValueError(f"plugin {plugin.id!r} wraps the rules of {plugin.rules.GAME_ID!r}")
    _BY_ID[plugin.id] = plugin
    _BY_CODE[plugin.code] = plugin


def plugin_by_id(game_id: str) -> AnyPlugin:
    try:
        return _BY_ID[game_id]
    except KeyError:
        raise UnknownGame(game_id) from None


def plugin_by_code(code: int) -> AnyPlugin:
    try:
        return _BY_CODE[code]
    except KeyError:
        raise UnknownGame(code) from None


def registered() -> tuple[AnyPlugin, ...]:
    """Every registered game, by id."""
    return tuple(_BY_ID[game_id] for game_id in sorted(_BY_ID))


def plugin_by_word(word: str) -> AnyPlugin:
    """The game a person typed: its id or its short word (`GameInfo.short`)."""
    for plugin in registered():
        if word in (plugin.id, plugin.info.short):
            return plugin
    raise UnknownGame(word)
