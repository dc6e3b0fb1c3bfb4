"""Did a seat ever receive something it may not know? (RULES.md "what every seat may know")

The judge is the admin's unredacted history, read as raw event data: a small model of
its own (not the engines' `view`/`redact`, which are what is under test) replays it and
says, at every version, which cards each seat privately holds, which cards are public,
which seeds are still secret and which signals each team has set. Then everything a
seat received — views from its watch stream and its SubmitAction replies, its own
history, its refusals' texts — is checked against the model at that item's version:

* every card named anywhere in it is one the seat may know then (3-5-8: cards it
  privately held or was shown in this deal, and cards played in public; Khözör: its
  own hand and the current cycle's pile — never the reserve, a sleeping card or
  another hand);
* the fields that show private things show exactly the seat's own: its hand, the
  declarer's talon and discards, its own exchange steps, its own team's signals;
* no deal seed appears before the version of its `DealSeedRevealed`, and no server
  seed (seed scheme 2, docs/fair-deal.md §9) before its `ServerSeedRevealed`;
* its history holds every event except, in Khözör, the other team's signals, and
  Khözör's history never names a card (a named card might later fall asleep);
* versions are the seat's own (docs/api.md, "Versions"): a seat counts only the events
  it may see, so its history is numbered 1, 2, 3 … without a gap and no number it gets
  changes with the other team's signals. Items are matched to the admin history by
  that numbering (`as_seen_by`).

Data is plain JSON (views through `MessageToDict`), so a test can hand the checker a
deliberately leaky dict and see it caught (tests/e2e/test_e2e_leak_checker.py).
"""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Literal, Protocol

from google.protobuf import json_format

from kozyr.api.table.v1 import table_service_pb2 as pb
from kozyr.api.table.v1 import views_pb2
from kozyr.games.cards import JokerColor, Rank, Suit, card, joker
from kozyr.games.translations import card_name
from kozyr.texts import Lang
from tests.support.tables import moves_back

CARD = re.compile(r"(?:10|[2-9JQKA])[CDHS]|JK-(?:red|black|gray)")
"""A card in the text format of kozyr.common.v1.Card, as a whole JSON string."""
CARD_IN_TEXT = re.compile(
    r"(?<![A-Za-z0-9])(10|[2-9JQKA])([CDHS♣♦♥♠])(?![A-Za-z0-9])|JK-(?:red|black|gray)"
)
"""A card inside free text (error messages write suits as letters or symbols)."""
SUIT_LETTER = {"♣": "C", "♦": "D", "♥": "H", "♠": "S"}
LOCAL_NAMES = {
    name: str(c)
    for c in [*(card(r, s) for r in Rank for s in Suit), *map(joker, JokerColor)]
    for name in {card_name(c, lang) for lang in Lang}
    if not CARD_IN_TEXT.fullmatch(name)
}
"""Cards as player texts name them in Romanian and Italian ("D♠", "jolly rosso"), which
CARD_IN_TEXT does not read, → their letter form ("QS", "JK-red")."""
LOCAL_NAME_IN_TEXT = re.compile(
    "|".join(
        rf"(?<![A-Za-z0-9]){re.escape(name)}(?![A-Za-z0-9])"
        for name in sorted(LOCAL_NAMES, key=len, reverse=True)
    )
)
THREE_FIVE_EIGHT = "three_five_eight"
KHOZOR_TEAMS = "khozor_teams"
SIGNAL_EVENTS = frozenset({"SignalSet", "SignalCleared"})
MOVE_EVENTS = {
    THREE_FIVE_EIGHT: frozenset(
        {"ContractChosen", "CardExchanged", "CardsDiscarded", "CardPlayed"}
    ),
    KHOZOR_TEAMS: frozenset({"OpenerConfirmed", "CardsLed", "CardsBeaten", "PilePickedUp"}),
}
"""A player's moves, per game, as this judge knows them from the rules: what the
open-hand delay counts (docs/open-hand.md) — never a signal tap, a deal or a seat event."""

Kind = Literal["view", "history", "refusal", "public", "page"]
"""A "page" is the text of a dispute viewer's page that quotes one log position."""


