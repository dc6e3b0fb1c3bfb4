"""The deploy check of `make lint` (tools/check_deploy.py) passes on the repository and
fails on a deliberately broken copy of each artifact: the Dockerfile (hadolint), the
compose file (Docker Compose's parser, then the health/restart/limits/depends_on rules),
the k8s overlays (kustomize rendering, kubernetes-validate --strict, the custom resource
and Helm values shape checks, the Deployment rules) and the security scan (checkov).

Each case copies the deploy files to a temp folder, breaks one thing there and runs the
script over the copy (`--root`) as `make lint` does, in a subprocess.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

REPO = Path(__file__).resolve().parents[2]
SCRIPT = REPO / "tools/check_deploy.py"
DEPLOY_FILES = ("deploy", "docker-compose.yml", ".env.example", ".dockerignore")


def check_deploy(root: Path, *only: str) -> subprocess.CompletedProcess[str]:
    args = [arg for check in only for arg in ("--only", check)]
    return subprocess.run(
        [sys.executable, str(SCRIPT), "--root", str(root), *args],
        capture_output=True,
        text=True,
        check=False,
        timeout=300,
    )


@pytest.fixture
def copy(tmp_path: Path) -> Path:
    """The deploy files of the repository, copied to a temp folder."""
    root = tmp_path / "repo"
    root.mkdir()
    for name in DEPLOY_FILES:
        source = REPO / name
        if source.is_dir():
            shutil.copytree(source, root / name)
        else:
            shutil.copy2(source, root / name)
    return root


def replace_in(path: Path, old: str, new: str) -> None:
    text = path.read_text()
    assert old in text, f"{old!r} is not in {path}"
    path.write_text(text.replace(old, new, 1))


def test_the_repository_passes() -> None:
    result = check_deploy(REPO, "dockerfile", "compose", "k8s")
    assert result.returncode == 0, result.stderr
    assert "ok (dockerfile, compose, k8s)" in result.stdout


def test_an_untouched_copy_passes(copy: Path) -> None:
    result = check_deploy(copy, "compose", "k8s")
    assert result.returncode == 0, result.stderr


BREAKAGES = {
    # hadolint: apt-get without pinned versions, cleanup and --no-install-recommends
    "dockerfile-lint": (
        "dockerfile",
        "deploy/docker/Dockerfile",
        "USER 10001:10001",
        "RUN apt-get update && apt-get install -y curl\nUSER 10001:10001",
        "hadolint",
    ),
    # issue 23: setuptools left in the runtime venv
    "dockerfile-installers": (
        "dockerfile",
        "deploy/docker/Dockerfile",
        "pip uninstall --yes setuptools pip",
        "pip uninstall --yes pip",
        "the runtime venv /opt/kozyr keeps setuptools, which nothing runs there",
    ),
    # ... and the build context taking compose's secrets (.env)
    "dockerignore-secrets": (
        "dockerfile",
        ".dockerignore",
        "\n.env\n",
        "\n",
        ".dockerignore must leave out .env",
    ),
    # Docker Compose's own parser: a dependency on a service that does not exist
    "compose-parser": (
        "compose",
        "docker-compose.yml",
        "      table: {condition: service_healthy}\n\n  clock:",
        "      ghost: {condition: service_healthy}\n\n  clock:",
        "docker compose config failed",
    ),
    # the rules: every service has a health check
    "compose-no-healthcheck": (
        "compose",
        "docker-compose.yml",
        '    test: ["CMD", "python", "-m", "kozyr.health", "--timeout", "5"]',
        '    test: ["NONE"]',
        "table has no health check",
    ),
    # the rules: the health check is the light probe, not the whole CLI
    "compose-heavy-probe": (
        "compose",
        "docker-compose.yml",
        '    test: ["CMD", "python", "-m", "kozyr.health", "--timeout", "5"]',
        '    test: ["CMD", "kozyr", "health"]',
        "table's health check must run python -m kozyr.health",
    ),
    "dockerfile-heavy-probe": (
        "dockerfile",
        "deploy/docker/Dockerfile",
        'CMD ["python", "-m", "kozyr.health", "--timeout", "5"]',
        'CMD ["kozyr", "health"]',
        "the HEALTHCHECK must run python -m kozyr.health",
    ),
    # the Deployment rules: a probe with Kubernetes' 1 s default timeout
    "k8s-probe-timeout": (
        "k8s",
        "deploy/k8s/base/table.yaml",
        "            periodSeconds: 5\n            timeoutSeconds: 5\n",
        "            periodSeconds: 5\n",
        "readinessProbe needs timeoutSeconds >= 5",
    ),
    # kubernetes-validate --strict: a misspelt field
    "k8s-strict-schema": (
        "k8s",
        "deploy/k8s/base/table.yaml",
        "revisionHistoryLimit: 5",
        "revisionHistroyLimit: 5",
        "'revisionHistroyLimit' was unexpected",
    ),
    # kustomize: an overlay naming a file that is not there
    "k8s-render": (
        "k8s",
        "deploy/k8s/overlays/dev/kustomization.yaml",
        "  - nats.yaml",
        "  - nats-server.yaml",
        "kubectl kustomize deploy/k8s/overlays/dev failed",
    ),
    # the custom resource's shape check (not schema-checked)
    "k8s-custom-resource": (
        "k8s",
        "deploy/k8s/overlays/prod/postgres-cluster.yaml",
        "instances: 3",
        "instances: 1",
        "must have instances: 3",
    ),
    # the Deployment rules: a writable root file system
    "k8s-rules": (
        "k8s",
        "deploy/k8s/base/clock.yaml",
        "readOnlyRootFilesystem: true",
        "readOnlyRootFilesystem: false",
        "kozyr-clock container clock: readOnlyRootFilesystem is not set",
    ),
    # the CloudNativePG Database's shape check: matchmaking's database without an owner
    "k8s-custom-resource-database": (
        "k8s",
        "deploy/k8s/overlays/prod/postgres-cluster.yaml",
        "  owner: kozyr_matchmaking\n",
        "",
        "a CloudNativePG Database needs spec.owner",
    ),
    # each service its own database: matchmaking mapped to the table's URL
    "k8s-matchmaking-database": (
        "k8s",
        "deploy/k8s/base/matchmaking.yaml",
        "key: KOZYR_MATCHMAKING_DATABASE_URL",
        "key: KOZYR_DATABASE_URL",
        "Deployment/kozyr-matchmaking uses the table's database",
    ),
    # ... and migrated by the migration Job
    "k8s-migrate-both": (
        "k8s",
        "deploy/k8s/base/migrate-job.yaml",
        "key: KOZYR_MATCHMAKING_DATABASE_URL",
        "key: KOZYR_DATABASE_URL",
        "Job/kozyr-migrate does not migrate the matchmaking's database",
    ),
    # issue 23: PostgreSQL's health check over the Unix socket (passes during init)
    "compose-pg-isready-socket": (
        "compose",
        "docker-compose.yml",
        '"pg_isready", "-h", "127.0.0.1",',
        '"pg_isready",',
        "compose: postgres's health check: pg_isready must check over TCP",
    ),
    "k8s-pg-isready-socket": (
        "k8s",
        "deploy/k8s/overlays/dev/postgres.yaml",
        'readinessProbe:\n            exec: {command: ["pg_isready", "-h", "127.0.0.1",',
        'readinessProbe:\n            exec: {command: ["pg_isready",',
        "StatefulSet/postgres container postgres readinessProbe: pg_isready must check",
    ),
    # issue 23: a Secret handed over whole (every key, both database URLs) ...
    "k8s-secret-envfrom": (
        "k8s",
        "deploy/k8s/base/bots.yaml",
        "            - configMapRef: {name: kozyr-config}\n",
        "            - configMapRef: {name: kozyr-config}\n"
        "            - secretRef: {name: kozyr-secrets}\n",
        "Deployment/kozyr-bots container bots takes every key of Secret kozyr-secrets",
    ),
    # ... or one key a service does not need: a database URL for the clock
    "k8s-secret-key": (
        "k8s",
        "deploy/k8s/base/clock.yaml",
        "key: KOZYR_LIVEKIT_URL,",
        "key: KOZYR_DATABASE_URL,",
        "container clock reads Secret kozyr-secrets key KOZYR_DATABASE_URL, which it does not",
    ),
    # ... and PostgreSQL open to a service without a database
    "k8s-postgres-policy": (
        "k8s",
        "deploy/k8s/base/networkpolicies.yaml",
        "values: [kozyr-table, kozyr-matchmaking, kozyr-migrate]",
        "values: [kozyr-table, kozyr-matchmaking, kozyr-migrate, kozyr-bots]",
        "NetworkPolicy/kozyr-postgresql-from-kozyr admits",
    ),
    # issue 23: the migration Job not named after its release ...
    "k8s-migration-job-name": (
        "k8s",
        "deploy/k8s/overlays/prod/kustomization.yaml",
        'options: {delimiter: "-", index: 2}',
        'options: {delimiter: "-", index: 1}',
        "Job/kozyr-0.1.0 must be named kozyr-migrate-0.1.0, after its release",
    ),
    # ... or never removed when done
    "k8s-migration-job-ttl": (
        "k8s",
        "deploy/k8s/base/migrate-job.yaml",
        "  ttlSecondsAfterFinished: 3600\n",
        "",
        "Job/kozyr-migrate-dev: ttlSecondsAfterFinished must remove it when done",
    ),
    # issue 23: dev's local image pulled Always (ImagePullBackOff on kind/minikube)
    "k8s-dev-pull-policy": (
        "k8s",
        "deploy/k8s/overlays/dev/kustomization.yaml",
        "containers/1/imagePullPolicy\n        value: IfNotPresent",
        "containers/1/imagePullPolicy\n        value: Always",
        "Job/kozyr-migrate-dev container table: the local image kozyr:dev must not be pulled",
    ),
    # issue 23: NATS sized from the host: JetStream's memory store unset ...
    "compose-nats-jetstream": (
        "compose",
        "deploy/nats/nats.conf",
        "  max_memory_store: 64MiB\n",
        "",
        "compose: nats: NATS needs JetStream's max_memory_store",
    ),
    # ... a heap limit beyond the container's
    "compose-nats-gomemlimit": (
        "compose",
        "docker-compose.yml",
        "GOMEMLIMIT: 400MiB",
        "GOMEMLIMIT: 500MiB",
        "compose: nats: NATS's max_memory_store (67108864 B) must be at most half its",
    ),
    # ... a file store beyond its volume
    "k8s-nats-file-store": (
        "k8s",
        "deploy/k8s/overlays/dev/nats.conf",
        "max_file_store: 4GiB",
        "max_file_store: 6GiB",
        "StatefulSet/nats container nats: NATS's max_file_store (6442450944 B) exceeds",
    ),
    # ... prod's heap unbounded
    "k8s-nats-values-gomemlimit": (
        "k8s",
        "deploy/k8s/overlays/prod/nats-values.yaml",
        "    GOMEMLIMIT: 3GiB\n",
        "",
        "nats-values.yaml: NATS needs GOMEMLIMIT (else it sizes itself from the host)",
    ),
    # a NATS password unquoted in the server's environment: `12-ab…` stops the server
    "compose-nats-password-unquoted": (
        "compose",
        "docker-compose.yml",
        "KOZYR_NATS_BOTS_PASSWORD: '\"${KOZYR_NATS_BOTS_PASSWORD:?",
        "KOZYR_NATS_BOTS_PASSWORD: ${KOZYR_NATS_BOTS_PASSWORD:?",
        "compose: nats: KOZYR_NATS_BOTS_PASSWORD must hold the password in double quotes",
    ),
    # (the closing quote left in place above: the value is then `…"`, unquoted still)
    "k8s-nats-password-from-the-secret": (
        "k8s",
        "deploy/k8s/overlays/dev/nats.yaml",
        "- {name: KOZYR_NATS_CLOCK_PASSWORD, value: '\"$(NATS_CLOCK_SECRET)\"'}",
        "- {name: KOZYR_NATS_CLOCK_PASSWORD, value: '$(NATS_CLOCK_SECRET)'}",
        "container nats: KOZYR_NATS_CLOCK_PASSWORD must hold the password in double quotes",
    ),
    # issue 23: a gRPC port published on every interface
    "compose-published-everywhere": (
        "compose",
        "docker-compose.yml",
        '"${KOZYR_PUBLISH_ADDRESS:-127.0.0.1}:50054:50054"',
        '"50054:50054"',
        "compose: clock publishes port 50054 on 0.0.0.0: publish on 127.0.0.1 by default",
    ),
    # issue 23: the image's group left to a system id (gid 10001 had no name)
    "dockerfile-user-group": (
        "dockerfile",
        "deploy/docker/Dockerfile",
        "RUN groupadd --system --gid 10001 kozyr \\\n && useradd --system --uid 10001 --gid 10001",
        "RUN useradd --system --uid 10001 --user-group",
        "Dockerfile: create the group 10001 (groupadd --gid 10001) and the user 10001 in it",
    ),
    # issue 23: the hardening dropped from every kozyr container (a writable root,
    # root's capabilities, setuid allowed, the image's user overridable) ...
    "compose-kozyr-not-hardened": (
        "compose",
        "docker-compose.yml",
        "x-kozyr-hardened: &kozyr-hardened\n  <<: *hardened\n",
        "x-kozyr-hardened: &kozyr-hardened\n",
        "compose: table must have a read-only root file system (read_only: true)",
    ),
    # ... one kozyr container as root
    "compose-kozyr-as-root": (
        "compose",
        "docker-compose.yml",
        '  user: "10001:10001"\n',
        '  user: "0:0"\n',
        'compose: migrate must run as the image\'s user (user: "10001:10001")',
    ),
    # ... PostgreSQL keeping its capabilities
    "compose-postgres-capabilities": (
        "compose",
        "docker-compose.yml",
        "    image: postgres:16-alpine\n    <<: *hardened\n",
        "    image: postgres:16-alpine\n    read_only: true\n",
        "compose: postgres must drop every capability (cap_drop: [ALL])",
    ),
    # issue 23: the migration jobs given the JWT key they never read
    "compose-migration-jwt-key": (
        "compose",
        "docker-compose.yml",
        "      <<: [*kozyr-log, *matchmaking-database]",
        "      <<: [*kozyr-env, *matchmaking-database]",
        "compose: migrate-matchmaking gets KOZYR_JWT_KEY (in KOZYR_JWT_KEY), which it does",
    ),
    # issue 23: a StatefulSet whose governing Service is not headless
    "k8s-statefulset-service": (
        "k8s",
        "deploy/k8s/overlays/dev/postgres.yaml",
        "  clusterIP: None\n",
        "",
        "StatefulSet/postgres: its governing Service/postgres must be headless",
    ),
    # ... replicas beside an HPA (each apply resets the scale)
    "k8s-replicas-beside-hpa": (
        "k8s",
        "deploy/k8s/overlays/prod/replicas.yaml",
        "  name: kozyr-table\nspec:\n",
        "  name: kozyr-table\nspec:\n  replicas: 3\n",
        "Deployment/kozyr-table sets replicas beside HorizontalPodAutoscaler/kozyr-table",
    ),
    # ... a namespace without the restricted Pod Security Standard
    "k8s-pod-security-label": (
        "k8s",
        "deploy/k8s/base/namespace.yaml",
        "pod-security.kubernetes.io/enforce: restricted",
        "pod-security.kubernetes.io/enforce: baseline",
        "Namespace/kozyr: label pod-security.kubernetes.io/enforce must be restricted",
    ),
    # ... and a pod that standard would refuse
    "k8s-restricted-pod": (
        "k8s",
        "deploy/k8s/overlays/dev/postgres.yaml",
        "runAsNonRoot: true",
        "runAsNonRoot: false",
        "StatefulSet/postgres container postgres: the restricted Pod Security Standard needs"
        " runAsNonRoot: true",
    ),
    "k8s-nats-values-reloader": (
        "k8s",
        "deploy/k8s/overlays/prod/nats-values.yaml",
        "reloader:\n  merge:\n    securityContext:\n      allowPrivilegeEscalation: false",
        "reloader:\n  merge:\n    securityContext:\n      allowPrivilegeEscalation: true",
        "reloader: the restricted Pod Security Standard needs allowPrivilegeEscalation: false",
    ),
    # the NATS Helm values: a server too old for the clock's message schedules
    "k8s-nats-values": (
        "k8s",
        "deploy/k8s/overlays/prod/nats-values.yaml",
        "tag: 2.12-alpine",
        "tag: 2.10-alpine",
        "must be nats-server 2.12+",
    ),
}


@pytest.mark.parametrize(
    ("check", "path", "old", "new", "message"), BREAKAGES.values(), ids=BREAKAGES.keys()
)
def test_a_broken_copy_fails(
    copy: Path, check: str, path: str, old: str, new: str, message: str
) -> None:
    replace_in(copy / path, old, new)
    result = check_deploy(copy, check)
    assert result.returncode == 1, result.stdout + result.stderr
    assert message in result.stderr


def test_a_dockerignore_beside_the_dockerfile_is_never_read(copy: Path) -> None:
    (copy / "deploy/docker/.dockerignore").write_text(".venv\n")
    result = check_deploy(copy, "dockerfile")
    assert result.returncode == 1, result.stdout + result.stderr
    assert "deploy/docker/.dockerignore is never read" in result.stderr


def test_a_new_release_gets_a_migration_job_of_its_own(copy: Path) -> None:
    """The release step of docs/operations.md (a new image tag) renames the Job, so
    `kubectl apply` makes a new one instead of changing the finished, immutable one."""
    overlay = copy / "deploy/k8s/overlays/prod"
    replace_in(overlay / "kustomization.yaml", "newTag: 0.1.0", "newTag: 0.2.0-rc1")
    rendered = subprocess.run(
        [str(Path(sys.executable).parent / "kubectl"), "kustomize", str(overlay)],
        capture_output=True,
        text=True,
        check=True,
        timeout=120,
    ).stdout
    jobs = [doc for doc in yaml.safe_load_all(rendered) if doc and doc["kind"] == "Job"]
    assert [job["metadata"]["name"] for job in jobs] == ["kozyr-migrate-0.2.0-rc1"]
    result = check_deploy(copy, "k8s")
    assert result.returncode == 0, result.stderr


def test_the_security_scan_fails_on_privilege_escalation(copy: Path) -> None:
    replace_in(
        copy / "deploy/k8s/base/bots.yaml",
        "allowPrivilegeEscalation: false",
        "allowPrivilegeEscalation: true",
    )
    result = check_deploy(copy, "checkov")
    assert result.returncode == 1, result.stdout + result.stderr
    assert "CKV_K8S_20" in result.stderr
    assert "Deployment.kozyr.kozyr-bots" in result.stderr


def test_the_dev_overlay_runs_the_same_postgres_script() -> None:
    """kustomize reads files under its own folder only: the dev overlay holds a copy of
    the script that makes matchmaking's database (compose mounts the original)."""
    original = REPO / "deploy/postgres/kozyr-matchmaking.sh"
    copy = REPO / "deploy/k8s/overlays/dev/kozyr-matchmaking.sh"
    assert copy.read_text() == original.read_text(), "copy it to the dev overlay too"
