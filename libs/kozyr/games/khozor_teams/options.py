"""Table options and the state of a fresh table."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from kozyr.games.errors import OptionsError
from kozyr.games.khozor_teams.model import (
    TURN_SECONDS_DEFAULT,
    TURN_SECONDS_MAX,
    TURN_SECONDS_MIN,
    State,
)

KNOWN_OPTIONS = ("turn_seconds",)


def _turn_seconds(options: Mapping[str, Any]) -> int:
    value: object = options.get("turn_seconds", TURN_SECONDS_DEFAULT)
    # bool is an int subclass; True seconds is a mistake, not a choice.
    if isinstance(value, bool) or not isinstance(value, int):
        raise OptionsError(f"turn_seconds must be an integer, got {value!r}")
    if not TURN_SECONDS_MIN <= value <= TURN_SECONDS_MAX:
        raise OptionsError(
            f"turn_seconds must be between {TURN_SECONDS_MIN} and {TURN_SECONDS_MAX}, got {value}"
        )
    return value


def initial_state(options: Mapping[str, Any]) -> State:
    """A table before round 1's opening-team draw. Options: `turn_seconds` (int, 10-3600,
    default 180). Unknown options are refused so a typo never silently means "default"."""
    unknown = sorted(set(options) - set(KNOWN_OPTIONS))
    if unknown:
        raise OptionsError(
            f"unknown option(s) for khozor_teams: {', '.join(map(str, unknown))};"
            f" known: {', '.join(KNOWN_OPTIONS)}"
        )
    return State(turn_seconds=_turn_seconds(options))