@dataclass(frozen=True)
class LoggedEvent:
    """One event of the admin's (unredacted) history."""

    version: int
    type: str
    data: dict[str, Any]


@dataclass(frozen=True)
class Seen:
    """One thing a seat received, as plain JSON, and the table version it reflects."""

    kind: Kind
    version: int
    data: Any
    where: str


def logged_events(history: Iterable[pb.HistoryEvent]) -> list[LoggedEvent]:
    return [LoggedEvent(e.version, e.type, json.loads(e.data_json)) for e in history]


def seen_view(view: views_pb2.TableView, source: str) -> Seen:
    data = json_format.MessageToDict(view, preserving_proto_field_name=True)
    return Seen("view", view.version, data, f"{source} view v{view.version}")


def seen_history(event: pb.HistoryEvent) -> Seen:
    data = {"type": event.type, "data": json.loads(event.data_json)}
    return Seen("history", event.version, data, f"history v{event.version} {event.type}")


def seen_refusal(acted_on: int, texts: Sequence[str], reason: str | None) -> Seen:
    return Seen("refusal", acted_on, list(texts), f"refusal {reason} (acting on v{acted_on})")


def seen_public(data: dict[str, Any], where: str) -> Seen:
    """A public table event (plain JSON), judged as seen at version 0 by a spectator:
    the strictest bar — no card at all, and no deal's seed, is allowed in it."""
    return Seen("public", 0, data, where)


def seen_page(position: int, texts: list[str], where: str) -> Seen:
    """Text of a `kozyr replay --html` page quoting log position `position` (0: text
    that quotes none), judged as free text at that position (`log_numbers`)."""
    return Seen("page", position, texts, where)


def strings(value: Any) -> Iterator[str]:
    """Every string value inside JSON data (map keys are names, not values)."""
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for item in value.values():
            yield from strings(item)
    elif isinstance(value, list | tuple):
        for item in value:
            yield from strings(item)


def cards_in(value: Any) -> list[str]:
    """Every card named in structured data (a whole string that is a card)."""
    return [s for s in strings(value) if CARD.fullmatch(s)]


def cards_in_text(texts: Iterable[str]) -> list[str]:
    """Every card written inside free texts, in the letter form ("10♥" → "10H"), the
    localised names included ("D♠" → "QS", "joker roșu" → "JK-red")."""
    found: list[str] = []
    for text in texts:
        found.extend(LOCAL_NAMES[m.group(0)] for m in LOCAL_NAME_IN_TEXT.finditer(text))
        for match in CARD_IN_TEXT.finditer(text):
            if match.group(1) is None:
                found.append(match.group(0))
            else:
                found.append(match.group(1) + SUIT_LETTER.get(match.group(2), match.group(2)))
    return found


class Knowledge(Protocol):
    """What each seat may know at the current point of the admin history."""

    def apply(self, event: LoggedEvent) -> None: ...

    def allowed_cards(self, seat: int | None) -> set[str]: ...

    def view_problems(self, seat: int | None, view: dict[str, Any]) -> list[str]: ...

    def history_problems(self, seat: int | None, event: dict[str, Any]) -> list[str]: ...

    def card_owner(self, card: str) -> str: ...

    def open_hands(self) -> list[Counter[str]]: ...


def _multiset(cards: Iterable[str]) -> Counter[str]:
    return Counter(cards)


def _positive(counter: Counter[str]) -> Counter[str]:
    return +counter


# ============================================================================= 3-5-8


