"""3-5-8 vocabulary: contracts, phases, options, commands, events and the state.

Everything here is a small frozen value. Commands and events hold only ints, strs,
bools, bytes, cards, enums, tuples of these (and the `Transfer` record), so that
`kozyr.games.codec.encode_event`/`decode_event` round-trip every one of them.

The state is split in two levels so that a card play rebuilds only the small
`DealState` and the thin `State` around it, never the whole game's history. Both are
frozen dataclasses like every other value of both games (docs/architecture.md, "One
convention for every game").
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

from kozyr.games.cards import Card, Rank, RankOrder, Suit
from kozyr.games.decider import Seat

GAME_ID = "three_five_eight"
SEATS = 3
DEALS = 18
HAND_SIZE = 16
FIRST_LOOK = 6
"""Before the contract a seat sees only the first 6 cards of its hand (RULES.md, deal 1)."""
TALON_SIZE = 4
TRICKS_PER_DEAL = 16

RANKS = RankOrder(
    (
        Rank.TWO,
        Rank.THREE,
        Rank.FOUR,
        Rank.FIVE,
        Rank.SIX,
        Rank.SEVEN,
        Rank.EIGHT,
        Rank.NINE,
        Rank.TEN,
        Rank.JACK,
        Rank.QUEEN,
        Rank.KING,
        Rank.ACE,
    )
)
"""3-5-8 ranks weakest first: 2 … A. Also fixes the canonical deck of the fair deal."""

DECK: tuple[Card, ...] = RANKS.deck()
"""The unshuffled 52-card deck (♣ 2…A, ♦ 2…A, ♥ 2…A, ♠ 2…A): input of the shuffle."""


class Contract(StrEnum):
    """The six contracts, in the order of the timeout's choice (♠ ♥ ♦ ♣ NT MT)."""

    SPADES = "S"
    HEARTS = "H"
    DIAMONDS = "D"
    CLUBS = "C"
    NO_TRUMP = "NT"
    MINIMUM_TRICKS = "MT"

    @property
    def trump(self) -> Suit | None:
        """The trump suit, or None for NT and MT."""
        return _TRUMP[self]

    @property
    def reverses_targets(self) -> bool:
        """MT counts tricks as a maximum: targets 3-5-8 instead of 8-5-3."""
        return self is Contract.MINIMUM_TRICKS


_TRUMP: dict[Contract, Suit | None] = {
    Contract.SPADES: Suit.SPADES,
    Contract.HEARTS: Suit.HEARTS,
    Contract.DIAMONDS: Suit.DIAMONDS,
    Contract.CLUBS: Suit.CLUBS,
    Contract.NO_TRUMP: None,
    Contract.MINIMUM_TRICKS: None,
}


class Phase(StrEnum):
    """Where a game stands. `DRAW_DEALER` and `DEAL` wait for the table's seed."""

    DRAW_DEALER = "draw_dealer"
    DEAL = "deal"
    CONTRACT = "contract"
    EXCHANGE = "exchange"
    DISCARD = "discard"
    PLAY = "play"
    OVER = "over"


class Role(StrEnum):
    """A seat's role in one deal, fixed by the dealer."""

    DECLARER = "declarer"
    THIRD = "third"
    DEALER = "dealer"


@dataclass(frozen=True, slots=True)
class Options:
    """Table options fixed at creation (validated by `options.parse_options`)."""

    must_trump: bool = False
    turn_seconds: int = 180


# ------------------------------------------------------------------------ commands


@dataclass(frozen=True, slots=True)
class DrawFirstDealer:
    """Chance: the table supplies the seed that draws the first dealer."""

    seed: bytes


@dataclass(frozen=True, slots=True)
class DealCards:
    """Chance: the table supplies the seed that shuffles the next deal."""

    seed: bytes


@dataclass(frozen=True, slots=True)
class ChooseContract:
    seat: Seat
    contract: Contract


@dataclass(frozen=True, slots=True)
class GiveCard:
    """One card of the exchange, from the giver whose turn it is."""

    seat: Seat
    card: Card


@dataclass(frozen=True, slots=True)
class Discard:
    """The declarer's four discards, all at once (one decision, one timeout)."""

    seat: Seat
    cards: tuple[Card, ...]


@dataclass(frozen=True, slots=True)
class PlayCard:
    seat: Seat
    card: Card


Command = DrawFirstDealer | DealCards | ChooseContract | GiveCard | Discard | PlayCard
COMMANDS: tuple[type, ...] = (
    DrawFirstDealer,
    DealCards,
    ChooseContract,
    GiveCard,
    Discard,
    PlayCard,
)


# -------------------------------------------------------------------------- events


@dataclass(frozen=True, slots=True)
class Transfer:
    """One leg of an exchange: `giver` hands `count` cards to `receiver`, one at a time."""

    giver: int
    receiver: int
    count: int


@dataclass(frozen=True, slots=True)
class FirstDealerDrawn:
    """The first dealer: `fair_deal.draw_index(seed, 3)`. Public, seed included."""

    dealer: int
    seed: bytes


@dataclass(frozen=True, slots=True)
class CardsDealt:
    """A shuffled deal. `hands[s]` in dealing order; the seed stays hidden until revealed."""

    deal: int
    dealer: int
    commitment: str
    seed: bytes
    hands: tuple[tuple[Card, ...], ...]
    talon: tuple[Card, ...]


@dataclass(frozen=True, slots=True)
class ContractChosen:
    deal: int
    seat: Seat
    contract: Contract


