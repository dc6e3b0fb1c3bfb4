"""Database URL spellings: SQLAlchemy wants "postgresql+asyncpg://", asyncpg wants "postgresql://".

Settings and fixtures hand around one SQLAlchemy URL; these helpers accept either
spelling so that an operator's plain libpq URL works too.

Several hosts (a primary and its standbys, as CloudNativePG or a libpq client lists
them) are spelled two ways, both accepted: libpq's
`postgresql://user@h1:5432,h2:5432/db?target_session_attrs=read-write`, which
SQLAlchemy's URL parser refuses (it reads "5432,h2:5432" as a port), and SQLAlchemy's
`postgresql+asyncpg://user@/db?host=h1:5432&host=h2:5432&target_session_attrs=...`,
of which asyncpg's own DSN parser keeps only the last host. So the SQLAlchemy URL
carries the hosts in its query, and the asyncpg DSN in its network location; the
other query parameters (target_session_attrs above all: connect to the primary only)
pass through unchanged.
"""

from __future__ import annotations

from urllib.parse import urlsplit, urlunsplit

from sqlalchemy.engine import URL, make_url


def hosts_in_query(url: str) -> str:
    """A libpq multi-host URL ("h1:p1,h2:p2" in the network location) with its hosts
    moved into `?host=h1:p1&host=h2:p2`, the spelling SQLAlchemy parses; any other
    URL unchanged."""
    parts = urlsplit(url)
    credentials, at, hosts = parts.netloc.rpartition("@")
    if "," not in hosts:
        return url
    query = "&".join(f"host={host}" for host in hosts.split(",") if host)
    if parts.query:
        query = f"{query}&{parts.query}"
    return urlunsplit(parts._replace(netloc=credentials + at, query=query))


def _parsed(url: str) -> URL:
    parsed = make_url(hosts_in_query(url))
    if parsed.get_backend_name() != "postgresql":
        raise ValueError(f"not a PostgreSQL URL: {parsed.render_as_string(hide_password=True)}")
    return parsed


def sqlalchemy_url(url: str) -> str:
    """The URL with the asyncpg driver, as `create_async_engine` needs it."""
    return _parsed(url).set(drivername="postgresql+asyncpg").render_as_string(hide_password=False)


def asyncpg_dsn(url: str) -> str:
    """The URL as a libpq-style DSN for `asyncpg.connect` (no "+driver" part); several
    `?host=` become libpq's "h1:p1,h2:p2" (asyncpg would keep only the last)."""
    parsed = _parsed(url).set(drivername="postgresql")
    hosts = parsed.query.get("host")
    if not isinstance(hosts, tuple) or len(hosts) < 2:
        return parsed.render_as_string(hide_password=False)
    single = parsed.difference_update_query(["host"]).set(host="MULTIHOST")
    return single.render_as_string(hide_password=False).replace("MULTIHOST", ",".join(hosts), 1)