@dataclass
class ThreeFiveEightKnowledge:
    """Per deal: each seat's hand as it may see it, what it has seen, what is public."""

    visible: list[Counter[str]] = field(default_factory=lambda: [Counter() for _ in range(3)])
    hidden: list[Counter[str]] = field(default_factory=lambda: [Counter() for _ in range(3)])
    known: list[set[str]] = field(default_factory=lambda: [set() for _ in range(3)])
    public: set[str] = field(default_factory=set)
    talon: list[str] = field(default_factory=list)
    talon_for: dict[int, list[str]] = field(default_factory=dict)
    discards_for: dict[int, list[str]] = field(default_factory=dict)
    steps: list[dict[str, Any]] = field(default_factory=list)
    seed: str | None = None
    revealed: bool = False

    def apply(self, event: LoggedEvent) -> None:
        d = event.data
        match event.type:
            case "CardsDealt":
                hands: list[list[str]] = d["hands"]
                self.visible = [_multiset(h[:6]) for h in hands]
                self.hidden = [_multiset(h[6:]) for h in hands]
                self.known = [set(h[:6]) for h in hands]
                self.public = set()
                self.talon = list(d["talon"])
                self.talon_for, self.discards_for, self.steps = {}, {}, []
                self.seed, self.revealed = d["seed"], False
            case "HandsCompleted":
                for seat, rest in enumerate(d["rests"]):
                    self.visible[seat].update(rest)
                    self.hidden[seat].subtract(rest)
                    self.known[seat].update(rest)
            case "CardExchanged":
                giver, receiver = d["giver"], d["receiver"]
                given, returned = d["given"], d["returned"]
                self._move(giver, receiver, given)
                self._move(receiver, giver, returned)
                self.known[giver].add(returned)
                self.known[receiver].add(given)
                self.steps.append(d)
            case "TalonTaken":
                self.visible[d["seat"]].update(d["cards"])
                self.known[d["seat"]].update(d["cards"])
                self.talon_for[d["seat"]] = list(d["cards"])
                self.talon = []
            case "CardsDiscarded":
                self.visible[d["seat"]].subtract(d["cards"])
                self.discards_for[d["seat"]] = list(d["cards"])
            case "CardPlayed":
                self.visible[d["seat"]][d["card"]] -= 1
                self.public.add(d["card"])
            case "DealSeedRevealed":
                self.revealed = self.revealed or d["seed"] == self.seed

    def _move(self, source: int, target: int, card: str) -> None:
        self.visible[source][card] -= 1
        self.visible[target][card] += 1

    def allowed_cards(self, seat: int | None) -> set[str]:
        return self.public if seat is None else self.known[seat] | self.public

    def open_hands(self) -> list[Counter[str]]:
        """Every seat's whole hand (what an open-hand spectator is shown)."""
        return [_positive(v + h) for v, h in zip(self.visible, self.hidden, strict=True)]

    def card_owner(self, card: str) -> str:
        for seat in range(3):
            if self.visible[seat][card] > 0 or self.hidden[seat][card] > 0:
                return f"seat {seat}'s hand"
        if card in self.talon:
            return "the talon"
        for seat, cards in self.discards_for.items():
            if card in cards:
                return f"seat {seat}'s discards"
        return "no hand of this deal"

    def view_problems(self, seat: int | None, view: dict[str, Any]) -> list[str]:
        game = view.get(THREE_FIVE_EIGHT, {})
        problems: list[str] = []
        own = _positive(self.visible[seat]) if seat is not None else Counter()
        if _multiset(game.get("hand", [])) != own:
            problems.append(f"hand {sorted(game.get('hand', []))} is not its own {sorted(own)}")
        for key, owned in (("talon", self.talon_for), ("discards", self.discards_for)):
            shown = _multiset(game.get(key, []))
            allowed = _multiset(owned.get(seat, [])) if seat is not None else Counter()
            if shown and shown != allowed:
                problems.append(f"{key} {sorted(shown)} shown (its own: {sorted(allowed)})")
        exchange = game.get("exchange") or {}
        for index, step in enumerate(exchange.get("steps") or []):
            problems += self._step_problems(seat, index, step)
        shown_seed = game.get("deal_seed")
        if shown_seed and not (self.revealed and shown_seed == self.seed):
            problems.append("deal_seed shown before its DealSeedRevealed")
        return problems

    def _step_problems(self, seat: int | None, index: int, step: dict[str, Any]) -> list[str]:
        if index >= len(self.steps):
            return [f"exchange step {index + 1} is not in the log yet"]
        logged = self.steps[index]
        party = seat in (logged["giver"], logged["receiver"])
        problems = []
        for key in ("given", "returned"):
            shown = step.get(key)
            if shown and not party:
                problems.append(f"exchange step {index + 1}: {key} card {shown} of other seats")
            elif shown and shown != logged[key]:
                problems.append(f"exchange step {index + 1}: {key} {shown} != {logged[key]}")
        return problems

    def history_problems(self, seat: int | None, event: dict[str, Any]) -> list[str]:
        return []


