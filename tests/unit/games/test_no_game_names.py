"""No service or tool names a game outside its package: a game is one package
(libs/kozyr/games/<game>/, plus its protos), and every service and tool knows it only
by its plugin (`GamePlugin`, `GameInfo`) found through `kozyr.games.catalogue` — the
one module that lists the built-in games.

Every Python file under services/ and libs/ is read for each registered game's names
(its id, in any case, and its short word when that is a word of its own); the test-only
higher_card counts too, so a file that knew of it would fail here. The files below that
still named a game were the known remainder of issue 28, struck from `KNOWN` as they
left it; it is empty now and a file may not join it (a game's hard search, its drawing
in `kozyr play` and its options in the SDK are the game's own: `GameInfo.levels`'
`Searcher`, `GameInfo.play_ui`, `<game id>=` keywords).
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import tests.support.higher_card  # noqa: F401  (registers the test-only game)
from kozyr.games.catalogue import registered

ROOT = Path(__file__).resolve().parents[3]
SCANNED = ("services", "libs")
GENERATED = "libs/kozyr/api/"
"""The protos' generated code: a game's protos are its own (its view, its options)."""
CATALOGUE = "libs/kozyr/games/catalogue.py"

KNOWN: dict[str, str] = {}
"""A file that names a game outside its package, with why (none: keep it so)."""


def game_patterns() -> dict[str, re.Pattern[str]]:
    """Per game, its names as they would appear in code: the id (any case) and a short
    word of letters only (a module like `render_khozor`)."""
    patterns = {}
    for plugin in registered():
        names = [re.escape(plugin.id)]
        if plugin.info.short.isalpha():
            names.append(re.escape(plugin.info.short))
        patterns[plugin.id] = re.compile("|".join(names), re.IGNORECASE)
    return patterns


def own_package(path: str) -> str | None:
    """The game whose package holds `path`, if any."""
    for plugin in registered():
        rules: Any = plugin.rules  # a module: the game's package itself, or one in it
        name = str(rules.__name__)
        package = name if hasattr(rules, "__path__") else name.rpartition(".")[0]
        if package.startswith("kozyr.games.") and path.startswith(
            f"libs/{package.replace('.', '/')}/"
        ):
            return plugin.id
    return None


def naming_files() -> dict[str, set[str]]:
    """Every scanned file that names a game outside that game's package → the games."""
    patterns = game_patterns()
    found: dict[str, set[str]] = {}
    for root in SCANNED:
        for file in sorted((ROOT / root).rglob("*.py")):
            path = file.relative_to(ROOT).as_posix()
            if path.startswith(GENERATED) or path == CATALOGUE:
                continue
            text = file.read_text(encoding="utf-8")
            owner = own_package(path)
            games = {g for g, p in patterns.items() if g != owner and p.search(text)}
            if games:
                found[path] = games
    return found


def test_the_names_cover_every_game_and_find_each_in_its_own_package() -> None:
    patterns = game_patterns()
    assert {"three_five_eight", "khozor_teams", "higher_card"} <= set(patterns)
    assert own_package("libs/kozyr/games/khozor_teams/plugin.py") == "khozor_teams"
    assert patterns["khozor_teams"].search("from kozyr.bots import hard_khozor")
    assert patterns["higher_card"].search("HIGHER_CARD")
    assert not patterns["three_five_eight"].search("a 3-5-8 table")  # prose is free


def test_no_file_outside_a_games_package_names_a_game_but_the_known_ones() -> None:
    found = naming_files()
    new = {path: sorted(games) for path, games in found.items() if path not in KNOWN}
    assert not new, f"these name a game outside its package (use GameInfo): {new}"
    assert not any("higher_card" in games for games in found.values())


def test_the_known_remainder_only_shrinks() -> None:
    stale = sorted(set(KNOWN) - set(naming_files()))
    assert not stale, f"these no longer name a game: strike them from KNOWN: {stale}"
