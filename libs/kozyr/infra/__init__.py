"""Infrastructure provisioning shared by `make run` and the test fixtures.

Order of preference (DESIGN.md §7): URLs from the environment; else testcontainers when
a Docker engine answers; else embedded PostgreSQL and NATS servers on free ports.
"""

from kozyr.infra.provision import (
    Infrastructure,
    libpq_dsn,
    nats_container,
    postgres_container,
    provision,
)
from kozyr.infra.servers import EmbeddedNats, EmbeddedPostgres, free_port

__all__ = [
    "EmbeddedNats",
    "EmbeddedPostgres",
    "Infrastructure",
    "free_port",
    "libpq_dsn",
    "nats_container",
    "postgres_container",
    "provision",
]