# ============================================================================= Khözör


@dataclass
class KhozorKnowledge:
    """Per round: every hand, the reserve, the pile of the cycle, sleeping cards, signals."""

    hands: list[Counter[str]] = field(default_factory=lambda: [Counter() for _ in range(8)])
    reserve: list[str] = field(default_factory=list)
    pile: list[tuple[int, list[str]]] = field(default_factory=list)
    sleeping: set[str] = field(default_factory=set)
    signals: dict[int, dict[str, bool]] = field(default_factory=dict)
    seed: str | None = None
    revealed: bool = False

    def apply(self, event: LoggedEvent) -> None:
        d = event.data
        match event.type:
            case "RoundDealt":
                self.hands = [_multiset(h) for h in d["hands"]]
                self.reserve = list(d["reserve"])
                self.pile, self.sleeping = [], set()
                self.seed, self.revealed = d["seed"], False
            case "CardsLed" | "CardsBeaten":
                self.hands[d["seat"]].subtract(d["cards"])
                self.pile.append((d["seat"], list(d["cards"])))
            case "PilePickedUp":
                self.hands[d["seat"]].update(d["cards"])
                self.pile = []
            case "ReserveDrawn":
                self.hands[d["seat"]].update(d["cards"])
                for card in d["cards"]:
                    self.reserve.remove(card)
            case "CycleSlept":
                self.sleeping.update(self._pile_cards())
                self.pile = []
            case "SignalSet" | "SignalCleared":
                row = self.signals.setdefault(d["seat"], {"three_set": False, "five_set": False})
                row[d["kind"]] = event.type == "SignalSet"
            case "DealSeedRevealed":
                self.revealed = self.revealed or d["seed"] == self.seed

    def _pile_cards(self) -> list[str]:
        return [card for _, cards in self.pile for card in cards]

    def allowed_cards(self, seat: int | None) -> set[str]:
        own = set(_positive(self.hands[seat])) if seat is not None else set()
        return own | set(self._pile_cards())

    def open_hands(self) -> list[Counter[str]]:
        """Every seat's hand (what an open-hand spectator is shown)."""
        return [_positive(h) for h in self.hands]

    def card_owner(self, card: str) -> str:
        if card in self.reserve:
            return "the reserve"
        if card in self.sleeping:
            return "the sleeping cards"
        for seat in range(8):
            if self.hands[seat][card] > 0:
                return f"seat {seat}'s hand"
        return "no hand of this round"

    def view_problems(self, seat: int | None, view: dict[str, Any]) -> list[str]:
        game = view.get(KHOZOR_TEAMS, {})
        problems: list[str] = []
        own = _positive(self.hands[seat]) if seat is not None else Counter()
        if _multiset(game.get("hand", [])) != own:
            problems.append(f"hand {sorted(game.get('hand', []))} is not its own {sorted(own)}")
        pile = [(p.get("seat", 0), list(p.get("cards", []))) for p in game.get("pile", [])]
        if pile != self.pile:
            problems.append(f"pile {pile} is not the cycle's {self.pile}")
        for row in game.get("signals", []):
            problems += self._signal_problems(seat, row)
        shown_seed = game.get("deal_seed")
        if shown_seed and not (self.revealed and shown_seed == self.seed):
            problems.append("deal_seed shown before its DealSeedRevealed")
        return problems

    def _signal_problems(self, seat: int | None, row: dict[str, Any]) -> list[str]:
        signaller = int(row.get("seat", 0))
        if seat is None or signaller % 2 != seat % 2:
            return [f"signals of seat {signaller}, not of its team"]
        logged = self.signals.get(signaller, {"three_set": False, "five_set": False})
        shown = {kind: bool(row.get(kind, False)) for kind in ("three_set", "five_set")}
        return [] if shown == logged else [f"signals of seat {signaller} {shown} != {logged}"]

    def history_problems(self, seat: int | None, event: dict[str, Any]) -> list[str]:
        problems = []
        if event["type"] in SIGNAL_EVENTS:
            signaller = event["data"]["seat"]
            if seat is None or signaller % 2 != seat % 2:
                problems.append(f"a signal of seat {signaller}, not of its team")
        named = cards_in(event["data"])
        if named:
            problems.append(f"history names cards {named}")
        return problems


