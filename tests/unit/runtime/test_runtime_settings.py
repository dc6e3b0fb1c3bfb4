"""Settings: read from KOZYR_* variables, every problem reported clearly at start-up."""

from __future__ import annotations

import os

import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ed25519

from kozyr.runtime.auth import Role
from kozyr.runtime.settings import SettingsError, load_settings

SECRET = "a-development-secret-of-32-bytes!"


@pytest.fixture(autouse=True)
def clean_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    """Tests see only the variables they set (the developer's shell may export some)."""
    for name in list(os.environ):
        if name.upper().startswith("KOZYR_"):
            monkeypatch.delenv(name)


def problem_for(error: SettingsError, variable: str) -> str:
    reasons = [p.reason for p in error.problems if p.variable == variable]
    assert reasons, f"{variable} not reported in: {error}"
    return reasons[0]


def test_defaults_need_no_environment() -> None:
    settings = load_settings()
    assert settings.grpc_port == 50051
    assert settings.subject_root == "kozyr"
    assert settings.database_url is None
    assert settings.nats_servers == []
    assert settings.log_format == "json"


def test_values_come_from_kozyr_variables(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("KOZYR_GRPC_PORT", "6000")
    monkeypatch.setenv("KOZYR_LOG_LEVEL", "debug")
    monkeypatch.setenv("KOZYR_SUBJECT_ROOT", "test.kozyr")
    monkeypatch.setenv("KOZYR_NATS_URL", "nats://a:4222, nats://b:4222")
    settings = load_settings()
    assert settings.grpc_address == "0.0.0.0:6000"
    assert settings.log_level == "DEBUG"
    assert settings.subject_root == "test.kozyr"
    assert settings.nats_servers == ["nats://a:4222", "nats://b:4222"]


def test_an_empty_variable_counts_as_unset(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("KOZYR_DATABASE_URL", "")
    assert load_settings().database_url is None


@pytest.mark.parametrize(
    ("given", "expected"),
    [
        ("postgresql://u:p@db:5432/kozyr", "postgresql+asyncpg://u:p@db:5432/kozyr"),
        ("postgres://u@db/kozyr", "postgresql+asyncpg://u@db/kozyr"),
        ("postgresql+asyncpg://u:p@db/kozyr", "postgresql+asyncpg://u:p@db/kozyr"),
        (
            "postgresql://u@/kozyr?host=/run/postgresql",
            "postgresql+asyncpg://u@/kozyr?host=%2Frun%2Fpostgresql",
        ),
        (  # a primary and its standby, libpq's spelling: the primary is the writable one
            "postgresql://u@pg-1:5432,pg-2:5433/kozyr?target_session_attrs=read-write",
            "postgresql+asyncpg://u@/kozyr?host=pg-1%3A5432&host=pg-2%3A5433"
            "&target_session_attrs=read-write",
        ),
    ],
)
def test_database_urls_are_normalised_to_asyncpg(given: str, expected: str) -> None:
    assert load_settings(database_url=given).database_url == expected


@pytest.mark.parametrize(
    ("url", "why"),
    [
        ("not a url at all", "not a URL"),
        ("mysql://u:p@db/kozyr", "not a PostgreSQL URL"),
        ("postgresql://u:p@db:5432/", "names no database"),
        ("postgresql:///kozyr", "names no host"),
    ],
)
def test_a_malformed_database_url_is_a_clear_error(
    monkeypatch: pytest.MonkeyPatch, url: str, why: str
) -> None:
    monkeypatch.setenv("KOZYR_DATABASE_URL", url)
    with pytest.raises(SettingsError) as caught:
        load_settings()
    assert why in problem_for(caught.value, "KOZYR_DATABASE_URL")
    assert "KOZYR_DATABASE_URL" in str(caught.value)


def test_a_database_password_is_never_echoed() -> None:
    with pytest.raises(SettingsError) as caught:
        load_settings(database_url="mysql://kozyr:s3cr3t-pw@db/kozyr")
    assert "s3cr3t-pw" not in str(caught.value)


@pytest.mark.parametrize(
    "url", ["http://nats:4222", "nats://", "nats://host:notaport", "nats://a:4222,,redis://b"]
)
def test_a_malformed_nats_url_is_a_clear_error(url: str) -> None:
    with pytest.raises(SettingsError) as caught:
        load_settings(nats_url=url)
    assert "not a NATS URL" in problem_for(caught.value, "KOZYR_NATS_URL")


@pytest.mark.parametrize("root", ["kozyr.*", "a..b", "has space", ""])
def test_a_bad_subject_root_is_rejected(root: str) -> None:
    with pytest.raises(SettingsError) as caught:
        load_settings(subject_root=root)
    assert "KOZYR_SUBJECT_ROOT" in caught.value.variables


def test_a_missing_required_key_is_a_clear_error() -> None:
    with pytest.raises(SettingsError) as caught:
        load_settings(required={"jwt_key", "database_url"})
    assert sorted(caught.value.variables) == ["KOZYR_DATABASE_URL", "KOZYR_JWT_KEY"]
    assert "required by this service but not set" in str(caught.value)


def test_all_problems_are_reported_together(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("KOZYR_GRPC_PORT", "seventy")
    monkeypatch.setenv("KOZYR_LOG_FORMAT", "xml")
    with pytest.raises(SettingsError) as caught:
        load_settings(required={"jwt_key"})
    assert sorted(caught.value.variables) == [
        "KOZYR_GRPC_PORT",
        "KOZYR_JWT_KEY",
        "KOZYR_LOG_FORMAT",
    ]
    assert "'seventy'" in problem_for(caught.value, "KOZYR_GRPC_PORT")


def test_an_unknown_required_field_is_a_programming_error() -> None:
    with pytest.raises(ValueError, match="unknown settings fields"):
        load_settings(required={"jwt_keys"})


def test_a_short_hmac_secret_is_rejected_without_being_echoed() -> None:
    with pytest.raises(SettingsError) as caught:
        load_settings(jwt_key="short-secret")
    assert "at least 32 bytes" in problem_for(caught.value, "KOZYR_JWT_KEY")
    assert "short-secret" not in str(caught.value)


def _ed25519_pems() -> tuple[str, str]:
    private = ed25519.Ed25519PrivateKey.generate()
    private_pem = private.private_bytes(
        serialization.Encoding.PEM,
        serialization.PrivateFormat.PKCS8,
        serialization.NoEncryption(),
    ).decode()
    public_pem = (
        private.public_key()
        .public_bytes(serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo)
        .decode()
    )
    return private_pem, public_pem


def test_an_asymmetric_setup_verifies_what_it_mints() -> None:
    private_pem, public_pem = _ed25519_pems()
    settings = load_settings(jwt_algorithm="EdDSA", jwt_key=public_pem, jwt_private_key=private_pem)
    token = settings.token_minter().mint("p-1", Role.PLAYER)
    assert settings.token_verifier().verify(token).subject == "p-1"


def test_a_pem_written_on_one_line_is_accepted() -> None:
    _, public_pem = _ed25519_pems()
    one_line = public_pem.strip().replace("\n", "\\n")
    settings = load_settings(jwt_algorithm="EdDSA", jwt_key=one_line)
    assert settings.token_verifier().algorithm == "EdDSA"


def test_a_private_key_configured_as_the_verification_key_is_rejected() -> None:
    private_pem, _ = _ed25519_pems()
    with pytest.raises(SettingsError) as caught:
        load_settings(jwt_algorithm="EdDSA", jwt_key=private_pem)
    assert "public key" in problem_for(caught.value, "KOZYR_JWT_KEY")


def test_an_hmac_secret_for_an_asymmetric_algorithm_is_rejected() -> None:
    with pytest.raises(SettingsError) as caught:
        load_settings(jwt_algorithm="RS256", jwt_key=SECRET)
    assert "not a usable RS256 key" in problem_for(caught.value, "KOZYR_JWT_KEY")


def test_asking_for_a_verifier_without_a_key_is_a_settings_error() -> None:
    with pytest.raises(SettingsError) as caught:
        load_settings().token_verifier()
    assert caught.value.variables == ["KOZYR_JWT_KEY"]


def test_minting_with_an_asymmetric_algorithm_needs_the_private_key() -> None:
    _, public_pem = _ed25519_pems()
    with pytest.raises(SettingsError) as caught:
        load_settings(jwt_algorithm="EdDSA", jwt_key=public_pem).token_minter()
    assert caught.value.variables == ["KOZYR_JWT_PRIVATE_KEY"]


def test_hmac_minting_uses_the_shared_secret() -> None:
    settings = load_settings(jwt_key=SECRET)
    principal = settings.token_verifier().verify(settings.token_minter().mint("bots", Role.SERVICE))
    assert (principal.subject, principal.role) == ("bots", Role.SERVICE)


@pytest.mark.parametrize("target", ["table:50051", "10.0.0.1:1"])
def test_peer_targets_are_host_and_port(target: str) -> None:
    assert load_settings(table_target=target).table_target == target


@pytest.mark.parametrize("target", ["table", "table:0", ":50051", "table:http"])
def test_a_malformed_peer_target_is_rejected(target: str) -> None:
    with pytest.raises(SettingsError) as caught:
        load_settings(table_target=target)
    assert "host:port" in problem_for(caught.value, "KOZYR_TABLE_TARGET")


def test_previous_jwt_keys_are_read_by_key_id_and_checked() -> None:
    old = "an-older-secret-of-at-least-32-bytes"
    settings = load_settings(
        jwt_key=SECRET, jwt_key_id="k2", jwt_previous_keys=f'{{"k1": "{old}"}}'
    )
    token = load_settings(jwt_key=old, jwt_key_id="k1").token_minter().mint("ana", Role.PLAYER)
    assert settings.token_verifier().verify(token).subject == "ana"
    for bad in ("not json", '["k1"]', '{"": "x"}', '{"k1": "short"}'):
        with pytest.raises(SettingsError) as caught:
            load_settings(jwt_key=SECRET, jwt_previous_keys=bad)
        assert "KOZYR_JWT_PREVIOUS_KEYS" in str(caught.value)
        assert "short" not in str(caught.value).replace("KOZYR", ""), "secrets are not echoed"


def test_stream_replicas_default_to_one_and_come_from_their_variable(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    assert load_settings().stream_replicas == 1
    monkeypatch.setenv("KOZYR_STREAM_REPLICAS", "3")
    assert load_settings().stream_replicas == 3


@pytest.mark.parametrize("replicas", ["0", "6", "three"])
def test_stream_replicas_out_of_jetstreams_range_are_rejected(
    monkeypatch: pytest.MonkeyPatch, replicas: str
) -> None:
    monkeypatch.setenv("KOZYR_STREAM_REPLICAS", replicas)
    with pytest.raises(SettingsError) as caught:
        load_settings()
    assert problem_for(caught.value, "KOZYR_STREAM_REPLICAS")
