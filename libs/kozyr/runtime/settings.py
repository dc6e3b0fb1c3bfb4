"""The settings every kozyr process shares, read from `KOZYR_*` environment variables.

Laptop (`make run`), docker compose and Kubernetes all configure services through the same
variables. Everything is validated at start-up by `load_settings()`, which raises a single
`SettingsError` naming every bad or missing variable and why — a process never starts
half-configured and never fails later on a malformed URL or a missing key.

Optional connections (database, NATS, peer services) default to unset: each service
declares what it needs with `load(required={...})`.

`Settings` holds what every process reads (connections, keys, the gRPC edge, logs,
metrics); each service's own knobs are a subclass beside it (`kozyr.table.settings.
TableSettings`, and the clock's, the bots' and matchmaking's), named
`KOZYR_<SERVICE>_*` except the table's two. A service loads its class
(`TableSettings.load(required=...)`); the command line and libraries load `Settings`
(`load_settings`). An override naming a field the class lacks is an error, never
silently ignored; a variable of another service's is ignored.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path
from typing import Any, Literal, Self, TypedDict
from urllib.parse import urlsplit

import grpc
from pydantic import (
    Field,
    SecretStr,
    ValidationError,
    ValidationInfo,
    field_validator,
    model_validator,
)
from pydantic_settings import BaseSettings, SettingsConfigDict

from kozyr.runtime.auth import (
    JwtAlgorithm,
    KeyConfigError,
    TokenMinter,
    TokenVerifier,
    load_signing_key,
    load_verification_key,
)

ENV_PREFIX = "KOZYR_"
LogLevel = Literal["DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL"]
LogFormat = Literal["json", "console"]

_POSTGRES_DRIVERS = {"postgresql", "postgres", "postgresql+asyncpg"}
_NATS_SCHEMES = {"nats", "tls", "ws", "wss"}
_SECRET_FIELDS = {
    "jwt_key",
    "jwt_private_key",
    "jwt_previous_keys",
    "database_url",
    "livekit_api_secret",
}


class DatabaseTimeouts(TypedDict):
    """Keyword arguments of `PostgresEventStore` bounding every wait on the database."""

    connect_timeout: float
    acquire_timeout: float
    statement_timeout: float


def env_name(field_name: str) -> str:
    """The environment variable of a settings field: database_url → KOZYR_DATABASE_URL."""
    return f"{ENV_PREFIX}{field_name.upper()}"


class Settings(BaseSettings):
    """The knobs every kozyr process shares; a service's own are a subclass's.
    Frozen: read once at start-up, passed down explicitly."""

    model_config = SettingsConfigDict(
        env_prefix=ENV_PREFIX,
        env_ignore_empty=True,
        extra="ignore",
        frozen=True,
        validate_default=True,
    )

    service_name: str = Field("kozyr", min_length=1, description="Names the process in logs.")

    database_url: str | None = Field(
        None, description="postgresql+asyncpg://user:password@host:5432/db (postgresql:// ok)."
    )
    nats_url: str | None = Field(
        None, description="nats://host:4222; several servers comma-separated for a cluster."
    )
    subject_root: str = Field("kozyr", description="First token(s) of every NATS subject.")
    stream_replicas: int = Field(
        1,
        ge=1,
        le=5,
        description="Replicas of every JetStream stream, KV bucket and durable consumer the "
        "services make: 1 on a single NATS server, 3 on a 3-node cluster (prod), so one node "
        "going down loses no event, timer or presence. An existing stream with fewer is "
        'raised at start (docs/operations.md, "NATS cluster").',
    )

    grpc_host: str = Field("0.0.0.0", min_length=1)
    grpc_port: int = Field(50051, ge=0, le=65535, description="0 picks a free port.")
    grpc_tls_cert_file: str | None = Field(
        None,
        description="PEM certificate chain this service's gRPC server presents; with "
        "KOZYR_GRPC_TLS_KEY_FILE the server speaks TLS only (docs/operations.md).",
    )
    grpc_tls_key_file: str | None = Field(
        None, description="PEM private key of KOZYR_GRPC_TLS_CERT_FILE."
    )
    grpc_tls_ca_file: str | None = Field(
        None,
        description="PEM CA bundle: this service's calls to other kozyr services use TLS and "
        "verify their certificates against it. Unset: plain connections.",
    )
    table_target: str | None = Field(None, description="host:port of the table service.")
    matchmaking_target: str | None = Field(None, description="host:port of matchmaking.")
    clock_target: str | None = Field(None, description="host:port of the clock service.")
    bots_target: str | None = Field(None, description="host:port of the bots service.")

    jwt_algorithm: JwtAlgorithm = "HS256"
    jwt_key: SecretStr | None = Field(
        None, description="Verification key: the HS* secret, or a PEM public key."
    )
    jwt_private_key: SecretStr | None = Field(
        None, description="PEM private key to mint tokens with (asymmetric algorithms)."
    )
    jwt_ttl_seconds: int = Field(3600, gt=0, description="Lifetime of minted tokens.")
    jwt_key_id: str | None = Field(
        None,
        description="The current key's id: minted tokens carry it as `kid`, and verifiers "
        "check a token naming it with KOZYR_JWT_KEY (key rotation, docs/operations.md).",
    )
    jwt_previous_keys: SecretStr | None = Field(
        None,
        description='Keys still accepted while keys rotate: a JSON object {"<kid>": "<key>"} '
        "of verification keys (HS* secrets or PEM public keys) of the same algorithm.",
    )

    log_level: LogLevel = "INFO"
    log_format: LogFormat = "json"

    grpc_max_concurrent_calls: int = Field(
        1000,
        ge=1,
        description="Unary calls handled at once; more are refused with RESOURCE_EXHAUSTED "
        "(SERVER_BUSY), which clients retry after a backoff.",
    )
    grpc_max_concurrent_streams: int = Field(
        20_000,
        ge=1,
        description="Streaming calls (WatchTable) open at once; more are refused with "
        "RESOURCE_EXHAUSTED (SERVER_BUSY).",
    )
    grpc_max_queued_calls: int = Field(
        20_000,
        ge=1,
        description="New calls gRPC holds until a handler is free to admit or refuse them: a "
        "burst waits here instead of being cancelled (gRPC's own default is 1,000).",
    )
    grpc_deadline_margin_seconds: float = Field(
        0.05,
        ge=0,
        description="A unary handler is stopped this long before the caller's deadline, so "
        "the caller gets the server's DEADLINE_EXCEEDED rather than its own timeout.",
    )

    database_connect_timeout_seconds: float = Field(
        5.0, gt=0, description="Opening a database connection."
    )
    database_acquire_timeout_seconds: float = Field(
        5.0, gt=0, description="Waiting for a free connection of the service's pool."
    )
    database_statement_timeout_seconds: float = Field(
        5.0, gt=0, description="One SQL statement (client- and server-side)."
    )
    allow_async_commit: bool = Field(
        False,
        description="Start even when the database runs with synchronous_commit=off (a crash "
        "then loses acknowledged moves): throw-away databases only (docs/operations.md).",
    )

    shutdown_grace_seconds: float = Field(10.0, ge=0)
    otlp_endpoint: str | None = Field(
        None,
        description="An OpenTelemetry collector (OTLP over gRPC, e.g. http://otel:4317) that "
        "receives this service's spans; unset: no span is recorded (trace context is still "
        "passed on).",
    )
    metrics_host: str = Field("0.0.0.0", min_length=1)
    metrics_port: int | None = Field(
        None, ge=0, le=65535, description="Prometheus /metrics port; unset = no metrics server."
    )

    @field_validator("log_level", mode="before")
    @classmethod
    def _upper_level(cls, value: Any) -> Any:
        return value.upper() if isinstance(value, str) else value

    @field_validator("database_url")
    @classmethod
    def _check_database_url(cls, value: str | None) -> str | None:
        return None if value is None else normalise_database_url(value)

    @field_validator("nats_url")
    @classmethod
    def _check_nats_url(cls, value: str | None) -> str | None:
        if value is not None:
            nats_servers(value)
        return value

    @field_validator("subject_root")
    @classmethod
    def _check_subject_root(cls, value: str) -> str:
        tokens = value.split(".")
        if not all(t and all(c.isalnum() or c in "_-" for c in t) for t in tokens):
            raise ValueError(
                f"not a NATS subject prefix: {value!r} "
                "(dot-separated tokens of letters, digits, '_' or '-')"
            )
        return value

    @model_validator(mode="after")
    def _check_tls_pair(self) -> Settings:
        if (self.grpc_tls_cert_file is None) != (self.grpc_tls_key_file is None):
            raise ValueError(
                "KOZYR_GRPC_TLS_CERT_FILE and KOZYR_GRPC_TLS_KEY_FILE go together: set both "
                "for a TLS server, or neither"
            )
        return self

    @field_validator("table_target", "matchmaking_target", "clock_target", "bots_target")
    @classmethod
    def _check_target(cls, value: str | None) -> str | None:
        if value is not None:
            host, _, port = value.rpartition(":")
            if not host or not port.isdigit() or not 0 < int(port) < 65536:
                raise ValueError(f"expected host:port, got {value!r}")
        return value

    @field_validator("jwt_key")
    @classmethod
    def _check_jwt_key(cls, value: SecretStr | None, info: ValidationInfo) -> SecretStr | None:
        algorithm = info.data.get("jwt_algorithm")
        if value is not None and algorithm is not None:
            try:
                load_verification_key(algorithm, value.get_secret_value())
            except KeyConfigError as error:
                raise ValueError(str(error)) from None
        return value

    @field_validator("jwt_previous_keys")
    @classmethod
    def _check_jwt_previous_keys(
        cls, value: SecretStr | None, info: ValidationInfo
    ) -> SecretStr | None:
        if value is not None:
            keys = _previous_keys(value)
            algorithm = info.data.get("jwt_algorithm")
            for kid, key in keys.items():
                try:
                    load_verification_key(algorithm or "HS256", key)
                except KeyConfigError as error:
                    raise ValueError(f"key {kid!r}: {error}") from None
        return value

    @field_validator("jwt_private_key")
    @classmethod
    def _check_jwt_private_key(
        cls, value: SecretStr | None, info: ValidationInfo
    ) -> SecretStr | None:
        algorithm = info.data.get("jwt_algorithm")
        if value is not None and algorithm is not None and not algorithm.startswith("HS"):
            try:
                load_signing_key(algorithm, value.get_secret_value())
            except KeyConfigError as error:
                raise ValueError(str(error)) from None
        return value

    @classmethod
    def load(cls, *, required: Iterable[str] = (), **overrides: Any) -> Self:
        """Read and validate the settings; SettingsError lists every problem at once.

        `required` names the fields this service cannot run without, e.g.
        `{"database_url", "jwt_key"}`. `overrides` (field names) win over the
        environment — for tests and launchers; a name this class lacks is a ValueError.
        """
        required = list(required)
        unknown = [name for name in [*required, *overrides] if name not in cls.model_fields]
        if unknown:
            raise ValueError(f"unknown settings fields of {cls.__name__}: {unknown}")
        missing = [_missing(name) for name in required if not _is_given(name, overrides)]
        try:
            settings = cls(**overrides)
        except ValidationError as error:
            raise SettingsError(_problems(error) + missing) from None
        if missing:
            raise SettingsError(missing)
        return settings

    # ----------------------------------------------------------------- derived values

    @property
    def grpc_address(self) -> str:
        """`host:port` to bind the gRPC server to."""
        return f"{self.grpc_host}:{self.grpc_port}"

    @property
    def nats_servers(self) -> list[str]:
        """The NATS server URLs (nats-py's `servers=`); empty when NATS is not configured."""
        return nats_servers(self.nats_url) if self.nats_url else []

    @property
    def database_timeouts(self) -> DatabaseTimeouts:
        """The event store's timeouts (`PostgresEventStore(url, **settings.database_timeouts)`):
        a hung database then fails calls with UNAVAILABLE instead of holding them."""
        return {
            "connect_timeout": self.database_connect_timeout_seconds,
            "acquire_timeout": self.database_acquire_timeout_seconds,
            "statement_timeout": self.database_statement_timeout_seconds,
        }

    def server_credentials(self) -> grpc.ServerCredentials | None:
        """TLS credentials of this service's gRPC server; None: it speaks plain gRPC."""
        if self.grpc_tls_cert_file is None or self.grpc_tls_key_file is None:
            return None
        pair = (_read_pem("grpc_tls_key_file", self.grpc_tls_key_file),
                _read_pem("grpc_tls_cert_file", self.grpc_tls_cert_file))  # fmt: skip
        return grpc.ssl_server_credentials([pair])

    def channel_credentials(self) -> grpc.ChannelCredentials | None:
        """TLS credentials of this service's calls to the others; None: plain gRPC."""
        if self.grpc_tls_ca_file is None:
            return None
        return grpc.ssl_channel_credentials(_read_pem("grpc_tls_ca_file", self.grpc_tls_ca_file))

    def token_verifier(self) -> TokenVerifier:
        """The verifier for incoming tokens; SettingsError when KOZYR_JWT_KEY is unset."""
        if self.jwt_key is None:
            raise SettingsError([_missing("jwt_key")])
        return TokenVerifier(
            self.jwt_key.get_secret_value(),
            self.jwt_algorithm,
            key_id=self.jwt_key_id,
            previous_keys=_previous_keys(self.jwt_previous_keys) if self.jwt_previous_keys else {},
        )

    def token_minter(self) -> TokenMinter:
        """A minter for tokens this deployment accepts (dev login, service identities).

        HS* algorithms sign with KOZYR_JWT_KEY; asymmetric ones need KOZYR_JWT_PRIVATE_KEY.
        """
        hmac = self.jwt_algorithm.startswith("HS")
        field_name = "jwt_key" if hmac else "jwt_private_key"
        key = self.jwt_key if hmac else self.jwt_private_key
        if key is None:
            raise SettingsError([_missing(field_name)])
        return TokenMinter(
            key.get_secret_value(),
            self.jwt_algorithm,
            ttl=timedelta(seconds=self.jwt_ttl_seconds),
            key_id=self.jwt_key_id,
        )


def _read_pem(field_name: str, path: str) -> bytes:
    """A PEM file's bytes; SettingsError naming the variable when it cannot be read."""
    try:
        return Path(path).read_bytes()
    except OSError as error:
        raise SettingsError([SettingsProblem(env_name(field_name), str(error))]) from None


def _previous_keys(value: SecretStr) -> dict[str, str]:
    """KOZYR_JWT_PREVIOUS_KEYS as {kid: key}; ValueError when it is not such an object."""
    try:
        keys = json.loads(value.get_secret_value())
    except json.JSONDecodeError:
        raise ValueError('must be a JSON object {"<kid>": "<key>"}') from None
    if not isinstance(keys, dict) or not all(
        isinstance(k, str) and k and isinstance(v, str) for k, v in keys.items()
    ):
        raise ValueError('must be a JSON object {"<kid>": "<key>"} of non-empty key ids')
    return keys


def normalise_database_url(value: str) -> str:
    """Validate a PostgreSQL URL and return it with the asyncpg driver.

    Accepts postgresql://, postgres:// and postgresql+asyncpg:// (docker and managed
    databases hand out the plain forms). A socket directory may replace the host
    (`?host=/run/postgresql`); several hosts (a primary and its standbys) are given as
    libpq does, `h1:5432,h2:5432`, or as `?host=h1:5432&host=h2:5432`, with
    `target_session_attrs=read-write` (kozyr.eventstore.urls). SQLAlchemy's URL parser
    is imported here, when a URL is given: a process without a database (`kozyr token`,
    the probes) never loads it.
    """
    from sqlalchemy.engine import make_url
    from sqlalchemy.exc import ArgumentError

    from kozyr.eventstore.urls import hosts_in_query

    hint = "expected postgresql+asyncpg://user:password@host:5432/database"
    try:
        url = make_url(hosts_in_query(value))
    except (ArgumentError, ValueError):
        raise ValueError(f"not a URL ({hint})") from None
    if url.drivername not in _POSTGRES_DRIVERS:
        raise ValueError(f"not a PostgreSQL URL: scheme {url.drivername!r} ({hint})")
    if not url.host and "host" not in url.query:
        raise ValueError(f"the URL names no host ({hint})")
    if not url.database:
        raise ValueError(f"the URL names no database ({hint})")
    return url.set(drivername="postgresql+asyncpg").render_as_string(hide_password=False)


def nats_servers(value: str) -> list[str]:
    """Split and validate a comma-separated list of NATS URLs (nats://host:port, tls://…)."""
    servers = [s.strip() for s in value.split(",") if s.strip()]
    if not servers:
        raise ValueError("no NATS server given (expected nats://host:4222)")
    for server in servers:
        parts = urlsplit(server)
        if parts.scheme not in _NATS_SCHEMES or not parts.hostname or not _has_valid_port(server):
            raise ValueError(f"not a NATS URL: {server!r} (expected nats://host:4222)")
    return servers


def _has_valid_port(url: str) -> bool:
    """True when the URL's port is absent or a number in range (urlsplit raises otherwise)."""
    try:
        _ = urlsplit(url).port
    except ValueError:
        return False
    return True


# --------------------------------------------------------------------------- errors


@dataclass(frozen=True)
class SettingsProblem:
    """One bad or missing variable and why."""

    variable: str
    reason: str

    def __str__(self) -> str:
        return f"{self.variable}: {self.reason}"


class SettingsError(ValueError):
    """The configuration is unusable; the message lists every problem, one per line."""

    def __init__(self, problems: Iterable[SettingsProblem]) -> None:
        self.problems = list(problems)
        lines = "\n".join(f"  {p}" for p in self.problems)
        super().__init__(f"invalid kozyr configuration:\n{lines}")

    @property
    def variables(self) -> list[str]:
        return [p.variable for p in self.problems]


def _missing(field_name: str) -> SettingsProblem:
    return SettingsProblem(env_name(field_name), "required by this service but not set")


def _problems(error: ValidationError) -> list[SettingsProblem]:
    problems = []
    for item in error.errors():
        field_name = str(item["loc"][0]) if item["loc"] else "settings"
        reason = str(item["msg"]).removeprefix("Value error, ")
        if item["type"] != "value_error" and field_name not in _SECRET_FIELDS:
            reason = f"{reason} (got {item.get('input')!r})"
        problems.append(SettingsProblem(env_name(field_name), reason))
    return problems


def load_settings(*, required: Iterable[str] = (), **overrides: Any) -> Settings:
    """The shared settings (`Settings.load`): for the command line and libraries."""
    return Settings.load(required=required, **overrides)


def _is_given(field_name: str, overrides: Mapping[str, Any]) -> bool:
    if overrides.get(field_name) is not None:
        return True
    wanted = env_name(field_name)
    return any(k.upper() == wanted and v for k, v in os.environ.items())