@dataclass(frozen=True, slots=True)
class HandsCompleted:
    """Each seat now sees its last 10 cards: `rests[s]` is shown to seat s only.

    The cards are already in the state since `CardsDealt`; this event exists so that
    a seat's redacted history tells it when and which cards it came to see.
    """

    deal: int
    rests: tuple[tuple[Card, ...], ...]


@dataclass(frozen=True, slots=True)
class ExchangePlanned:
    """The legs of this deal's exchange, in order (public)."""

    deal: int
    transfers: tuple[Transfer, ...]


@dataclass(frozen=True, slots=True)
class CardExchanged:
    """Give `number` (1-based) of the current leg and its forced return.

    `returned` may equal `given` (the receiver held nothing higher in that suit).
    Only the giver and the receiver see the cards.
    """

    giver: int
    receiver: int
    number: int
    given: Card
    returned: Card


@dataclass(frozen=True, slots=True)
class ExchangeSkipped:
    """The giver holds no card he may give (only trumps): his leg's rest is skipped."""

    giver: int
    receiver: int
    count: int


@dataclass(frozen=True, slots=True)
class TalonTaken:
    """The declarer picks up the talon (cards seen by the declarer only)."""

    seat: int
    cards: tuple[Card, ...]


@dataclass(frozen=True, slots=True)
class CardsDiscarded:
    """The declarer's four discards (seen by the declarer only)."""

    seat: int
    cards: tuple[Card, ...]


@dataclass(frozen=True, slots=True)
class CardPlayed:
    seat: Seat
    card: Card


@dataclass(frozen=True, slots=True)
class TrickTaken:
    """Trick `number` (1-based): `cards` in play order, starting with `leader`'s."""

    number: int
    leader: int
    winner: int
    cards: tuple[Card, ...]


@dataclass(frozen=True, slots=True)
class DealScored:
    """A deal's result; every tuple is indexed by seat. `points` sum to 0."""

    deal: int
    dealer: int
    contract: Contract
    targets: tuple[int, ...]
    tricks: tuple[int, ...]
    points: tuple[int, ...]
    totals: tuple[int, ...]


@dataclass(frozen=True, slots=True)
class DealSeedRevealed:
    """The ended deal's seed, now public: anyone can re-derive the deal and commitment."""

    deal: int
    commitment: str
    seed: bytes


@dataclass(frozen=True, slots=True)
class GameEnded:
    """After deal 18. `places[s]` is 1-based; equal totals share a place."""

    totals: tuple[int, ...]
    places: tuple[int, ...]


Event = (
    FirstDealerDrawn
    | CardsDealt
    | ContractChosen
    | HandsCompleted
    | ExchangePlanned
    | CardExchanged
    | ExchangeSkipped
    | TalonTaken
    | CardsDiscarded
    | CardPlayed
    | TrickTaken
    | DealScored
    | DealSeedRevealed
    | GameEnded
)
EVENTS: tuple[type, ...] = (
    FirstDealerDrawn,
    CardsDealt,
    ContractChosen,
    HandsCompleted,
    ExchangePlanned,
    CardExchanged,
    ExchangeSkipped,
    TalonTaken,
    CardsDiscarded,
    CardPlayed,
    TrickTaken,
    DealScored,
    DealSeedRevealed,
    GameEnded,
)

ExchangeLogEntry = CardExchanged | ExchangeSkipped


# --------------------------------------------------------------------------- state


@dataclass(frozen=True)
class DealState:
    """One deal in progress (or just ended, until the next deal replaces it).

    Without slots, unlike the other records: it is rebuilt at every card played, and
    `transitions._patch` copies an instance's `__dict__` at a fraction of the cost of a
    frozen dataclass's `__init__` (the same cost as a NamedTuple's rebuild).

    `hands[s]` keeps dealing order (cards received later are appended), so that
    `hands[s][:6]` are the first six cards while no card has moved yet.
    `trick` holds the current trick's cards in play order, the first by `leader`.
    """

    number: int
    dealer: int
    commitment: str
    seed: bytes
    hands: tuple[tuple[Card, ...], ...]
    talon: tuple[Card, ...]
    contract: Contract | None = None
    transfers: tuple[Transfer, ...] = ()
    transfer_index: int = 0
    transfer_done: int = 0
    exchange_log: tuple[ExchangeLogEntry, ...] = ()
    talon_taken: bool = False
    discards: tuple[Card, ...] = ()
    leader: int = 0
    trick: tuple[Card, ...] = ()
    completed: tuple[TrickTaken, ...] = ()
    tricks: tuple[int, ...] = (0, 0, 0)
    seed_revealed: bool = False

    @property
    def declarer(self) -> int:
        return (self.dealer + 1) % SEATS

    @property
    def third(self) -> int:
        return (self.dealer + 2) % SEATS

    @property
    def trump(self) -> Suit | None:
        return None if self.contract is None else self.contract.trump


@dataclass(frozen=True)
class State:
    """The whole game (immutable; without slots for speed, like `DealState`).

    `deal` is None before the first deal.
    `turn_number` counts decisions (see `rules.turn`). `used[s]` are the contracts
    seat s has declared; `records` the scored deals; `places` is set at the end.
    """

    options: Options
    phase: Phase = Phase.DRAW_DEALER
    turn_number: int = 1
    first_dealer: int | None = None
    used: tuple[frozenset[Contract], ...] = (frozenset(), frozenset(), frozenset())
    records: tuple[DealScored, ...] = ()
    totals: tuple[int, ...] = (0, 0, 0)
    deal: DealState | None = None
    places: tuple[int, ...] | None = None
