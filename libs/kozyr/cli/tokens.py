"""Development tokens: signed with the deployment's key, or with `make run`'s dev secret.

The key is KOZYR_JWT_KEY (HS* algorithms) or KOZYR_JWT_PRIVATE_KEY (asymmetric ones),
exactly as the services are configured; without KOZYR_JWT_KEY an HS* token is signed
with the secret `make run` keeps in $KOZYR_DATA_DIR/dev-jwt-key (default .kozyr/), so
that tokens minted here are accepted by the stack running on this machine. This module
never creates that file: a token signed with a key no server knows would be useless.
"""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

from kozyr import stackfile
from kozyr.cli.problems import CliError
from kozyr.runtime.auth import KeyConfigError, Role
from kozyr.runtime.settings import Settings, SettingsError, load_settings

DEV_JWT_KEY_FILE = "dev-jwt-key"
"""Same name as `kozyr.devstack.DEV_JWT_KEY_FILE` (checked by a test)."""


def dev_key_path() -> Path:
    """Where `make run` keeps its dev secret: dev-jwt-key in its data folder, found as
    the stack file is (`kozyr.stackfile.find_file`: $KOZYR_DATA_DIR, else .kozyr, from
    the current folder up); where `make run` here would make it when there is none."""
    found = stackfile.find_file(DEV_JWT_KEY_FILE)
    return found or stackfile.data_dir() / DEV_JWT_KEY_FILE


def _without_database(**overrides: str) -> Settings:
    """The settings, the database left out: a token needs none, and the URL the stack
    file fills in is not even parsed (that would load SQLAlchemy into every token)."""
    return load_settings(database_url=None, **overrides)


def signing_settings() -> Settings:
    """The settings to sign with; the dev secret stands in for a missing KOZYR_JWT_KEY."""
    try:
        settings = _without_database()
        if not settings.jwt_algorithm.startswith("HS") or settings.jwt_key is not None:
            return settings
        path = dev_key_path()
        if not path.is_file():
            raise CliError(
                "no key to sign tokens with: set KOZYR_JWT_KEY, or start the stack once "
                f"with `make run`, which creates {path} (a stack started with a "
                "KOZYR_DATA_DIR of its own keeps it there: set the same KOZYR_DATA_DIR)"
            )
        return _without_database(jwt_key=path.read_text().strip())
    except SettingsError as err:
        raise CliError(str(err)) from None


def mint(subject: str, role: Role, ttl_hours: float) -> str:
    """A signed token for `subject` in `role`, valid for `ttl_hours`."""
    if not subject.strip():
        raise CliError("the token needs a subject (a player id or a service name)")
    try:
        minter = signing_settings().token_minter()
        return minter.mint(subject, role, ttl=timedelta(hours=ttl_hours))
    except (SettingsError, KeyConfigError) as err:
        raise CliError(str(err)) from None
