"""deploy/nats/nats.conf is exactly what `kozyr.bus.rights` renders: the rights a
deployment's NATS enforces cannot drift from the ones the code and its tests assume."""

from __future__ import annotations

from pathlib import Path

from kozyr.bus.rights import SERVICES, password_variable, server_config_template

REPO = Path(__file__).resolve().parents[2]
CONF = REPO / "deploy/nats/nats.conf"
DEV_COPY = REPO / "deploy/k8s/overlays/dev/nats.conf"
"""kustomize reads files under its own folder only: the dev overlay holds a copy."""


def test_the_committed_nats_config_is_the_rendered_one() -> None:
    lines = CONF.read_text().splitlines(keepends=True)
    body = "".join(line for line in lines if not line.startswith("#"))
    assert body == server_config_template("kozyr"), (
        "regenerate deploy/nats/nats.conf (its header says how)"
    )
    assert DEV_COPY.read_text() == CONF.read_text(), "copy it to the dev overlay too"


def test_every_password_comes_from_the_environment() -> None:
    text = CONF.read_text()
    for user in (*SERVICES, "kozyr-admin"):
        assert f'"password": ${password_variable(user)}' in text
    assert "no_auth_user" not in text, "a deployment lets nobody in without credentials"