MODELS: dict[str, type[ThreeFiveEightKnowledge] | type[KhozorKnowledge]] = {
    THREE_FIVE_EIGHT: ThreeFiveEightKnowledge,
    KHOZOR_TEAMS: KhozorKnowledge,
}


# ============================================================================= the check


def deal_seeds(admin: Sequence[LoggedEvent]) -> dict[str, int]:
    """Every secret seed → the version of its reveal (a huge number if never revealed):
    each deal's seed, and under seed scheme 2 each server seed (a seat that learnt one
    before its deal could steer that deal with its client seed)."""
    seeds = {e.data["seed"]: 1 << 62 for e in admin if e.type in ("CardsDealt", "RoundDealt")}
    seeds |= {e.data["server_seed"]: 1 << 62 for e in admin if e.type == "ServerSeedCommitted"}
    for event in admin:
        revealed = event.data.get("seed") if event.type == "DealSeedRevealed" else None
        if event.type == "ServerSeedRevealed":
            revealed = event.data["server_seed"]
        if revealed in seeds:
            seeds[revealed] = min(seeds[revealed], event.version)
    return seeds


def shown_to(game: str, seat: int | None, event: LoggedEvent) -> bool:
    """Whether `seat` (None: a spectator) may see the event at all."""
    if game != KHOZOR_TEAMS or event.type not in SIGNAL_EVENTS:
        return True
    return seat is not None and event.data["seat"] % 2 == seat % 2


def as_seen_by(game: str, admin: Sequence[LoggedEvent], seat: int | None) -> list[LoggedEvent]:
    """The admin history numbered as `seat` counts versions: each event gets the number
    of events up to it that the seat may see (one it may not see shares the number of
    the last one it may: the seat's knowledge is the same either side of it)."""
    count = 0
    numbered = []
    for event in sorted(admin, key=lambda e: e.version):
        count += shown_to(game, seat, event)
        numbered.append(replace(event, version=count))
    return numbered


def find_leaks(
    game: str,
    admin: Sequence[LoggedEvent],
    seat: int | None,
    seen: Iterable[Seen],
    *,
    log_numbers: bool = False,
) -> list[str]:
    """Every problem with what `seat` (None: a spectator) received; [] when nothing leaked.

    Items carry the seat's own version numbers, or the log's with `log_numbers` (what a
    moderator's tool shows)."""
    knowledge: Knowledge = MODELS[game]()
    ordered = sorted(admin, key=lambda e: e.version)
    if not log_numbers:
        ordered = as_seen_by(game, ordered, seat)
    seeds = deal_seeds(ordered)
    applied = 0
    problems: list[str] = []
    for item in sorted(seen, key=lambda s: s.version):
        while applied < len(ordered) and ordered[applied].version <= item.version:
            knowledge.apply(ordered[applied])
            applied += 1
        problems += [f"{item.where}: {p}" for p in _problems(knowledge, seeds, seat, item)]
    return problems


def _problems(
    knowledge: Knowledge, seeds: dict[str, int], seat: int | None, item: Seen
) -> list[str]:
    problems = []
    text = "\n".join(strings(item.data)).lower()
    problems += [f"seed of a deal not yet revealed: {seed[:12]}…" for seed, revealed in
                 seeds.items() if revealed > item.version and seed in text]  # fmt: skip
    if item.kind in ("refusal", "public", "page"):
        named = cards_in_text(strings(item.data))  # a card anywhere, even inside a text
    else:
        named = cards_in(item.data)
    allowed = knowledge.allowed_cards(seat)
    problems += [
        f"card {card} it may not know (it is in {knowledge.card_owner(card)})"
        for card in dict.fromkeys(named)
        if card not in allowed
    ]
    if item.kind == "view":
        shown_seat = item.data.get("seat")
        if shown_seat != seat:
            problems.append(f"a view for seat {shown_seat}")
        problems += knowledge.view_problems(seat, item.data)
    elif item.kind == "history":
        problems += knowledge.history_problems(seat, item.data)
    return problems


