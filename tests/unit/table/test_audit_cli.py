"""The `kozyr` command line without a database: tokens, and the errors a moderator meets
before any database is reached. Clear sentences and exit code 2, never a traceback."""

from __future__ import annotations

import os
import subprocess
import sys
from datetime import timedelta
from pathlib import Path

import jwt
import pytest
from typer.testing import CliRunner

from kozyr import devstack
from kozyr.cli import tokens
from kozyr.cli.main import app
from kozyr.runtime.auth import Role, verify_token

KEY = "a-test-secret-of-more-than-thirty-two-bytes-0123456789"
ROOT = Path(__file__).resolve().parents[3]


@pytest.fixture
def runner(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> CliRunner:
    """A runner with no KOZYR_* configuration and an empty data directory."""
    for name in list(os.environ):
        if name.startswith("KOZYR_"):
            monkeypatch.delenv(name)
    monkeypatch.setenv("KOZYR_DATA_DIR", str(tmp_path / "kozyr-data"))
    return CliRunner()


def test_a_token_minted_in_a_subprocess_is_accepted_with_the_configured_key() -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("KOZYR_")}
    env["KOZYR_JWT_KEY"] = KEY
    run = subprocess.run(
        [
            sys.executable,
            "-m",
            "kozyr.cli.main",
            "token",
            "ana",
            "--role",
            "admin",
            "--ttl-hours",
            "2",
        ],
        env=env,
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert run.returncode == 0, run.stderr
    token = run.stdout.strip()
    principal = verify_token(token, key=KEY)
    assert (principal.subject, principal.role) == ("ana", Role.ADMIN)
    claims = jwt.decode(token, options={"verify_signature": False})
    assert claims["exp"] - claims["iat"] == timedelta(hours=2).total_seconds()


def test_without_KOZYR_JWT_KEY_the_dev_secret_of_make_run_signs(
    runner: CliRunner, tmp_path: Path
) -> None:
    data = tmp_path / "kozyr-data"
    data.mkdir()
    (data / devstack.DEV_JWT_KEY_FILE).write_text(KEY + "\n")
    result = runner.invoke(app, ["token", "bots", "--role", "service"])
    assert result.exit_code == 0, result.output
    principal = verify_token(result.stdout.strip(), key=KEY)
    assert (principal.subject, principal.role) == ("bots", Role.SERVICE)


def test_the_dev_key_file_is_the_one_make_run_writes() -> None:
    assert tokens.DEV_JWT_KEY_FILE == devstack.DEV_JWT_KEY_FILE


def test_without_any_key_the_token_command_says_how_to_get_one(
    runner: CliRunner, tmp_path: Path
) -> None:
    result = runner.invoke(app, ["token", "ana"])
    assert result.exit_code == 2
    assert "KOZYR_JWT_KEY" in result.stderr
    assert str(tmp_path / "kozyr-data" / "dev-jwt-key") in result.stderr
    assert not (tmp_path / "kozyr-data").exists(), "no key is invented"


def test_a_key_too_short_for_hs256_is_refused(
    runner: CliRunner, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("KOZYR_JWT_KEY", "short")
    result = runner.invoke(app, ["token", "ana"])
    assert result.exit_code == 2
    assert "KOZYR_JWT_KEY" in result.stderr
    assert "32 bytes" in result.stderr


def test_an_unknown_role_is_a_usage_error(
    runner: CliRunner, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("KOZYR_JWT_KEY", KEY)
    result = runner.invoke(app, ["token", "ana", "--role", "king"])
    assert result.exit_code == 2
    assert "king" in result.output


def test_verify_needs_a_database_url(runner: CliRunner) -> None:
    result = runner.invoke(app, ["verify", "5cf7ccbf-4359-5af3-99f0-274947348cd8"])
    assert result.exit_code == 2
    assert "KOZYR_DATABASE_URL" in result.stderr


def test_a_url_that_is_not_postgresql_is_refused(
    runner: CliRunner, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("KOZYR_DATABASE_URL", "mysql://user@host/db")
    result = runner.invoke(app, ["replay", "5cf7ccbf-4359-5af3-99f0-274947348cd8"])
    assert result.exit_code == 2
    assert "not a PostgreSQL URL" in result.stderr


@pytest.mark.parametrize("command", ["verify", "replay"])
def test_a_table_id_must_be_a_uuid(runner: CliRunner, command: str) -> None:
    result = runner.invoke(app, [command, "table-42"])
    assert result.exit_code == 2
    assert "'table-42' is not a table id" in result.stderr


def test_the_dispute_viewer_is_html_or_json_not_both(runner: CliRunner, tmp_path: Path) -> None:
    table_id = "5cf7ccbf-4359-5af3-99f0-274947348cd8"
    page = str(tmp_path / "page.html")
    result = runner.invoke(app, ["replay", table_id, "--json", "--html", page])
    assert result.exit_code == 2
    assert "--json and --html are two different outputs" in result.stderr
    result = runner.invoke(app, ["replay", table_id, "--html", page, "--lang", "fr"])
    assert result.exit_code == 2
    assert "fr" in result.output
    assert not (tmp_path / "page.html").exists()


def test_the_help_lists_every_command(runner: CliRunner) -> None:
    result = runner.invoke(app, ["--help"])
    assert result.exit_code == 0
    for command in ("replay", "verify", "token", "migrate"):
        assert command in result.stdout
