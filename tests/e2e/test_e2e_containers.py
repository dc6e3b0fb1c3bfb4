"""docker-compose.yml for real, as an operator runs it: the image built from
deploy/docker/Dockerfile, `docker compose up --wait`, and the stack played through its
published ports. Skipped, with the reason, when no Docker engine answers (`.ci/run`
starts one; docs/testing.md, "Containers").

One stack for the module, one game, every check on it (the cheapest run that proves
all of it; each test below asserts one thing the run observed):
- every container runs as docker-compose.yml hardens it (`docker inspect`): a read-only
  root file system, every capability dropped, no new privileges, kozyr's as uid 10001,
  the migration jobs without the JWT key — so everything below is the hardened stack
  playing (issue 23);
- a matchmaking ticket asking for computers is matched at once, the free seats filled
  by computers (the bots service plays them, think time 0 through compose's own knob);
- the ticket's player plays her seat through the table service's published port
  (tests/e2e/players.py: she reconnects and re-sends like any client) while
  `docker compose restart table` restarts the table service mid-game; the game goes on
  to its end and she is rated;
- `kozyr verify` (run in the table's container, the operator's way in) finds the
  table's log intact;
- `docker compose stop`: every service exits 0 on SIGTERM, with no
  "exception was never retrieved" in its log (issue 23, defect 8);
- `docker compose down` then `up --wait`: the table, the rating and the JetStream
  streams are still there, and `kozyr verify` still passes;
- NATS logged no permission violation (each service runs as its own NATS user).

Two runs on one engine coexist: the compose project, the image tag and the volumes are
named per run, and the published ports are the engine's choice (an override file
publishes each service's port on 127.0.0.1 with no fixed host port; the test reads them
back with `docker compose port`). The stack is removed with `down -v` at the end, and
the image tag too (its layers stay in the engine's build cache for the next run).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import random
import secrets
import uuid
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import grpc
import pytest

from kozyr.api.common.v1 import games_pb2, seats_pb2
from kozyr.api.matchmaking.v1 import matchmaking_service_pb2 as mm_pb
from kozyr.api.table.v1 import views_pb2
from kozyr.client import MatchmakingClient, TableClient
from tests.e2e.matchmaking.conftest import eventually
from tests.e2e.players import RECONNECT_ON, ScriptedClient, SeatLog, chooser, play_table
from tests.support.containers import engine_problem, no_engine_reason, run
from tests.support.matchmaking import final_state
from tests.support.tables import JWT_KEY, Seat, token
from tools.check_deploy import compose_config, tool

pytestmark = [
    pytest.mark.e2e,
    # The image build (~1-3 min), two `up --wait` (~1-2 min each) and a game, on a
    # loaded 2-core machine: more than the suite's 600 s per test.
    pytest.mark.timeout(1800),
]

REPO = Path(__file__).resolve().parents[2]
DOCKERFILE = REPO / "deploy/docker/Dockerfile"
OUR_IMAGE = "kozyr"
"""The image docker-compose.yml runs (any tag); each run builds a tag of its own instead."""
THREE = games_pb2.GAME_THREE_FIVE_EIGHT
PLAYER = "dana"
SERVICES = ("table", "matchmaking", "bots", "clock")
EDGES = ("webedge", "webtable")
"""Processes that hold no key: the gRPC-Web edge forwards calls, the services check them;
the web table page serves its files (compose gives it no development login)."""
MIGRATIONS = ("migrate", "migrate-matchmaking")
SERVERS = ("postgres", "nats")
KOZYR_USER = "10001:10001"
"""The kozyr image's user, which compose names for every kozyr container."""
BUILD_SECONDS = 1200.0
UP_SECONDS = 600
GAME_SECONDS = 600.0
RUNNING_SECONDS = 90.0
"""How long a published service may take to run again (a restart) before the test says
why it does not."""
RESTART_AT_VERSION = 40
"""The table service is restarted once the game has gone this far (a few tricks in)."""
NEVER_RETRIEVED = "exception was never retrieved"
"""asyncio's complaint about a task or gather left failing unseen (defect 8's log line)."""


