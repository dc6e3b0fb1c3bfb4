"""`make run`: the whole stack on one machine, supervised, until Ctrl-C.

Starts PostgreSQL and NATS (the configured ones, or embedded servers with their data
in the data folder — `.kozyr/`, or KOZYR_DATA_DIR —, kept between runs), creates and
migrates the two databases — the table service's and matchmaking's own
(`Databases`) —, starts every service as a child process with the same `KOZYR_*`
environment a container would get, restarts a service that crashes, and prints the
endpoints, the data folder and demo tokens once every service answers SERVING to a
gRPC health check — until then a line says what it waits for (a banner printed at
spawn time sent the README's first example to ports nobody listened on yet). On
Ctrl-C/SIGTERM it stops the services gracefully, then the servers. Children die with
this process even if it is killed outright.

The embedded NATS runs with the production rights (`kozyr.bus.rights`): every service
connects as its own user (passwords kept in the data folder's `nats-users.json`); a connection
without credentials — a developer's tool — gets the admin's rights.
"""

from __future__ import annotations

import asyncio
import importlib.util
import json
import os
import secrets
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import timedelta
from pathlib import Path

import asyncpg
from sqlalchemy.engine import make_url

from kozyr import health, stackfile
from kozyr.bus.rights import ADMIN_USER, nats_url_for, server_config
from kozyr.infra import Infrastructure, libpq_dsn, provision
from kozyr.infra.servers import die_with_parent
from kozyr.runtime.auth import Role, mint_token

DEV_JWT_KEY_FILE = "dev-jwt-key"
NATS_USERS_FILE = "nats-users.json"
NATS_CONFIG_FILE = "nats.conf"
DATABASE = "kozyr"
"""The table service's database on the embedded server (a given server: its URL's)."""
MATCHMAKING_SUFFIX = "_matchmaking"
"""Matchmaking's database is the table's name with this suffix, on the same server."""
RESTART_BACKOFF_SECONDS = (1, 2, 5, 10, 30)
KEYS = frozenset({"KOZYR_JWT_KEY", "KOZYR_JWT_PREVIOUS_KEYS", "KOZYR_NATS_URL"})
"""What a keyless process (`ServiceProcess.keyless`) is not given."""
STILL_WAITING_SECONDS = 15.0
"""How often the wait for the services to serve says which ones it still waits for."""


def grpc_serving(port: int) -> bool:
    """A gRPC service is ready once its health check answers SERVING."""
    return health.serving(f"127.0.0.1:{port}")


def http_serving(port: int) -> bool:
    """The web edge is ready once its `/healthz` answers 200."""
    return health.web_serving(f"127.0.0.1:{port}")


@dataclass
class ServiceProcess:
    """One supervised service: `python -m <module>` on its own port — gRPC, or HTTP for
    the web edge (`scheme`, `port_variable`, `serving`)."""

    name: str
    module: str
    port: int
    proc: subprocess.Popen[bytes] | None = None
    restarts: int = 0
    next_start: float = 0.0
    extra_env: dict[str, str] = field(default_factory=dict)
    scheme: str = "grpc"
    port_variable: str = "KOZYR_GRPC_PORT"
    serving: Callable[[int], bool] = grpc_serving
    keyless: bool = False
    """No NATS user, no NATS URL, no JWT key: the web edge, which only forwards calls
    (the services check the tokens), gets none of them."""
    signs_tokens: bool = False
    """Keyless but for the signing key (KOZYR_JWT_KEY): the web table's page server,
    which mints development tokens for the names people log in with."""

    @property
    def available(self) -> bool:
        """Services are added issue by issue: only those that exist are started."""
        try:
            return importlib.util.find_spec(f"{self.module}.__main__") is not None
        except ModuleNotFoundError:
            return False


