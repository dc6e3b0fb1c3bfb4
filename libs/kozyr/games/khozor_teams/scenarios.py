"""Build chosen positions by folding chosen events — for tests, bots and tooling.

A scenario is an ordinary event log whose deal names the hands instead of deriving
them from a seed, so the resulting state is exactly what `fold` gives: no special
constructor, no back door into the state. (The commitment of such a deal does not
match its hands; only `decide` produces fair deals.)
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from kozyr.games import fair_deal
from kozyr.games.cards import Card, parse_card
from kozyr.games.khozor_teams.evolve import fold
from kozyr.games.khozor_teams.messages import (
    Event,
    OpenerConfirmed,
    OpeningTeamDrawn,
    RoundDealt,
    RoundWon,
)
from kozyr.games.khozor_teams.model import DECK, SEATS, State, Team, trump_of_round

SCENARIO_SEED = bytes(range(32))


def cards(text: str) -> tuple[Card, ...]:
    """ "7H 8H JK-red" → cards (an empty string → no cards)."""
    return tuple(parse_card(t) for t in text.split())


def fill_hands(chosen: Mapping[int, str], *, size: int = 5, reserve: str = "") -> list[str]:
    """Eight hands: the chosen ones as given, the others `size` unused cards each, dealt
    in deck order (weakest ♣ first, jokers last) so that no card appears twice."""
    used = {c for text in (*chosen.values(), reserve) for c in cards(text)}
    spare = iter(c for c in DECK if c not in used)
    return [
        chosen[seat] if seat in chosen else " ".join(str(next(spare)) for _ in range(size))
        for seat in range(SEATS)
    ]


def deal_events(
    hands: Sequence[str],
    reserve: str = "",
    *,
    opening_team: Team = Team.A,
    wins: tuple[int, int] = (0, 0),
    seed: bytes = SCENARIO_SEED,
) -> list[Event]:
    """The log up to a chosen deal: the draw, `wins` past rounds (A's first), the deal."""
    if len(hands) != SEATS:
        raise ValueError(f"a deal has {SEATS} hands, got {len(hands)}")
    events: list[Event] = [OpeningTeamDrawn(seed, fair_deal.commitment(seed), opening_team)]
    past = [Team.A] * wins[0] + [Team.B] * wins[1]
    for round_no, team in enumerate(past, start=1):
        events.append(RoundWon(round_no, team, team.seats[0]))
    round_no = len(past) + 1
    events.append(
        RoundDealt(
            round_no=round_no,
            trump=trump_of_round(round_no),
            opening_team=opening_team,
            commitment=fair_deal.commitment(seed),
            seed=seed,
            hands=tuple(cards(h) for h in hands),
            reserve=cards(reserve),
        )
    )
    return events


def position(
    hands: Sequence[str],
    reserve: str = "",
    *,
    opener: int = 0,
    opening_team: Team | None = None,
    wins: tuple[int, int] = (0, 0),
    then: Sequence[Event] = (),
) -> State:
    """A round in play: chosen hands and reserve, `opener` to lead, then `then` applied."""
    team = opening_team or (Team.A if opener % 2 == 0 else Team.B)
    log = deal_events(hands, reserve, opening_team=team, wins=wins)
    log.append(OpenerConfirmed(team.seats[0], opener))
    log.extend(then)
    return fold({}, log)