def compose_env(path: Path) -> None:
    """.env.example with fresh secrets, the tests' JWT key (the test mints the tokens)
    and no think time for the computers (compose's own KOZYR_BOTS_THINK_SECONDS).

    Each NATS password starts like a date (`12-`): nats-server parses a variable's
    value as a configuration value, and before compose quoted them such a password
    stopped the server (one random `token_urlsafe` in a few dozen did; CI saw it)."""
    values: dict[str, str] = {}
    for line in (REPO / ".env.example").read_text().splitlines():
        if line.strip() and not line.startswith("#"):
            name, _, value = line.partition("=")
            if "change-me" in value:
                hostile = "12-" if name.startswith("KOZYR_NATS_") else ""
                value = hostile + secrets.token_urlsafe(24)
            values[name] = value
    assert "KOZYR_BOTS_THINK_SECONDS" in values, "compose no longer offers the think time"
    values.update(KOZYR_JWT_KEY=JWT_KEY, KOZYR_BOTS_THINK_SECONDS="0")
    path.write_text("".join(f"{name}={value}\n" for name, value in values.items()))


def compose_override(model: dict[str, Any], image: str) -> tuple[str, dict[str, int]]:
    """An override file: this run's image for every kozyr service (never built or
    pulled by compose), and each published port on 127.0.0.1 with a host port the
    engine picks. Returns it and each service's published container port."""
    lines, published = ["services:"], {}
    for name, service in sorted(model["services"].items()):
        ours = str(service.get("image", "")).partition(":")[0] == OUR_IMAGE
        targets = [int(port["target"]) for port in service.get("ports") or []]
        if not ours and not targets:
            continue
        lines.append(f"  {name}:")
        if ours:
            lines += [f"    image: {image}", "    pull_policy: never"]
            if "build" in service:
                lines.append("    build: !reset null")
        if targets:
            published[name] = targets[0]
            lines.append("    ports: !override")
            lines += [f'      - "127.0.0.1::{target}"' for target in targets]
    return "\n".join(lines) + "\n", published


@dataclass
class ComposeProject:
    """docker-compose.yml under a project name of this run's, with its override file."""

    name: str
    env_file: Path
    override: Path
    published: dict[str, int]
    """service → its container port that compose publishes."""
    addresses: dict[str, str] = field(default_factory=dict)
    """service → host:port it is published on now (read after every start)."""

    def command(self, *args: str) -> list[str]:
        return [
            tool("docker-compose"),
            *("--project-name", self.name, "--project-directory", str(REPO)),
            *("--env-file", str(self.env_file)),
            *("-f", str(REPO / "docker-compose.yml"), "-f", str(self.override)),
            *args,
        ]

    async def run(self, *args: str, seconds: float = 180.0) -> str:
        """`docker compose ARGS`; fails the test with compose's output when it fails."""
        code, out = await run(self.command(*args), seconds=seconds)
        assert code == 0, f"docker compose {' '.join(args)} failed ({code}):\n{out}"
        return out

    async def up(self) -> None:
        """Start everything and wait until every service is healthy (the migration
        jobs done), then read the published ports."""
        wait = ("--wait", "--wait-timeout", str(UP_SECONDS))
        code, out = await run(self.command("up", "--detach", *wait), seconds=UP_SECONDS + 60)
        assert code == 0, f"docker compose up failed ({code}):\n{out}\n{await self.why()}"
        await self.read_addresses()

    async def why(self) -> str:
        """What a failed `up` leaves to read: every container's state and log's tail."""
        _, states = await run(self.command("ps", "--all"), seconds=60)
        _, logs = await run(self.command("logs", "--no-color", "--tail", "30"), seconds=60)
        return f"{states}\n{logs}"

    async def read_addresses(self) -> None:
        """Each published service's `host:port`, read from `docker inspect` (one engine
        call for all). A service being restarted is waited for, RUNNING_SECONDS at most;
        one still not running then fails the test with every container's state and log.

        Seen in CI: `up --wait` exited 0 while NATS, refusing a password it parsed as a
        date, restarted in a loop, and the services that wait for it stayed `created`
        (never started, empty logs); the test then spent its whole budget waiting."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + RUNNING_SECONDS
        while missing := await self._read_published():
            if loop.time() > deadline:
                states = {s: doc.get("State", {}).get("Status") for s, doc in missing.items()}
                raise AssertionError(f"not running: {states}\n{await self.why()}")
            await asyncio.sleep(1)

    async def _read_published(self) -> dict[str, dict[str, Any]]:
        """Fill `addresses` from the running containers; returns the services still
        without an address → their container's `docker inspect` ({} when none)."""
        containers = await self.inspect()
        missing: dict[str, dict[str, Any]] = {}
        for service, port in self.published.items():
            doc = containers.get(service, {})
            ports = (doc.get("NetworkSettings") or {}).get("Ports") or {}
            bindings = ports.get(f"{port}/tcp") or []
            if doc.get("State", {}).get("Running") and bindings:
                host = bindings[0]["HostIp"] or "127.0.0.1"
                self.addresses[service] = f"{host}:{bindings[0]['HostPort']}"
            else:
                missing[service] = doc
        return missing

    def target(self, service: str) -> str:
        return self.addresses[service]

    async def exec(self, service: str, *command: str) -> str:
        return await self.run("exec", "-T", service, *command, seconds=120)

    async def logs(self, service: str) -> str:
        return await self.run("logs", "--no-color", service)

    async def inspect(self) -> dict[str, dict[str, Any]]:
        """`docker inspect` of every container of the project, the finished migration
        jobs' too: service → its container's document."""
        ids = (await self.run("ps", "--all", "--quiet", seconds=60)).split()
        assert ids, "no container in the project"
        code, out = await run(["docker", "inspect", *ids], seconds=60)
        assert code == 0, f"docker inspect failed ({code}):\n{out}"
        return {
            doc["Config"]["Labels"]["com.docker.compose.service"]: doc for doc in json.loads(out)
        }

    async def states(self) -> dict[str, dict[str, Any]]:
        """`docker compose ps --all`: each service's container state and exit code."""
        out = await self.run("ps", "--all", "--format", "json")
        rows = [json.loads(line) for line in out.splitlines() if line.startswith("{")]
        return {row["Service"]: row for row in rows}