SERVICES = (
    ServiceProcess("table", "kozyr.table", int(os.environ.get("KOZYR_TABLE_PORT", "50051"))),
    ServiceProcess(
        "matchmaking", "kozyr.matchmaking", int(os.environ.get("KOZYR_MATCHMAKING_PORT", "50052"))
    ),
    ServiceProcess("bots", "kozyr.bots", int(os.environ.get("KOZYR_BOTS_PORT", "50053"))),
    ServiceProcess("clock", "kozyr.clock", int(os.environ.get("KOZYR_CLOCK_PORT", "50054"))),
    ServiceProcess(
        "webedge",
        "kozyr.webedge",
        int(os.environ.get("KOZYR_WEBEDGE_PORT", "8080")),
        scheme="http",
        port_variable="KOZYR_WEBEDGE_PORT",
        serving=http_serving,
        keyless=True,
        extra_env={
            # pages a developer serves on this machine, on any port (docs/api.md)
            "KOZYR_WEBEDGE_ALLOWED_ORIGINS": os.environ.get(
                "KOZYR_WEBEDGE_ALLOWED_ORIGINS", "http://127.0.0.1:*,http://localhost:*"
            )
        },
    ),
    ServiceProcess(
        "webtable",
        "kozyr.webtable",
        int(os.environ.get("KOZYR_WEBTABLE_PORT", "8090")),
        scheme="http",
        port_variable="KOZYR_WEBTABLE_PORT",
        serving=http_serving,
        keyless=True,
        signs_tokens=True,
        extra_env={
            # the page calls the edge on its own host (clients/web/README.md) and lets
            # anyone log in with a name: a developer's machine only
            "KOZYR_WEBTABLE_EDGE_PORT": os.environ.get("KOZYR_WEBEDGE_PORT", "8080"),
            "KOZYR_WEBTABLE_DEV_LOGIN": "true",
        },
    ),
)


def nats_passwords(data_dir: Path, names: list[str]) -> dict[str, str]:
    """Each NATS user's dev password, made once and kept in `.kozyr/nats-users.json`."""
    path = data_dir / NATS_USERS_FILE
    known: dict[str, str] = json.loads(path.read_text()) if path.exists() else {}
    wanted = {name: known.get(name) or secrets.token_urlsafe(24) for name in names}
    if wanted != known:
        path.write_text(json.dumps(wanted, indent=2))
        path.chmod(0o600)
    return wanted


def write_nats_config(
    data_dir: Path, services: list[ServiceProcess]
) -> tuple[Path, dict[str, str]]:
    """The embedded NATS's configuration: one user per service, and the admin."""
    users = [s.name for s in services if not s.keyless]
    passwords = nats_passwords(data_dir, [*users, ADMIN_USER])
    root = os.environ.get("KOZYR_SUBJECT_ROOT", "kozyr")
    path = data_dir / NATS_CONFIG_FILE
    path.write_text(server_config(passwords, root, anonymous_admin=True))
    path.chmod(0o600)
    return path, passwords


def dev_jwt_key(data_dir: Path) -> str:
    """KOZYR_JWT_KEY from the environment, else a random dev secret kept in .kozyr/."""
    configured = os.environ.get("KOZYR_JWT_KEY")
    if configured:
        return configured
    path = data_dir / DEV_JWT_KEY_FILE
    if not path.exists():
        path.write_text(secrets.token_urlsafe(48))
        path.chmod(0o600)
    return path.read_text().strip()


@dataclass(frozen=True)
class Databases:
    """The stack's databases: each service that appends events has its own (the table
    service's: `kozyr`; matchmaking's: `kozyr_matchmaking`), on one server."""

    table: str
    matchmaking: str

    @classmethod
    def on(cls, infra: Infrastructure) -> Databases:
        """`kozyr` and `kozyr_matchmaking` on the embedded server; on a given one, the
        database its URL names and that name with `_matchmaking`."""
        table = infra.database_url if infra.postgres is None else infra.database_url_for(DATABASE)
        parsed = make_url(table)
        matchmaking = parsed.set(database=f"{parsed.database}{MATCHMAKING_SUFFIX}")
        return cls(table, matchmaking.render_as_string(hide_password=False))

    @property
    def urls(self) -> tuple[str, str]:
        return self.table, self.matchmaking


async def create_and_migrate(infra: Infrastructure, databases: Databases) -> None:
    """Create the databases that do not exist yet on the server, migrate every one."""
    from kozyr.eventstore import migrate

    admin = await asyncpg.connect(libpq_dsn(infra.database_url))
    try:
        for url in databases.urls:
            name = make_url(url).database
            if not await admin.fetchval("SELECT 1 FROM pg_database WHERE datname = $1", name):
                await admin.execute(f'CREATE DATABASE "{name}"')
    finally:
        await admin.close()
    for url in databases.urls:
        await migrate(url)


def prepare_databases(infra: Infrastructure) -> Databases:
    """Create (where missing) and migrate the stack's databases; their URLs."""
    databases = Databases.on(infra)
    asyncio.run(create_and_migrate(infra, databases))
    return databases


