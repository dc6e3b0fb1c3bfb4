"""A settings class per service on the shared `kozyr.runtime.Settings`.

Each service reads the shared variables and its own, by the same `KOZYR_*` names as
before the split; no knob is in two classes; an override naming another service's knob
is a programming error rather than silently ignored; and docs/operations.md
("Settings") names every service's own variables.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from kozyr.bots.settings import BotsSettings
from kozyr.clock.settings import ClockSettings
from kozyr.matchmaking.settings import MatchmakingSettings
from kozyr.runtime.settings import Settings, SettingsError, env_name
from kozyr.table.settings import TableSettings
from kozyr.webedge.settings import WebEdgeSettings
from kozyr.webtable.settings import WebTableSettings

ROOT = Path(__file__).resolve().parents[2]
SERVICES: tuple[type[Settings], ...] = (
    TableSettings,
    ClockSettings,
    BotsSettings,
    MatchmakingSettings,
    WebEdgeSettings,
    WebTableSettings,
)


@pytest.fixture(autouse=True)
def clean_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in list(os.environ):
        if name.upper().startswith("KOZYR_"):
            monkeypatch.delenv(name)


def own_fields(kind: type[Settings]) -> set[str]:
    return set(kind.model_fields) - set(Settings.model_fields)


def test_each_service_reads_its_own_and_the_shared_variables(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("KOZYR_SUBJECT_ROOT", "shared.root")
    monkeypatch.setenv("KOZYR_WATCH_POLL_SECONDS", "0.5")
    monkeypatch.setenv("KOZYR_TABLE_WORKERS", "4")
    monkeypatch.setenv("KOZYR_CLOCK_COVER_AFTER_SECONDS", "7")
    monkeypatch.setenv("KOZYR_LIVEKIT_URL", "wss://voice")
    monkeypatch.setenv("KOZYR_BOTS_LEVEL", "hard")
    monkeypatch.setenv("KOZYR_MATCHMAKING_FILL_AFTER_SECONDS", "12")
    monkeypatch.setenv("KOZYR_WEBEDGE_ALLOWED_ORIGINS", "https://play.example.com")
    monkeypatch.setenv("KOZYR_WEBTABLE_EDGE_PORT", "8443")
    table, clock = TableSettings.load(), ClockSettings.load()
    bots, matchmaking = BotsSettings.load(), MatchmakingSettings.load()
    edge, page = WebEdgeSettings.load(), WebTableSettings.load()
    assert (table.watch_poll_seconds, table.table_workers) == (0.5, 4)
    assert (clock.clock_cover_after_seconds, clock.livekit_url) == (7, "wss://voice")
    assert bots.bots_level == "hard"
    assert matchmaking.rules.fill_after == 12
    assert (edge.webedge_allowed_origins, page.webtable_edge_port) == (
        "https://play.example.com",
        8443,
    )
    everyone = (table, clock, bots, matchmaking, edge, page)
    assert {s.subject_root for s in everyone} == {"shared.root"}


def test_no_knob_is_in_two_classes_and_the_shared_one_holds_none() -> None:
    owned = [field for kind in SERVICES for field in own_fields(kind)]
    assert len(owned) == len(set(owned))
    assert all(own_fields(kind) for kind in SERVICES)


def test_a_knob_of_another_service_is_refused_not_ignored() -> None:
    with pytest.raises(ValueError, match="unknown settings fields of TableSettings"):
        TableSettings.load(bots_think_seconds=0)
    with pytest.raises(ValueError, match="unknown settings fields of Settings"):
        Settings.load(table_workers=2)
    with pytest.raises(ValueError, match="unknown settings fields of WebTableSettings"):
        WebTableSettings.load(webedge_port=8080)


def test_a_bad_service_variable_is_named(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("KOZYR_MATCHMAKING_TICK_SECONDS", "0")
    monkeypatch.setenv("KOZYR_JWT_TTL_SECONDS", "-1")
    with pytest.raises(SettingsError) as caught:
        MatchmakingSettings.load(required={"table_target"})
    assert sorted(caught.value.variables) == [
        "KOZYR_JWT_TTL_SECONDS",
        "KOZYR_MATCHMAKING_TICK_SECONDS",
        "KOZYR_TABLE_TARGET",
    ]


def test_operations_doc_names_every_services_variables() -> None:
    doc = (ROOT / "docs/operations.md").read_text()
    section = doc.split("\n## Settings\n", 1)[1].split("\n## ", 1)[0]
    for kind in SERVICES:
        assert kind.__name__ in section
        missing = [env_name(f) for f in own_fields(kind) if f"`{env_name(f)}`" not in section]
        assert missing == [], f"{kind.__name__}: docs/operations.md, Settings, lacks {missing}"