async def build_image(tag: str) -> None:
    """The image, from deploy/docker/Dockerfile as it is. `--network host`: an engine
    whose containers have no way out (the one of ../shared/container) still downloads
    from PyPI; elsewhere it is the same build."""
    command = ["docker", "build", "--network", "host", "-f", str(DOCKERFILE), "-t", tag, str(REPO)]
    code, out = await run(command, seconds=BUILD_SECONDS)
    assert code == 0, f"building the image failed ({code}):\n{out[-4000:]}"


@contextlib.asynccontextmanager
async def compose_stack(folder: Path) -> AsyncIterator[ComposeProject]:
    """Build this run's image, bring the stack up; `down -v` and untag after."""
    run_id = uuid.uuid4().hex[:10]
    image = f"kozyr-e2e:{run_id}"
    env_file, override = folder / "compose.env", folder / "compose.override.yml"
    compose_env(env_file)
    text, published = compose_override(compose_config(REPO, env_file), image)
    override.write_text(text)
    project = ComposeProject(f"kozyr-e2e-{run_id}", env_file, override, published)
    try:
        await build_image(image)
        await project.up()
        yield project
    finally:
        await run(project.command("down", "--volumes", "--remove-orphans"), seconds=300)
        await run(["docker", "image", "rm", image], seconds=120)


@dataclass
class Observed:
    """What the run saw; each test asserts one part of it."""

    ticket: mm_pb.WatchTicketResponse
    seated: views_pb2.TableView
    restarted_at: int
    log: SeatLog
    rating: mm_pb.Rating
    verified: dict[str, Any]
    stopped: dict[str, dict[str, Any]]
    service_logs: dict[str, str]
    streams_before: dict[str, int]
    """JetStream stream → its last sequence, before `down`."""
    streams_after: dict[str, int]
    after_up: views_pb2.TableView
    rating_after_up: mm_pb.Rating
    verified_after_up: dict[str, Any]
    nats_logs: list[str]
    containers: dict[str, dict[str, Any]]
    """service → `docker inspect` of its container, once the stack was first up."""
    identity: str
    """`id` in the table service's container."""


async def until_version(target: str, table_id: str, version: int) -> int:
    """Wait, watching the table, until its version reaches `version`; returns it."""
    async with TableClient(target, token("watcher")) as watcher:
        async for view in watcher.watch(table_id):
            if view.version >= version or view.finished:
                return view.version
    raise AssertionError(f"the watch of {table_id} ended before version {version}")


async def verify(project: ComposeProject, table_id: str) -> dict[str, Any]:
    """`kozyr verify` as an operator runs it: in the table's container, on its database."""
    report: dict[str, Any] = json.loads(
        await project.exec("table", "kozyr", "verify", table_id, "--json")
    )
    return report


