"""The layer contracts of `make lint` (pyproject.toml, [tool.importlinter]) hold on the
tree, and each one fails when a forbidden import is added.

A failing case copies the source tree to a temp folder, writes one throwaway module with
the forbidden import into the copy, and runs import-linter with the project's own
config over the copy only (the real tree taken off `sys.path`), in a subprocess.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import tomllib
from pathlib import Path
from typing import Any

import pytest

REPO = Path(__file__).resolve().parents[2]
SOURCE_ROOTS = ("libs", "services")
ENTRYPOINTS = {"kozyr.cli"}
"""Packages under libs/ that are entrypoints: nothing imports them (cli-entrypoint), and
they may reach a service's audit tools (cli-reach), so they are no library below them."""

_RUN = """
import sys
repo, copy, config = sys.argv[1:4]
real = {f"{repo}/{root}" for root in ("libs", "services")}
sys.path[:] = [f"{copy}/libs", f"{copy}/services", *(p for p in sys.path if p not in real)]
from importlinter.cli import lint_imports
sys.exit(lint_imports(config_filename=config, no_cache=True, no_logo=True))
"""


def lint_imports(
    tree: Path, config: Path = REPO / "pyproject.toml"
) -> subprocess.CompletedProcess[str]:
    """import-linter over the source roots under `tree`, with the project's config."""
    return subprocess.run(
        [sys.executable, "-c", _RUN, str(REPO), str(tree), str(config)],
        cwd=tree,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )


@pytest.fixture(scope="module")
def pristine(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A copy of the source roots (generated API code included, caches left out)."""
    tree = tmp_path_factory.mktemp("layers")
    for root in SOURCE_ROOTS:
        shutil.copytree(
            REPO / root, tree / root, ignore=shutil.ignore_patterns("__pycache__", "*.pyc")
        )
    return tree


def contracts() -> dict[str, dict[str, Any]]:
    with (REPO / "pyproject.toml").open("rb") as file:
        config = tomllib.load(file)["tool"]["importlinter"]
    return {contract["id"]: contract for contract in config["contracts"]}


def packages(root: str) -> set[str]:
    """The top packages (and modules) of kozyr under one source root."""
    found = set()
    for path in (REPO / root / "kozyr").iterdir():
        if path.name.startswith(("_", ".")) or path.name == "py.typed":
            continue
        if path.is_dir() or path.suffix == ".py":
            found.add(f"kozyr.{path.stem}")
    return found


def test_every_package_is_named_in_the_contracts() -> None:
    """A new library or service must take its place in the layers (pyproject.toml)."""
    libraries, services = packages("libs"), packages("services")
    by_id = contracts()
    todo = (
        f"libs/kozyr holds {sorted(libraries)}, services/kozyr {sorted(services)}: name "
        "each in pyproject.toml [tool.importlinter] (games-alone, "
        "libraries-below-services, texts-alone, cli-entrypoint, and services-apart for a "
        "service)"
    )
    assert set(by_id["libraries-below-services"]["source_modules"]) == libraries - ENTRYPOINTS, todo
    assert set(by_id["cli-entrypoint"]["source_modules"]) == (libraries | services) - ENTRYPOINTS
    assert set(by_id["libraries-below-services"]["forbidden_modules"]) == services, todo
    assert set(by_id["services-apart"]["modules"]) == services, todo
    others = (libraries | services) - {"kozyr.games", "kozyr.texts"}
    assert set(by_id["games-alone"]["forbidden_modules"]) == others, todo
    below_texts = {m for m in by_id["texts-alone"]["forbidden_modules"] if m.startswith("kozyr.")}
    assert below_texts == (libraries | services) - {"kozyr.texts"}, todo


TABLE_ROOT_MODULES = {
    "kozyr.table.texts",
    "kozyr.table.metrics",
    "kozyr.table.settings",
    "kozyr.table.workers",
}
"""The table context's modules beside its layers: the application's texts and metrics,
the process's settings and workers (its `__main__` too)."""


def test_every_part_of_the_table_context_has_its_place() -> None:
    """A new module or folder of services/kozyr/table is a layer (table-layers), the audit,
    or one of the few beside them; none of them may import the audit (table-audit-apart)."""
    parts = {
        f"kozyr.table.{path.stem}"
        for path in (REPO / "services/kozyr/table").iterdir()
        if not path.name.startswith(("_", ".")) and (path.is_dir() or path.suffix == ".py")
    }
    by_id = contracts()
    layers = set(by_id["table-layers"]["layers"])
    assert parts == layers | {"kozyr.table.audit"} | TABLE_ROOT_MODULES, (
        "give the new part of kozyr.table its place in pyproject.toml's table-layers (or "
        "TABLE_ROOT_MODULES here) and in docs/architecture.md, 'The table context'"
    )
    apart = set(by_id["table-audit-apart"]["source_modules"]) - {"kozyr.table.__main__"}
    assert apart == parts - {"kozyr.table.audit"}


def test_every_game_package_is_reached_through_its_plugin_only() -> None:
    """Each game package (a folder of libs/kozyr/games with a plugin) is forbidden to
    the services and tools but through the catalogue (contract games-through-plugins)."""
    games = {
        f"kozyr.games.{path.parent.name}"
        for path in (REPO / "libs/kozyr/games").glob("*/plugin.py")
    }
    assert games == {"kozyr.games.three_five_eight", "kozyr.games.khozor_teams"}
    assert set(contracts()["games-through-plugins"]["forbidden_modules"]) == games


def test_the_tree_keeps_every_contract(pristine: Path) -> None:
    result = lint_imports(pristine)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "0 broken" in result.stdout


@pytest.mark.parametrize(
    ("module", "source", "broken"),
    [
        ("libs/kozyr/games/_io.py", "import asyncio\n", "Games are pure rules"),
        ("libs/kozyr/games/_net.py", "import nats\n", "Games are pure rules"),
        ("libs/kozyr/games/_up.py", "import kozyr.tablewire\n", "Games import nothing"),
        ("libs/kozyr/tablewire/_svc.py", "import kozyr.table.app\n", "Libraries never import"),
        ("libs/kozyr/cli/_svc.py", "from kozyr.table import app\n", "CLI reaches the table's"),
        ("libs/kozyr/cli/_bot.py", "import kozyr.bots.levels\n", "CLI reaches the table's"),
        ("services/kozyr/clock/_cli.py", "import kozyr.cli.problems\n", "nothing imports it"),
        ("services/kozyr/table/domain/_io.py", "import asyncpg\n", "domain is pure"),
        ("services/kozyr/table/domain/_log.py", "import kozyr.eventstore\n", "domain is pure"),
        ("services/kozyr/table/adapters/_up.py", "import kozyr.table.edge.views\n", "is layered"),
        ("services/kozyr/table/adapters/_mod.py", "import kozyr.table.audit.labels\n", "is apart"),
        (
            "services/kozyr/table/audit/_edge.py",
            "import kozyr.table.edge.views\n",
            "never the edge",
        ),
        ("services/kozyr/table/_other.py", "import kozyr.other\n", "Services never import"),
        ("libs/kozyr/eventstore/_bus.py", "import kozyr.bus.subjects\n", "event store never"),
        ("libs/kozyr/texts.py", "import kozyr.games.cards\n", "Texts import nothing"),
        (
            "services/kozyr/matchmaking/_game.py",
            "from kozyr.games.khozor_teams import model\n",
            "reach a game through its plugin",
        ),
        ("libs/kozyr/cli/_game.py", "import kozyr.games.three_five_eight\n", "reach a game"),
        ("libs/kozyr/games/_tui.py", "import rich.text\n", "Games are pure rules"),
        (
            "libs/kozyr/games/three_five_eight/_ui.py",
            "from kozyr.games.three_five_eight import play_ui\n",
            "kozyr play's alone",
        ),
    ],
    ids=[
        "games-asyncio",
        "games-nats",
        "games-tables",
        "tablewire-service",
        "cli-table-app",
        "cli-bots",
        "service-cli",
        "table-domain-asyncpg",
        "table-domain-eventstore",
        "table-adapters-edge",
        "table-service-audit",
        "table-audit-app",
        "service-service",
        "eventstore-bus",
        "texts-games",
        "service-game-package",
        "tool-game-package",
        "games-rich",
        "game-imports-its-play-ui",
    ],
)
def test_a_forbidden_import_breaks_its_contract(
    pristine: Path, tmp_path: Path, module: str, source: str, broken: str
) -> None:
    tree = tmp_path / "tree"
    shutil.copytree(pristine, tree)
    other = tree / "services/kozyr/other/__init__.py"  # a second service, as a new one joins
    other.parent.mkdir(parents=True)
    other.write_text('"""A stand-in second service."""\n')
    config = tmp_path / "pyproject.toml"
    text = (REPO / "pyproject.toml").read_text()
    joined = text.replace('modules = ["kozyr.table"', 'modules = ["kozyr.other", "kozyr.table"')
    assert joined != text
    config.write_text(joined)
    (tree / module).write_text(source)

    result = lint_imports(tree, config)

    assert result.returncode == 1, result.stdout + result.stderr
    assert "1 broken" in result.stdout, result.stdout
    assert any(broken in line and "BROKEN" in line for line in result.stdout.splitlines())