def history_gaps(
    game: str, admin: Sequence[LoggedEvent], seat: int | None, history: Iterable[int]
) -> list[str]:
    """A seat's history must list every event but, in Khözör, the other team's signals,
    numbered 1, 2, 3 … as the seat counts (no gap where a hidden event is)."""
    shown = [e for e in admin if shown_to(game, seat, e)]
    expected = list(range(1, len(shown) + 1))
    got = list(history)
    if got == expected:
        return []
    missing = sorted(set(expected) - set(got))
    extra = sorted(set(got) - set(expected))
    return [f"history versions differ: missing {missing[:10]}, extra {extra[:10]}"]


def find_open_hand_leaks(
    game: str,
    admin: Sequence[LoggedEvent],
    delay: int,
    seen: Iterable[Seen],
    *,
    finished_at: int = 0,
) -> list[str]:
    """Every problem with what an open-hand spectator of a table with `delay` received
    (docs/open-hand.md): a card may appear only once it has stayed where it is for
    `delay` players' moves.

    Each item is a view (plain JSON) whose `version` is the table's live log version
    when it was received. The view must show a log version from before the move `delay`
    moves back from that (`open_hand_limit`),
    every seat's hand exactly as the admin's history has it at the version it shows, no
    other card but the pile's, and otherwise be a spectator's view of that version.
    `finished_at`: the log version that ended the game (0: not over), which a view may
    show as soon as it exists: the delay ends with the game."""
    ordered = sorted(admin, key=lambda e: e.version)
    seeds = deal_seeds(ordered)
    problems: list[str] = []
    for item in seen:
        found = _open_hand_problems(game, ordered, seeds, delay, item, finished_at)
        problems += [f"{item.where}: {p}" for p in found]
    return problems


def open_hand_limit(game: str, admin: Sequence[LoggedEvent], delay: int, live: int) -> int:
    """The newest log version an open-hand view may show while the table is at `live`:
    the one right before the move `delay` moves back, 1 (nothing dealt) before the table
    has had that many."""
    return moves_back([e.version for e in admin if e.type in MOVE_EVENTS[game]], delay, live)


def _open_hand_problems(
    game: str,
    ordered: Sequence[LoggedEvent],
    seeds: dict[str, int],
    delay: int,
    item: Seen,
    finished_at: int,
) -> list[str]:
    data = dict(item.data)
    open_hand = data.pop("open_hand", None)
    if not isinstance(open_hand, dict):
        return ["no open hands in an open-hand view"]
    shown_at = int(open_hand.get("log_version", 0))
    problems = []
    over = finished_at and shown_at == finished_at <= item.version
    if shown_at > open_hand_limit(game, ordered, delay, item.version) and not over:
        problems.append(
            f"it shows log version {shown_at}, fewer than {delay} moves behind the "
            f"table's {item.version}"
        )
    knowledge: Knowledge = MODELS[game]()
    for event in ordered:
        if event.version <= shown_at:
            knowledge.apply(event)
    hands = knowledge.open_hands()
    shown = [Counter[str]() for _ in hands]
    for row in open_hand.get("hands", []):
        shown[int(row.get("seat", 0))].update(row.get("cards", []))
    problems += [
        f"seat {seat}'s hand {sorted(got)} is not its hand of v{shown_at} {sorted(hands[seat])}"
        for seat, got in enumerate(shown)
        if got != hands[seat]
    ]
    allowed = knowledge.allowed_cards(None).union(*hands)
    problems += [
        f"card {card} it may not know at v{shown_at} (it is in {knowledge.card_owner(card)})"
        for card in dict.fromkeys(cards_in(item.data))
        if card not in allowed
    ]
    text = "\n".join(strings(item.data)).lower()
    problems += [f"seed of a deal not yet revealed: {seed[:12]}…" for seed, revealed in
                 seeds.items() if revealed > shown_at and seed in text]  # fmt: skip
    if data.get("seat") is not None:
        problems.append(f"a view for seat {data['seat']}")
    return problems + knowledge.view_problems(None, data)