async def jetstream(project: ComposeProject) -> dict[str, int]:
    """Each JetStream stream's last sequence, from the NATS server's own monitoring
    endpoint (not published: read inside its container)."""
    out = await project.exec(
        "nats", "wget", "-q", "-O", "-", "http://127.0.0.1:8222/jsz?streams=true"
    )
    streams: dict[str, int] = {}
    for account in json.loads(out).get("account_details") or []:
        for stream in account.get("stream_detail") or []:
            streams[stream["name"]] = int(stream["state"]["last_seq"])
    return streams


async def play_through_a_restart(
    project: ComposeProject, table_id: str, seat: int
) -> tuple[SeatLog, int]:
    """The player plays her seat to the end; the table service is restarted once the
    game is under way. Her client reconnects (to the port the table is published on
    after the restart) and re-sends an unanswered move, as any client does."""
    rng = random.Random(23)
    choose = chooser(Seat(seat, PLAYER, rng), rng)
    player = ScriptedClient(lambda: project.target("table"), table_id, PLAYER, seat, choose)
    # A move in flight when the table stops may come back CANCELLED (its stream reset
    # as the server goes): as for UNAVAILABLE, the client reconnects and re-sends it
    # with its request id (`kozyr play` counts CANCELLED as the network's too).
    player.reconnect_on = RECONNECT_ON | {grpc.StatusCode.CANCELLED}
    playing = asyncio.ensure_future(play_table([player], GAME_SECONDS))
    reached = await until_version(project.target("table"), table_id, RESTART_AT_VERSION)
    await project.run("restart", "table")
    await project.read_addresses()
    [log] = await playing
    return log, reached


async def rated(client: MatchmakingClient) -> mm_pb.Rating | None:
    """The player's 3-5-8 rating once her finished table has been counted."""
    tables = await client.my_tables()
    if not tables or not tables[0].finished:
        return None
    return await client.rating(THREE)


async def stop_services(
    project: ComposeProject,
) -> tuple[dict[str, dict[str, Any]], dict[str, str]]:
    """`docker compose stop` (SIGTERM, then the stop grace): each service's container
    state and its whole log."""
    await project.run("stop", *SERVICES, *EDGES, seconds=300)
    states = await project.states()
    logs = {service: await project.logs(service) for service in (*SERVICES, *EDGES)}
    return {service: states[service] for service in (*SERVICES, *EDGES)}, logs


def violations(log: str) -> list[str]:
    return [line for line in log.splitlines() if "Violation" in line]


