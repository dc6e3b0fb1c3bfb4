"""Database URL spellings: SQLAlchemy wants "postgresql+asyncpg://", asyncpg wants "postgresql://".

Settings and fixtures hand around one SQLAlchemy URL; these helpers accept either
spelling so that an operator's plain libpq URL works too.
"""

from __future__ import annotations

from sqlalchemy.engine import make_url


def sqlalchemy_url(url: str) -> str:
    """The URL with the asyncpg driver, as `create_async_engine` needs it."""
    parsed = make_url(url)
    if parsed.get_backend_name() != "postgresql":
        raise ValueError(f"not a PostgreSQL URL: {parsed.render_as_string(hide_password=True)}")
    return parsed.set(drivername="postgresql+asyncpg").render_as_string(hide_password=False)


def asyncpg_dsn(url: str) -> str:
    """The URL as a libpq-style DSN for `asyncpg.connect` (no "+driver" part)."""
    parsed = make_url(sqlalchemy_url(url))
    return parsed.set(drivername="postgresql").render_as_string(hide_password=False)
