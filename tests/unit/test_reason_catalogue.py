"""docs/api.md §13 lists every reason the code raises, and no other, with the code's status
and services, and marks *en* the ones raised somewhere with an English text only
(tools/reasons.py reads all this from the code). A new refusal in a service
fails here until its row is written; so does a row whose reason the code dropped.

The rule reasons of the games are checked against §7's lists the same way, from the
games' own catalogues."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from kozyr.games.errors import COMMON_TEXTS
from kozyr.games.khozor_teams.texts import REASONS as KHOZOR_REASONS
from kozyr.games.three_five_eight.texts import ERRORS as THREE_FIVE_EIGHT_ERRORS
from tools.reasons import Reason, collect

REPO = Path(__file__).resolve().parents[2]
API = REPO / "docs" / "api.md"
_ROW = re.compile(r"^\| `([A-Z0-9_]+)` \| `([A-Z_]+)` \| ([a-z, ]+) \| (.+) \|$")


def _section(title: str) -> str:
    text = API.read_text(encoding="utf-8")
    start = text.index(f"\n## {title}")
    end = text.find("\n## ", start + 1)
    return text[start : end if end != -1 else len(text)]


def documented() -> dict[str, tuple[str, set[str], bool]]:
    """§13's rows: reason → (status, services, marked English-only somewhere)."""
    rows: dict[str, tuple[str, set[str], bool]] = {}
    for line in _section("13. Every reason code").splitlines():
        if match := _ROW.match(line):
            reason, status, services, when = match.groups()
            assert reason not in rows, f"{reason} is listed twice"
            rows[reason] = (status, {s.strip() for s in services.split(",")}, "*en*" in when)
    return rows


@pytest.fixture(scope="module")
def collected() -> tuple[dict[str, Reason], list[str]]:
    return collect()


@pytest.fixture(scope="module")
def in_code(
    collected: tuple[dict[str, Reason], list[str]],
) -> dict[str, tuple[str, set[str], bool]]:
    found, unread = collected
    assert not unread, f"reasons the tool cannot read (list them in DYNAMIC): {unread}"
    return {r.reason: (r.status, r.services, r.english_only) for r in found.values()}


def test_every_reason_raised_is_documented_once(
    in_code: dict[str, tuple[str, set[str], bool]],
) -> None:
    missing = sorted(in_code.keys() - documented().keys())
    assert not missing, f"raised in code, missing from docs/api.md §13: {missing}"


def test_every_documented_reason_is_raised(in_code: dict[str, tuple[str, set[str], bool]]) -> None:
    stale = sorted(documented().keys() - in_code.keys())
    assert not stale, f"in docs/api.md §13, raised nowhere: {stale}"


def test_each_row_has_the_codes_status_services_and_languages(
    in_code: dict[str, tuple[str, set[str], bool]],
) -> None:
    wrong = {
        reason: (row, in_code[reason])
        for reason, row in documented().items()
        if reason in in_code and row != in_code[reason]
    }
    assert not wrong, f"docs (status, services, *en*) vs code: {wrong}"


def test_the_tool_finds_reasons_passed_through_helpers(
    collected: tuple[dict[str, Reason], list[str]],
) -> None:
    """The reasons built from a parameter are followed to their literal callers:
    `_uuid(request.party_id, "party_id")` → `invalid_id(field)` → INVALID_PARTY_ID."""
    found, _ = collected
    assert {"INVALID_PARTY_ID", "INVALID_TICKET_ID", "INVALID_CODE"} <= found.keys()
    assert {"TOKEN_MISSING", "INVALID_TABLE_STATE"} <= found.keys()
    assert found["TABLE_SERVICE_UNAVAILABLE"].services == {"bots", "clock", "matchmaking"}


def test_every_rule_reason_of_the_games_is_in_section_7() -> None:
    errors = _section("7. Errors")
    rules = set(COMMON_TEXTS) | set(THREE_FIVE_EIGHT_ERRORS) | set(KHOZOR_REASONS)
    missing = sorted(r for r in rules if f"`{r}`" not in errors)
    assert not missing, f"rule reasons missing from docs/api.md §7: {missing}"
