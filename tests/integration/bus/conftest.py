"""The NATS bus tests run on the session's NATS and, where a Docker engine answers, again
on nats:2.12-alpine — the image docker-compose.yml deploys — through testcontainers
(`nats_container_url`, tests/conftest.py). Without an engine the second run is skipped
with the reason."""

from __future__ import annotations

import pytest

from kozyr.infra import Infrastructure
from tests.support.containers import CONTAINERS


@pytest.fixture(params=["session", pytest.param("container", marks=CONTAINERS)])
def nats_url(request: pytest.FixtureRequest, infra: Infrastructure) -> str:
    """The NATS server of this run of the test (JetStream enabled)."""
    if request.param == "container":
        return str(request.getfixturevalue("nats_container_url"))
    return infra.nats_url
