"""Pick and start the infrastructure: environment URLs, testcontainers, or embedded.

One module for `make run` (data under `.kozyr/`, kept between runs) and for the test
fixtures (a temporary directory, thrown away).
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import structlog

from kozyr.infra.servers import EmbeddedNats, EmbeddedPostgres

log = structlog.get_logger(__name__)

DATABASE_URL_VAR = "KOZYR_DATABASE_URL"
NATS_URL_VAR = "KOZYR_NATS_URL"


@dataclass
class Infrastructure:
    """Where PostgreSQL and NATS are, and how they were obtained."""

    database_url: str
    nats_url: str
    sources: dict[str, str] = field(default_factory=dict)
    postgres: EmbeddedPostgres | None = None
    nats: EmbeddedNats | None = None

    def database_url_for(self, database: str) -> str:
        """The URL of another database on the same server."""
        base, _, _ = self.database_url.rpartition("/")
        return f"{base}/{database}"


def libpq_dsn(url: str) -> str:
    """A SQLAlchemy URL ("postgresql+asyncpg://...") as a plain libpq/asyncpg DSN."""
    scheme, sep, rest = url.partition("://")
    return f"{scheme.split('+', 1)[0]}{sep}{rest}"


def docker_available() -> bool:
    """True when a Docker engine answers (testcontainers can then be used)."""
    try:
        import docker

        client = docker.from_env(timeout=2)
        client.ping()
        return True
    except Exception:
        return False


@contextlib.contextmanager
def provision(
    data_dir: Path,
    *,
    env: Mapping[str, str] | None = None,
    durable: bool = True,
    use_docker: bool = True,
    nats_config: Path | None = None,
) -> Iterator[Infrastructure]:
    """Yield a ready Infrastructure; stop whatever was started on exit. `nats_config`:
    the configuration of an embedded NATS (users and rights)."""
    env = os.environ if env is None else env
    with contextlib.ExitStack() as stack:
        sources: dict[str, str] = {}
        db_url = env.get(DATABASE_URL_VAR)
        nats_url = env.get(NATS_URL_VAR)
        postgres: EmbeddedPostgres | None = None
        nats: EmbeddedNats | None = None
        docker = use_docker and (db_url is None or nats_url is None) and docker_available()
        if db_url:
            sources["postgres"] = "environment"
        elif docker:
            db_url = stack.enter_context(_postgres_container())
            sources["postgres"] = "testcontainers"
        else:
            postgres = EmbeddedPostgres(data_dir / "postgres", durable=durable)
            postgres.start()
            stack.callback(postgres.stop)
            db_url = postgres.url()
            sources["postgres"] = "embedded"
        if nats_url:
            sources["nats"] = "environment"
        elif docker:
            nats_url = stack.enter_context(_nats_container())
            sources["nats"] = "testcontainers"
        else:
            nats = EmbeddedNats(data_dir / "nats", config=nats_config)
            nats.start()
            stack.callback(nats.stop)
            nats_url = nats.url
            sources["nats"] = "embedded"
        log.info(
            "infrastructure ready", database_url=_redact(db_url), nats_url=nats_url, sources=sources
        )
        yield Infrastructure(db_url, nats_url, sources, postgres, nats)


def _redact(url: str) -> str:
    head, sep, tail = url.rpartition("@")
    if not sep:
        return url
    scheme, _, creds = head.partition("://")
    user = creds.split(":", 1)[0]
    return f"{scheme}://{user}:***@{tail}" if ":" in creds else url


@contextlib.contextmanager
def _postgres_container() -> Iterator[str]:
    from testcontainers.postgres import PostgresContainer

    container: Any = PostgresContainer("postgres:16-alpine", driver="asyncpg")
    with container:
        yield str(container.get_connection_url())


@contextlib.contextmanager
def _nats_container() -> Iterator[str]:
    from testcontainers.nats import NatsContainer

    container: Any = NatsContainer("nats:2.10-alpine").with_command("-js")
    with container:
        yield str(container.nats_uri())