def service_env(
    infra: Infrastructure, jwt_key: str, services: list[ServiceProcess]
) -> dict[str, str]:
    """What every service of the stack gets (a database URL is only for the service that
    owns the database: `ServiceProcess.extra_env`)."""
    env = {k: v for k, v in os.environ.items() if k != "KOZYR_DATABASE_URL"}
    env.update(
        KOZYR_NATS_URL=infra.nats_url,
        KOZYR_JWT_KEY=jwt_key,
        KOZYR_JWT_ALGORITHM=os.environ.get("KOZYR_JWT_ALGORITHM", "HS256"),
        KOZYR_LOG_FORMAT=os.environ.get("KOZYR_LOG_FORMAT", "console"),
    )
    for svc in services:
        env[f"KOZYR_{svc.name.upper()}_TARGET"] = f"127.0.0.1:{svc.port}"
    return env


def names(services: list[ServiceProcess]) -> str:
    """ "table, bots and clock"."""
    listed = [s.name for s in services]
    return ", ".join(listed[:-1]) + f" and {listed[-1]}" if len(listed) > 1 else "".join(listed)


class Supervisor:
    """Starts the services, restarts crashed ones with backoff, stops them on request;
    says when every one serves (`run`'s `on_ready`)."""

    def __init__(self, services: list[ServiceProcess], env: Mapping[str, str]) -> None:
        self.services = services
        self.env = env
        self.stopping = threading.Event()
        self.pending = list(services)
        """The services that have not answered SERVING to a gRPC health check yet."""
        self._started = 0.0
        self._next_note = 0.0

    def _spawn(self, svc: ServiceProcess) -> None:
        withheld = KEYS - {"KOZYR_JWT_KEY"} if svc.signs_tokens else KEYS
        given = {k: v for k, v in self.env.items() if not (svc.keyless and k in withheld)}
        env = {
            **given,
            **svc.extra_env,
            svc.port_variable: str(svc.port),
            "KOZYR_SERVICE_NAME": svc.name,
        }
        svc.proc = subprocess.Popen(
            [sys.executable, "-m", svc.module], env=env, preexec_fn=die_with_parent
        )

    def run(self, on_ready: Callable[[], None] = lambda: None) -> None:
        """Start every service and supervise them until `stopping`; `on_ready` runs once,
        when every one answers SERVING (a process that runs does not serve yet: the
        banner of `make run` waits for this, so its first example is not refused)."""
        for svc in self.services:
            self._spawn(svc)
        self._started = time.monotonic()
        self._next_note = self._started + STILL_WAITING_SECONDS
        if self.pending:
            print(
                f"waiting for {names(self.pending)} to serve"
                " (gRPC health SERVING; the web edge: its /healthz)…",
                flush=True,
            )
        else:
            on_ready()
        while not self.stopping.wait(0.5):
            for svc in self.services:
                self._check(svc)
            if self.pending:
                self._await_serving(on_ready)

    def _await_serving(self, on_ready: Callable[[], None]) -> None:
        """Ask each service not yet serving; `on_ready` once none is left, meanwhile a
        line every STILL_WAITING_SECONDS naming those still awaited."""
        self.pending = [s for s in self.pending if not s.serving(s.port)]
        now = time.monotonic()
        if not self.pending:
            on_ready()
        elif now >= self._next_note:
            waited = now - self._started
            print(f"… still waiting for {names(self.pending)} ({waited:.0f} s)", flush=True)
            self._next_note = now + STILL_WAITING_SECONDS

    def _check(self, svc: ServiceProcess) -> None:
        assert svc.proc is not None
        code = svc.proc.poll()
        if code is None:
            return
        now = time.monotonic()
        if svc.next_start == 0.0:
            delay = RESTART_BACKOFF_SECONDS[min(svc.restarts, len(RESTART_BACKOFF_SECONDS) - 1)]
            print(f"!! {svc.name} exited with code {code}; restarting in {delay}s", flush=True)
            svc.next_start = now + delay
        elif now >= svc.next_start:
            svc.restarts += 1
            svc.next_start = 0.0
            self._spawn(svc)

    def stop(self, grace: float = 15.0) -> None:
        """SIGTERM every service (graceful drain), SIGKILL what is left after `grace`."""
        running = [s.proc for s in self.services if s.proc and s.proc.poll() is None]
        for proc in running:
            proc.send_signal(signal.SIGTERM)
        deadline = time.monotonic() + grace
        for proc in running:
            try:
                proc.wait(max(0.1, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()


def finding_the_stack(data_dir: Path, stack_file: Path, cwd: Path) -> str:
    """How the `kozyr` tools find this stack: by themselves from any folder of the
    checkout when its data folder is the checkout's `.kozyr`; else only with the same
    KOZYR_DATA_DIR (`kozyr.stackfile.find_file`), which this line gives to export."""
    if data_dir == (cwd / stackfile.DATA_DIR).resolve():
        return f"`kozyr` run anywhere in this checkout finds the stack in {stack_file}"
    return (
        f"`kozyr` finds the stack in {stack_file} where KOZYR_DATA_DIR is set as here: "
        f"export KOZYR_DATA_DIR={data_dir}"
    )


def _shown(url: str) -> str:
    """A database URL fit for a terminal and its scroll-back: the password as `***` (a
    testcontainers server has one; the stack file keeps the whole URL, readable by its
    owner only)."""
    return make_url(url).render_as_string(hide_password=True)


NATS_ANONYMOUS_ADMIN = (
    "              !! a connection WITHOUT credentials is the NATS admin (every subject and"
    " stream): for development on this machine only"
)


def nats_lines(url: str, source: str, embedded: bool, data_dir: Path) -> list[str]:
    """The banner's NATS lines. The embedded NATS lets a connection without credentials
    in as its admin (a developer's `nats` tool needs none): said where it is seen, so
    nobody mistakes the dev stack's NATS for a locked-down one."""
    if not embedded:
        return [f"  NATS        {url}   ({source}; its own users)"]
    users = f"one user per service, {data_dir / NATS_CONFIG_FILE}"
    return [f"  NATS        {url}   ({source}; {users})", NATS_ANONYMOUS_ADMIN]


def banner(
    infra: Infrastructure,
    databases: Databases,
    services: list[ServiceProcess],
    jwt_key: str,
    data_dir: Path,
) -> str:
    """What `make run` prints once every service serves: where everything is, the
    data folder it really uses, demo tokens."""
    lines = [
        "",
        "kozyr is running — Ctrl-C stops everything.",
        f"  PostgreSQL  {_shown(databases.table)}   ({infra.sources['postgres']}; the table's)",
        f"              {_shown(databases.matchmaking)}   (matchmaking's own)",
        *nats_lines(infra.nats_url, infra.sources["nats"], bool(infra.nats), data_dir),
    ]
    lines += [f"  {s.name:<11} {s.scheme}://127.0.0.1:{s.port}" for s in services]
    if not services:
        lines.append("  (no service is built yet: only the infrastructure runs)")
    lines.append(f"  data        {data_dir}   (KOZYR_DATA_DIR; kept between runs)")
    page = next((s for s in services if s.name == "webtable"), None)
    if page is not None:
        lines += ["", f"Play in a browser: http://127.0.0.1:{page.port}/ (log in with any name)"]
    lines += ["", "Demo tokens (valid 24 h; `kozyr token --help` mints more):"]
    for subject, role in (("alice", Role.PLAYER), ("admin", Role.ADMIN), ("dev", Role.SERVICE)):
        token = mint_token(subject, role, key=jwt_key, ttl=timedelta(hours=24))
        lines.append(f"  {role.value:<8} {subject:<6} {token}")
    return "\n".join(lines) + "\n"


def main() -> int:
    data_dir = stackfile.data_dir()
    data_dir.mkdir(parents=True, exist_ok=True)
    services = [s for s in SERVICES if s.available]
    nats_config, passwords = write_nats_config(data_dir, services)
    with provision(data_dir, durable=True, nats_config=nats_config) as infra:
        databases = prepare_databases(infra)
        jwt_key = dev_jwt_key(data_dir)
        owned = {"table": databases.table, "matchmaking": databases.matchmaking}
        for svc in services:  # bots and clock keep no data: no database URL at all
            if svc.name in owned:
                svc.extra_env["KOZYR_DATABASE_URL"] = owned[svc.name]
        if infra.nats is not None:  # our embedded server: each service as its own user
            for svc in (s for s in services if not s.keyless):
                svc.extra_env["KOZYR_NATS_URL"] = nats_url_for(
                    infra.nats_url, svc.name, passwords[svc.name]
                )
        supervisor = Supervisor(services, service_env(infra, jwt_key, services))

        def request_stop(signum: int, _frame: object) -> None:
            supervisor.stopping.set()

        signal.signal(signal.SIGINT, request_stop)
        signal.signal(signal.SIGTERM, request_stop)
        try:
            own = {s.name: s.extra_env for s in services}
            found = stackfile.announce(data_dir, supervisor.env, own)

            def ready() -> None:
                print(banner(infra, databases, services, jwt_key, data_dir), flush=True)
                print(finding_the_stack(data_dir, found, Path.cwd()), flush=True)

            supervisor.run(on_ready=ready)
        finally:
            stackfile.remove(data_dir)
            print("stopping services…", flush=True)
            supervisor.stop()
            print("stopping PostgreSQL and NATS…", flush=True)
    print("stopped.", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