@pytest.fixture(scope="module")
async def observed(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[Observed]:
    if engine_problem() is not None:
        pytest.skip(no_engine_reason())
    async with compose_stack(tmp_path_factory.mktemp("compose")) as project:
        yield await play_the_stack(project)


async def play_the_stack(project: ComposeProject) -> Observed:
    containers = await project.inspect()
    identity = await project.exec("table", "id")
    matchmaking = MatchmakingClient(project.target("matchmaking"), token(PLAYER))
    try:
        queued = await matchmaking.enter_queue(THREE, fill_with_computers=True)
        ticket = await final_state(matchmaking, queued.ticket_id)
        assert ticket.state == mm_pb.TICKET_STATE_MATCHED, ticket
        async with TableClient(project.target("table"), token(PLAYER)) as tables:
            seated = await tables.get_table(ticket.table_id)
        seat = next(s.seat for s in seated.seats if s.player_id == PLAYER)
        log, restarted_at = await play_through_a_restart(project, ticket.table_id, seat)
        rating = await eventually(lambda: rated(matchmaking), 60)
    finally:
        await matchmaking.close()
    verified = await verify(project, ticket.table_id)
    streams_before = await jetstream(project)
    nats_logs = [await project.logs("nats")]
    stopped, service_logs = await stop_services(project)

    await project.run("down", seconds=300)
    await project.up()
    async with TableClient(project.target("table"), token(PLAYER)) as tables:
        after_up = await tables.get_table(ticket.table_id)
    async with MatchmakingClient(project.target("matchmaking"), token(PLAYER)) as again:
        rating_after_up = await again.rating(THREE)
    verified_after_up = await verify(project, ticket.table_id)
    streams_after = await jetstream(project)
    nats_logs.append(await project.logs("nats"))
    return Observed(
        ticket, seated, restarted_at, log, rating, verified, stopped, service_logs,
        streams_before, streams_after, after_up, rating_after_up, verified_after_up, nats_logs,
        containers, identity,
    )  # fmt: skip


def test_every_container_runs_hardened(observed: Observed) -> None:
    """Issue 23: compose's defaults are the hardened ones, and the game the other tests
    see played on them. Every container: a read-only root, no capability, no privilege
    gained; kozyr's (services and migration jobs) as the image's uid 10001."""
    containers = observed.containers
    assert set(containers) == {*SERVICES, *EDGES, *MIGRATIONS, *SERVERS}
    for service, container in sorted(containers.items()):
        host = container["HostConfig"]
        assert host["ReadonlyRootfs"] is True, service
        assert host["CapDrop"] == ["ALL"], (service, host["CapDrop"])
        assert not host["CapAdd"], (service, host["CapAdd"])
        assert not host["Privileged"], service
        assert "no-new-privileges:true" in (host["SecurityOpt"] or []), service
        if service not in SERVERS:
            assert container["Config"]["User"] == KOZYR_USER, service
            assert "/tmp" in (host["Tmpfs"] or {}), service
    # the image made the user and its group with those ids
    assert observed.identity.split()[:2] == ["uid=10001(kozyr)", "gid=10001(kozyr)"]


def test_the_migration_jobs_get_their_database_and_no_jwt_key(observed: Observed) -> None:
    """Issue 23: a migration reads no token; the JWT key went to its container all the
    same. The services keep it."""
    names = {
        service: {entry.partition("=")[0] for entry in container["Config"]["Env"]}
        for service, container in observed.containers.items()
    }
    for service in MIGRATIONS:
        assert "KOZYR_DATABASE_URL" in names[service], service
        assert "KOZYR_JWT_KEY" not in names[service], service
    for service in SERVICES:
        assert "KOZYR_JWT_KEY" in names[service], service
    for service in EDGES:
        assert "KOZYR_JWT_KEY" not in names[service], service


def test_a_ticket_asking_for_computers_is_seated_with_computers(observed: Observed) -> None:
    seats = observed.seated.seats
    assert [s.player_id for s in seats].count(PLAYER) == 1
    computers = [s for s in seats if not s.player_id]
    assert len(computers) == 2
    assert all(s.control == seats_pb2.SEAT_CONTROL_COMPUTER for s in computers)


def test_the_game_goes_on_to_its_end_through_a_table_restart(observed: Observed) -> None:
    log = observed.log
    assert log.final.finished
    assert observed.restarted_at < log.final.version, "restarted before the end"
    assert log.disconnects >= 1, "the player's client saw the table service go"
    assert log.final.version > observed.restarted_at + 10, "the game went on after"


def test_the_finished_table_is_rated(observed: Observed) -> None:
    assert observed.rating.tables == 1


def test_kozyr_verify_finds_the_log_intact(observed: Observed) -> None:
    for report in (observed.verified, observed.verified_after_up):
        assert report["ok"] is True, report.get("problem")
        assert report["over"] is True


def test_every_service_stops_cleanly_on_sigterm(observed: Observed) -> None:
    """Defect 8 of issue 23: bots, clock and matchmaking held their stop for the NATS
    drain and logged asyncio's "_GatheringFuture exception was never retrieved"."""
    for service, state in observed.stopped.items():
        assert state["State"] == "exited", (service, state)
        assert state["ExitCode"] == 0, (service, observed.service_logs[service][-2000:])
        assert NEVER_RETRIEVED not in observed.service_logs[service], service


def test_down_and_up_keep_tables_ratings_and_streams(observed: Observed) -> None:
    final = observed.log.final
    assert observed.after_up.finished
    assert observed.after_up.version == final.version
    assert observed.rating_after_up == observed.rating
    # A stream lost with its volume would be made again by the services, empty, its
    # sequence starting over; a kept one goes on from where it was. (Its first
    # sequence may move: the clock's fired timers and expired presence entries go.)
    before, after = observed.streams_before, observed.streams_after
    assert before, "no JetStream stream before down"
    for name, last in before.items():
        assert name in after, f"stream {name} lost"
        assert after[name] >= last, f"stream {name} started over: {after[name]} < {last}"


def test_nats_logs_no_permission_violation(observed: Observed) -> None:
    for log in observed.nats_logs:
        assert not violations(log), "\n".join(violations(log)[:5])
