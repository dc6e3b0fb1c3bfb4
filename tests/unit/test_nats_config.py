"""deploy/nats/rights.conf is exactly what `kozyr.bus.rights` renders: the rights a
deployment's NATS enforces cannot drift from the ones the code and its tests assume; the
server's deploy/nats/nats.conf includes it (and sets JetStream's limits)."""

from __future__ import annotations

from pathlib import Path

import yaml

from kozyr.bus.rights import (
    SERVICES,
    helm_authorization,
    password_variable,
    server_config_template,
)

REPO = Path(__file__).resolve().parents[2]
CONF = REPO / "deploy/nats/rights.conf"
SERVER_CONF = REPO / "deploy/nats/nats.conf"
DEV_OVERLAY = REPO / "deploy/k8s/overlays/dev"
"""kustomize reads files under its own folder only: the dev overlay holds copies."""


def test_the_committed_nats_config_is_the_rendered_one() -> None:
    lines = CONF.read_text().splitlines(keepends=True)
    body = "".join(line for line in lines if not line.startswith("#"))
    assert body == server_config_template("kozyr"), (
        "regenerate deploy/nats/rights.conf (its header says how)"
    )
    assert (DEV_OVERLAY / CONF.name).read_text() == CONF.read_text(), "copy it to dev too"


def test_the_server_config_includes_the_rights_and_dev_runs_the_same() -> None:
    assert f'include "{CONF.name}"' in SERVER_CONF.read_text().splitlines()
    assert (DEV_OVERLAY / SERVER_CONF.name).read_text() == SERVER_CONF.read_text(), (
        "copy it to the dev overlay too"
    )


def test_every_password_comes_from_the_environment() -> None:
    text = CONF.read_text()
    for user in (*SERVICES, "kozyr-admin"):
        assert f'"password": ${password_variable(user)}' in text
    assert "no_auth_user" not in text, "a deployment lets nobody in without credentials"


def test_the_prod_helm_values_carry_the_same_users() -> None:
    values = yaml.safe_load((REPO / "deploy/k8s/overlays/prod/nats-values.yaml").read_text())
    assert values["config"]["merge"] == helm_authorization("kozyr")
    env = values["container"]["env"]
    for user in (*SERVICES, "kozyr-admin"):
        assert env[password_variable(user)]["valueFrom"]["secretKeyRef"]["name"] == "kozyr-nats"
