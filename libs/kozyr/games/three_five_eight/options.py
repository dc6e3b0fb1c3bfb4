"""Table options of 3-5-8, validated once when the table is created.

Strict on purpose: a typo in an option name or a string where a number belongs would
otherwise silently create a table with different rules than the players agreed on.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from kozyr.games.errors import OptionsError
from kozyr.games.three_five_eight.model import Options

TURN_SECONDS_MIN = 10
TURN_SECONDS_MAX = 3600
KNOWN = ("must_trump", "turn_seconds")


def parse_options(options: Mapping[str, Any]) -> Options:
    """`{"must_trump": bool, "turn_seconds": int}` (both optional) → Options.

    Raises OptionsError for unknown names, wrong types (bools are not numbers here,
    numbers are not bools) and `turn_seconds` outside 10..3600.
    """
    if not isinstance(options, Mapping):
        raise OptionsError(f"options must be a mapping, got {type(options).__name__}")
    unknown = sorted(str(k) for k in options if k not in KNOWN)
    if unknown:
        raise OptionsError(f"unknown option(s) {', '.join(unknown)}; known: {', '.join(KNOWN)}")
    must_trump = options.get("must_trump", False)
    if not isinstance(must_trump, bool):
        raise OptionsError(f"must_trump must be true or false, got {must_trump!r}")
    seconds = options.get("turn_seconds", 180)
    if isinstance(seconds, bool) or not isinstance(seconds, int):
        raise OptionsError(f"turn_seconds must be a whole number, got {seconds!r}")
    if not TURN_SECONDS_MIN <= seconds <= TURN_SECONDS_MAX:
        raise OptionsError(
            f"turn_seconds must be between {TURN_SECONDS_MIN} and {TURN_SECONDS_MAX}, got {seconds}"
        )
    return Options(must_trump=must_trump, turn_seconds=seconds)


def options_json(options: Options) -> dict[str, Any]:
    """The options as the view shows them (and as `parse_options` accepts them)."""
    return {"must_trump": options.must_trump, "turn_seconds": options.turn_seconds}
