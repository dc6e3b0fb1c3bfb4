"""Ratings: OpenSkill's Plackett–Luce model over a finished table's places. No I/O.

Why Plackett–Luce: it rates any number of teams of any size from a full ranking with
ties, which is exactly what both games give — 3-5-8 is a three-player free-for-all
whose equal scores share a place, Khözör two teams of four with places 1 and 2 — and
it is OpenSkill's default, measured as accurate as TrueSkill at a fraction of the cost.
One model for both games keeps the two leaderboards comparable in meaning, though each
game has its own ratings.

A computer seat is a player of a fixed, known skill (`COMPUTER_SKILLS`): it shapes the
others' updates (losing to an easy computer costs more than to a normal one) and is
never updated itself. A table without two rated players' worth of information — no
person at it — rates nobody.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from openskill.models import PlackettLuce

from kozyr.games.catalogue import UnknownGame, info_of
from kozyr.matchmaking.lobby import Skill

MODEL = PlackettLuce()
DEFAULT = Skill(MODEL.mu, MODEL.sigma)
BETA_SQUARED = float(MODEL.beta) ** 2
"""A new player: mu 25, sigma 25/3."""
COMPUTER_SKILLS = {"easy": Skill(18.0, 3.0), "normal": Skill(25.0, 3.0), "hard": Skill(30.0, 3.0)}
"""What a computer seat is taken to be worth (for balancing and for rating the others).
Assumed, not measured: the bots' duplicate tournament (docs/bots.md) will calibrate it."""
COMPUTER_IN_RESULTS = COMPUTER_SKILLS["normal"]
"""A computer seat in TableFinished (which names no level)."""


@dataclass(frozen=True, slots=True)
class SeatOutcome:
    """One seat of a TableFinished: its player ("" for a computer), place and score."""

    seat: int
    player_id: str
    place: int
    score: int


def ordinal(skill: Skill) -> float:
    """The displayed rating: mu − 3σ, the skill we are 99.7 % sure a player has
    (0 for a new player), what the leaderboard sorts by."""
    return skill.mu - 3 * skill.sigma


def teams_of(game: str, seats: Sequence[SeatOutcome]) -> list[list[SeatOutcome]]:
    """The game's sides (`GameInfo.sides`: its teams, or every seat alone), each with
    the outcomes of its seats."""
    teams = ([s for s in seats if s.seat in side] for side in info_of(game).sides)
    return [team for team in teams if team]


def rate(
    game: str,
    seats: Sequence[SeatOutcome],
    skills: dict[str, Skill],
    abandoned: frozenset[str] = frozenset(),
) -> dict[str, Skill]:
    """The new skill of every person at the table, from his skill before (`skills`).

    A team with a leaver in it (`abandoned`, docs/leavers.md) is ranked after every team
    without one — 3-5-8: the leaver is last; Khözör: his team lost — keeping the table's
    order among such teams; a leaver's partners are protected: a fall is not applied to
    them (their skill stays as it was), as FAF and Lichess spare a leaver's teammates."""
    try:
        teams = teams_of(game, seats)
    except UnknownGame:  # a game this replica does not know: nobody is rated
        return {}
    people = [s for s in seats if s.player_id]
    if not people:
        return {}
    ratings = [
        [MODEL.rating(mu=_skill(s, skills).mu, sigma=_skill(s, skills).sigma) for s in team]
        for team in teams
    ]
    left = [any(s.player_id in abandoned for s in team) for team in teams]
    ranks = [
        float(min(s.place for s in team) + (len(seats) if gone else 0))
        for team, gone in zip(teams, left, strict=True)
    ]
    rated = MODEL.rate(ratings, ranks=ranks)
    after: dict[str, Skill] = {}
    for team, new, gone in zip(teams, rated, left, strict=True):
        for seat, rating in zip(team, new, strict=True):
            if not seat.player_id:
                continue
            skill = Skill(float(rating.mu), float(rating.sigma))
            before = _skill(seat, skills)
            if gone and seat.player_id not in abandoned and ordinal(skill) < ordinal(before):
                skill = before  # a partner of a leaver does not pay for him
            after[seat.player_id] = skill
    return after


def _skill(seat: SeatOutcome, skills: dict[str, Skill]) -> Skill:
    if not seat.player_id:
        return COMPUTER_IN_RESULTS
    return skills.get(seat.player_id, DEFAULT)


def win_probability(team_a: Sequence[Skill], team_b: Sequence[Skill]) -> float:
    """The chance that team A beats team B: OpenSkill's `predict_win` for two teams,
    Φ((Σμ_A − Σμ_B) / √(2β² + Σσ_A² + Σσ_B²)), computed here without building its
    rating objects (the team balancing calls it for every split it weighs)."""
    mu = sum(s.mu for s in team_a) - sum(s.mu for s in team_b)
    variance = 2 * BETA_SQUARED + sum(s.sigma**2 for s in (*team_a, *team_b))
    return 0.5 * (1.0 + math.erf(mu / math.sqrt(2.0 * variance)))
