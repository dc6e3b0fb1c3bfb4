"""Pick and start the infrastructure: environment URLs, testcontainers, or embedded.

One module for `make run` (data under `.kozyr/`, kept between runs) and for the test
fixtures (a temporary directory, thrown away).
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Callable, Iterator, Mapping
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
            db_url = stack.enter_context(postgres_container())
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
            nats_url = stack.enter_context(nats_container())
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


POSTGRES_IMAGE = "postgres:16-alpine"
"""The PostgreSQL of docker-compose.yml (and of the event store's container suite)."""
NATS_IMAGE = "nats:2.12-alpine"
"""The NATS of docker-compose.yml: 2.12+, whose message schedules the clock needs."""
NATS_PORT = 4222


@contextlib.contextmanager
def postgres_container(image: str = POSTGRES_IMAGE) -> Iterator[str]:
    """PostgreSQL in a container (testcontainers) until the block ends: its SQLAlchemy
    asyncpg URL (superuser, database `test`)."""
    from testcontainers.community.postgres import PostgresContainer

    _reaper_or_none()
    with running(lambda: PostgresContainer(image, driver="asyncpg")) as container:
        yield str(container.get_connection_url())


@contextlib.contextmanager
def nats_container(image: str = NATS_IMAGE) -> Iterator[str]:
    """NATS with JetStream in a container (testcontainers) until the block ends: its URL."""
    from testcontainers.core.container import DockerContainer
    from testcontainers.core.wait_strategies import LogMessageWaitStrategy

    _reaper_or_none()
    # testcontainers' NatsContainer waits with a deprecated helper: the same wait here.
    with running(
        lambda: (
            DockerContainer(image)
            .with_command("--jetstream")
            .with_exposed_ports(NATS_PORT)
            .waiting_for(LogMessageWaitStrategy("Server is ready").with_startup_timeout(120))
        )
    ) as container:
        host, port = container.get_container_host_ip(), container.get_exposed_port(NATS_PORT)
        yield f"nats://{host}:{port}"


PORT_RACE_ATTEMPTS = 3


@contextlib.contextmanager
def running(make: Callable[[], Any]) -> Iterator[Any]:
    """A testcontainers container `make()` started until the block ends, then removed.

    Docker publishes a container's port by drawing a free host port and binding it: any
    process of the machine may bind the same port in between (two test runs side by side
    met it: "bind: address already in use"). Such a start is not the image's failure, so
    it is tried again with a new container (Docker draws again), up to
    PORT_RACE_ATTEMPTS; every other failure is raised at once. A container whose start
    failed is removed before the next.
    """
    for attempt in range(1, PORT_RACE_ATTEMPTS + 1):
        container = make()
        try:
            container.start()
        except Exception as error:
            container.stop()  # removes what was created
            if attempt == PORT_RACE_ATTEMPTS or not lost_its_port(error):
                raise
            log.warning("a container's host port was taken: starting another", error=str(error))
            continue
        try:
            yield container
        finally:
            container.stop()
        return


def lost_its_port(error: Exception) -> bool:
    """Whether a container's start failed because its published host port was taken
    (Docker's "address already in use" from its proxy, or "port is already allocated")."""
    text = str(error)
    return "address already in use" in text or "port is already allocated" in text


def _reaper_or_none() -> None:
    """testcontainers' reaper (Ryuk) removes the containers of a process that was killed;
    its image comes from Docker Hub. Where it is neither in the engine nor pullable (an
    engine without Docker Hub, ../shared/container's), go without it rather than fail:
    the containers are still removed when their block ends, only a SIGKILLed run leaves
    them (labelled `org.testcontainers`) behind."""
    import docker
    from testcontainers.core.config import testcontainers_config as config

    if config.ryuk_disabled:
        return
    client = docker.from_env(timeout=60)
    try:
        client.images.get(config.ryuk_image)
        return
    except docker.errors.ImageNotFound:
        pass
    try:
        client.images.pull(config.ryuk_image)
    except docker.errors.APIError as error:
        log.warning(
            "testcontainers runs without its reaper", image=config.ryuk_image, error=str(error)
        )
        config.ryuk_disabled = True
