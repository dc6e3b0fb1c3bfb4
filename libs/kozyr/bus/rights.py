"""What each service may publish and subscribe on NATS: one user per service, allow-lists.

Only the table service sees the raw game events (`<root>.table.…`, stream `<ROOT>_TABLE`:
hidden cards included). Each service that appends events publishes them with its own
outbox relay over its own database, on its own categories only: the table
`kozyr.bus.streams.TABLE_CATEGORIES` (its raw events and the public ones), matchmaking
`MATCHMAKING_CATEGORIES` (lobby, ratings). The clock, the bots and matchmaking read the
public tree (`<root>.public.…`, stream `<ROOT>_PUBLIC`) and their own subjects, streams
and buckets. JetStream is reached
through its API subjects, which name the stream they act on
(`$JS.API.CONSUMER.CREATE.<stream>…`), so a service gets the API subjects of its own
streams only: a bots connection can neither subscribe to the raw subjects nor make a
consumer on the raw stream nor read one of its messages. Deleting and purging streams
are left to the operator (purge: only the clock, on its own timers).

`server_config` renders these as a nats-server configuration (JSON, which the server
reads as its own format); `make run` starts its embedded NATS with it.
"""

from __future__ import annotations

import json
from collections.abc import Mapping

from kozyr.bus.schedules import schedule_stream_name
from kozyr.bus.streams import MATCHMAKING_CATEGORIES, TABLE_CATEGORIES, jetstream_name
from kozyr.bus.subjects import PUBLIC_CHANNEL, check_root

SERVICES = ("table", "clock", "bots", "matchmaking")
ADMIN_USER = "kozyr-admin"
"""Every right: migrations, tools (`kozyr republish`), tests."""

Rights = dict[str, dict[str, list[str]]]


def _manage(stream: str) -> list[str]:
    """Create a stream (or bind to it) and read its configuration."""
    return [f"$JS.API.STREAM.{op}.{stream}" for op in ("INFO", "CREATE", "UPDATE")]


def _consume(stream: str) -> list[str]:
    """Durable pull consumers on a stream, and acknowledging their messages."""
    return [
        f"$JS.API.CONSUMER.CREATE.{stream}",
        f"$JS.API.CONSUMER.CREATE.{stream}.>",
        f"$JS.API.CONSUMER.DURABLE.CREATE.{stream}.>",
        f"$JS.API.CONSUMER.INFO.{stream}.>",
        f"$JS.API.CONSUMER.MSG.NEXT.{stream}.>",
        f"$JS.ACK.{stream}.>",
    ]


def _read(stream: str) -> list[str]:
    """Read single messages (a KV get, the last timer of a subject)."""
    return [
        f"$JS.API.STREAM.MSG.GET.{stream}",
        f"$JS.API.DIRECT.GET.{stream}",
        f"$JS.API.DIRECT.GET.{stream}.>",
    ]


def _bucket(name: str) -> list[str]:
    """A key-value bucket: its stream, its keys."""
    stream = f"KV_{name}"
    return [*_manage(stream), *_consume(stream), *_read(stream), f"$KV.{name}.>"]


def permissions(service: str, root: str) -> Rights:
    """The NATS permissions of `service` (one of SERVICES) under subject root `root`."""
    root = check_root(root)
    public = jetstream_name(PUBLIC_CHANNEL, root)
    common = ["$JS.API.INFO", "$JS.API.STREAM.NAMES"]  # names only: no configuration, no data
    publish: list[str]
    subscribe = ["_INBOX.>"]
    if service == "table":  # its relay: its own categories' streams and subjects
        publish = [f"{root}.{category}.>" for category in TABLE_CATEGORIES]
        for category in TABLE_CATEGORIES:
            publish += _manage(jetstream_name(category, root))
        subscribe.append(f"{root}.table.>")
    elif service == "clock":
        timers = schedule_stream_name(root)
        publish = [
            *_manage(public), *_consume(public),
            *_manage(timers), *_consume(timers), *_read(timers),
            f"$JS.API.STREAM.PURGE.{timers}", f"{root}.clock.schedule.>",
            *_bucket(jetstream_name("presence", root)),
            *_bucket(jetstream_name("clock_seats", root)),
            f"{root}.presence.>",
        ]  # fmt: skip
    elif service == "bots":
        publish = [*_manage(public), *_consume(public)]
    elif service == "matchmaking":  # its relay, the leaderboard's reading of ratings
        publish = [*_manage(public), *_consume(public)]
        for category in MATCHMAKING_CATEGORIES:
            own = jetstream_name(category, root)
            publish += [*_manage(own), *_consume(own), *_read(own), f"{root}.{category}.>"]
            subscribe.append(f"{root}.{category}.>")
    else:
        raise ValueError(f"no NATS rights for {service!r}: one of {SERVICES}")
    return {"publish": {"allow": [*common, *publish]}, "subscribe": {"allow": subscribe}}


def nats_url_for(url: str, user: str, password: str) -> str:
    """`nats://host:port` with a user's credentials in it (nats-py reads them there)."""
    scheme, _, rest = url.partition("://")
    return f"{scheme}://{user}:{password}@{rest.rpartition('@')[2]}"


def password_variable(user: str) -> str:
    """The environment variable holding a user's password in a deployment's NATS
    configuration: "bots" → KOZYR_NATS_BOTS_PASSWORD."""
    return f"KOZYR_NATS_{user.removeprefix('kozyr-').upper()}_PASSWORD"


def server_config_template(root: str) -> str:
    """The NATS users of a deployment (deploy/nats/rights.conf, which the server's
    deploy/nats/nats.conf includes beside JetStream's limits): every password
    read by the server from its environment (`password: $KOZYR_NATS_BOTS_PASSWORD`)."""
    marks = {user: f"@@{password_variable(user)}@@" for user in (*SERVICES, ADMIN_USER)}
    text = server_config(marks, root, anonymous_admin=False)
    for mark in marks.values():
        text = text.replace(f'"{mark}"', "$" + mark.strip("@"))
    return text + "\n"


def helm_authorization(root: str) -> dict[str, object]:
    """The same users for the NATS Helm chart's `config.merge` (prod overlay): passwords
    as `<< $VAR >>`, which the chart writes unquoted, so the server reads them from its
    environment."""
    users: list[dict[str, object]] = [
        {
            "user": name,
            "password": f"<< ${password_variable(name)} >>",
            "permissions": permissions(name, root),
        }
        for name in SERVICES
    ]
    users.append({"user": ADMIN_USER, "password": f"<< ${password_variable(ADMIN_USER)} >>"})
    return {"authorization": {"users": users}}


def server_config(passwords: Mapping[str, str], root: str, *, anonymous_admin: bool) -> str:
    """A nats-server configuration (JSON) with one user per service of `passwords` (and
    `ADMIN_USER`, which must be among them); `anonymous_admin` lets a connection without
    credentials in as the admin (the dev stack's tools) — never in production."""
    users = [
        {"user": name, "password": password, "permissions": permissions(name, root)}
        for name, password in passwords.items()
        if name != ADMIN_USER
    ]
    users.append({"user": ADMIN_USER, "password": passwords[ADMIN_USER]})
    config: dict[str, object] = {"authorization": {"users": users}}
    if anonymous_admin:
        config["no_auth_user"] = ADMIN_USER
    return json.dumps(config, indent=2)
