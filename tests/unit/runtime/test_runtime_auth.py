"""JWT identities: round trips per algorithm, expiry, wrong keys, roles, bearer metadata."""

from __future__ import annotations

import time
from datetime import UTC, datetime, timedelta

import jwt
import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec, ed25519, rsa
from hypothesis import given, settings
from hypothesis import strategies as st

from kozyr.runtime.auth import (
    AuthError,
    AuthFailure,
    KeyConfigError,
    Principal,
    Role,
    TokenMinter,
    TokenVerifier,
    bearer_metadata,
    bearer_token,
    current_principal,
    current_principal_or_none,
    mint_token,
    principal_scope,
    verify_token,
)
from kozyr.runtime.errors import PermissionDenied

SECRET = "unit-test-secret-with-enough-bytes-0123"
OTHER_SECRET = "another-unit-test-secret-with-bytes-456"


def _pem_pair(
    private: rsa.RSAPrivateKey | ec.EllipticCurvePrivateKey | ed25519.Ed25519PrivateKey,
) -> tuple[str, str]:
    private_pem = private.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
    ).decode()
    public_pem = (
        private.public_key()
        .public_bytes(serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo)
        .decode()
    )
    return private_pem, public_pem


@pytest.fixture(scope="module")
def rsa_pems() -> tuple[str, str]:
    return _pem_pair(rsa.generate_private_key(public_exponent=65537, key_size=2048))


def expect_failure(
    failure: AuthFailure, token: str, *, key: str = SECRET, algorithm: str = "HS256"
) -> None:
    with pytest.raises(AuthError) as caught:
        verify_token(token, key=key, algorithm=algorithm)
    assert caught.value.failure is failure
    assert caught.value.reason == failure.value


@pytest.mark.parametrize("role", list(Role))
def test_an_hs256_token_round_trips(role: Role) -> None:
    principal = verify_token(mint_token("p-42", role, key=SECRET), key=SECRET)
    assert (principal.subject, principal.role) == ("p-42", role)


def test_the_principal_carries_the_expiry() -> None:
    now = datetime(2030, 1, 1, 12, 0, tzinfo=UTC)
    token = mint_token("p", Role.PLAYER, key=SECRET, ttl=timedelta(hours=2), now=now)
    claims = jwt.decode(token, options={"verify_signature": False})
    assert claims["exp"] == int((now + timedelta(hours=2)).timestamp())
    assert claims["iss"] == "kozyr"


def test_rs256_verifies_with_the_public_key_only(rsa_pems: tuple[str, str]) -> None:
    private_pem, public_pem = rsa_pems
    token = mint_token("p-1", Role.PLAYER, key=private_pem, algorithm="RS256")
    assert verify_token(token, key=public_pem, algorithm="RS256").subject == "p-1"


@pytest.mark.parametrize(
    ("algorithm", "private"),
    [
        ("ES256", lambda: ec.generate_private_key(ec.SECP256R1())),
        ("EdDSA", ed25519.Ed25519PrivateKey.generate),
    ],
)
def test_other_asymmetric_algorithms_round_trip(algorithm: str, private: object) -> None:
    assert callable(private)
    private_pem, public_pem = _pem_pair(private())
    minter = TokenMinter(private_pem, algorithm)
    verifier = TokenVerifier(public_pem, algorithm)
    assert verifier.verify(minter.mint("svc", Role.SERVICE)).role is Role.SERVICE


def test_an_expired_token_is_rejected_as_expired() -> None:
    issued = datetime.now(UTC) - timedelta(hours=3)
    token = mint_token("p", Role.PLAYER, key=SECRET, ttl=timedelta(hours=1), now=issued)
    expect_failure(AuthFailure.EXPIRED, token)


def test_a_token_within_the_clock_skew_leeway_is_accepted() -> None:
    issued = datetime.now(UTC) - timedelta(minutes=10, seconds=-5)
    token = mint_token("p", Role.PLAYER, key=SECRET, ttl=timedelta(minutes=10), now=issued)
    assert verify_token(token, key=SECRET).subject == "p"


def test_a_token_signed_with_another_key_is_invalid() -> None:
    expect_failure(AuthFailure.INVALID, mint_token("p", Role.ADMIN, key=OTHER_SECRET))


def test_a_tampered_token_is_invalid() -> None:
    token = mint_token("p", Role.PLAYER, key=SECRET)
    header, payload, signature = token.split(".")
    forged_payload = jwt.utils.base64url_encode(
        jwt.utils.base64url_decode(payload).replace(b'"player"', b'"admin"')
    ).decode()
    expect_failure(AuthFailure.INVALID, f"{header}.{forged_payload}.{signature}")


def test_the_algorithm_is_never_taken_from_the_token(rsa_pems: tuple[str, str]) -> None:
    _, public_pem = rsa_pems
    unsigned = jwt.encode(
        {"sub": "p", "role": "admin", "iss": "kozyr", "iat": 0, "exp": 2**33},
        key="",
        algorithm="none",
    )
    expect_failure(AuthFailure.INVALID, unsigned)
    expect_failure(AuthFailure.INVALID, unsigned, key=public_pem, algorithm="RS256")


@pytest.mark.parametrize(
    "claims",
    [
        {"sub": "p", "iss": "kozyr"},  # no role
        {"sub": "p", "role": "superuser", "iss": "kozyr"},
        {"sub": "", "role": "player", "iss": "kozyr"},
        {"sub": " ", "role": "player", "iss": "kozyr"},  # no visible character
        {"sub": "p", "role": ["admin"], "iss": "kozyr"},  # unhashable: was INTERNAL
        {"sub": "p", "role": {"admin": True}, "iss": "kozyr"},
        {"sub": "p", "role": 1, "iss": "kozyr"},
        {"sub": "p", "role": None, "iss": "kozyr"},
        {"sub": "p", "role": "player", "iss": "someone-else"},
        {"sub": "p", "role": "player"},  # no issuer
    ],
)
def test_tokens_with_bad_claims_are_invalid(claims: dict[str, object]) -> None:
    now = int(datetime.now(UTC).timestamp())
    token = jwt.encode({"iat": now, "exp": now + 600, **claims}, SECRET, algorithm="HS256")
    expect_failure(AuthFailure.INVALID, token)


def test_garbage_is_invalid() -> None:
    expect_failure(AuthFailure.INVALID, "not.a.token")


NEW_SECRET = "the-new-secret-of-at-least-32-bytes!!"


@settings(max_examples=40, deadline=None)
@given(subject=st.text(min_size=1, max_size=64), role=st.sampled_from(list(Role)))
def test_any_printable_subject_round_trips(subject: str, role: Role) -> None:
    token = mint_token(subject, role, key=SECRET)
    if subject.isprintable() and subject.strip():
        principal = verify_token(token, key=SECRET)
        assert (principal.subject, principal.role) == (subject, role)
    else:  # stored with every event its caller causes: no control characters, no NUL,
        # and something visible
        expect_failure(AuthFailure.INVALID, token)


def test_a_verified_token_is_answered_again_until_it_expires() -> None:
    verifier = TokenVerifier(SECRET, "HS256", leeway=timedelta(0))
    token = mint_token("ana", Role.PLAYER, key=SECRET, ttl=timedelta(seconds=2))
    assert verifier.verify(token) is verifier.verify(token)
    expired = mint_token("ana", Role.PLAYER, key=SECRET, now=datetime.now(UTC) - timedelta(hours=2))
    with pytest.raises(AuthError):
        verifier.verify(expired)


def test_a_cached_token_is_verified_again_once_it_has_expired() -> None:
    now = [time.time()]
    verifier = TokenVerifier(SECRET, "HS256", clock=lambda: now[0])
    token = mint_token("ana", Role.PLAYER, key=SECRET, ttl=timedelta(minutes=5))
    first = verifier.verify(token)
    now[0] += 299
    assert verifier.verify(token) is first, "answered from the cache until its exp"
    now[0] += 2  # past its exp by the verifier's clock: checked again, not trusted
    assert verifier.verify(token) is not first


def test_the_cache_answers_only_its_own_verifier() -> None:
    token = TokenMinter(SECRET, "HS256", key_id="k1").mint("ana", Role.PLAYER)
    rotating = TokenVerifier(NEW_SECRET, "HS256", key_id="k2", previous_keys={"k1": SECRET})
    assert rotating.verify(token).subject == "ana"  # cached by `rotating`
    with pytest.raises(AuthError):  # k1 dropped: a verifier of the new configuration
        TokenVerifier(NEW_SECRET, "HS256", key_id="k2").verify(token)
    assert rotating.verify(token).subject == "ana"


@pytest.mark.parametrize(
    ("algorithm", "key", "why"),
    [
        ("HS256", "too-short", "at least 32 bytes"),
        ("HS512", "x" * 40, None),
        ("RS256", "x" * 40, "not a usable RS256 key"),
        ("none", "x" * 40, "unsupported JWT algorithm"),
    ],
)
def test_keys_are_checked_when_a_verifier_is_built(
    algorithm: str, key: str, why: str | None
) -> None:
    if why is None:
        assert TokenVerifier(key, algorithm).algorithm == algorithm
    else:
        with pytest.raises(KeyConfigError, match=why):
            TokenVerifier(key, algorithm)


def test_a_public_key_cannot_mint(rsa_pems: tuple[str, str]) -> None:
    with pytest.raises(KeyConfigError, match="private key"):
        TokenMinter(rsa_pems[1], "RS256")


# --------------------------------------------------------------------------- roles, metadata


def test_require_accepts_allowed_roles_and_denies_others() -> None:
    player = Principal("p", Role.PLAYER)
    assert player.require(Role.PLAYER, Role.ADMIN) is player
    with pytest.raises(PermissionDenied) as caught:
        player.require(Role.ADMIN)
    assert caught.value.reason == "ROLE_NOT_ALLOWED"
    assert caught.value.metadata == {"role": "player", "allowedRoles": "admin"}
    assert set(caught.value.messages) == {"en", "ro", "it"}


def test_bearer_metadata_round_trips() -> None:
    assert bearer_token(bearer_metadata("abc.def.ghi")) == "abc.def.ghi"
    assert bearer_token((("authorization", "bearer  tok "),)) == "tok"


@pytest.mark.parametrize(
    ("metadata", "failure"),
    [
        ((), AuthFailure.MISSING),
        ((("x-other", "1"),), AuthFailure.MISSING),
        ((("authorization", "Basic abc"),), AuthFailure.INVALID),
        ((("authorization", "Bearer"),), AuthFailure.INVALID),
    ],
)
def test_bad_authorization_metadata(
    metadata: tuple[tuple[str, str], ...], failure: AuthFailure
) -> None:
    with pytest.raises(AuthError) as caught:
        bearer_token(metadata)
    assert caught.value.failure is failure


def test_the_current_principal_is_scoped() -> None:
    assert current_principal_or_none() is None
    alice = Principal("alice", Role.PLAYER)
    with principal_scope(alice):
        assert current_principal() is alice
    with pytest.raises(AuthError):
        current_principal()


# --------------------------------------------------------------------------- key rotation


def test_during_rotation_tokens_of_the_old_and_the_new_key_are_accepted() -> None:
    rotating = TokenVerifier(NEW_SECRET, "HS256", key_id="k2", previous_keys={"k1": SECRET})
    old = TokenMinter(SECRET, "HS256", key_id="k1").mint("ana", Role.PLAYER)
    new = TokenMinter(NEW_SECRET, "HS256", key_id="k2").mint("bo", Role.PLAYER)
    legacy = mint_token("cy", Role.PLAYER, key=SECRET)  # minted before key ids: no kid
    assert [rotating.verify(t).subject for t in (old, new, legacy)] == ["ana", "bo", "cy"]
    assert jwt.get_unverified_header(new)["kid"] == "k2"

    rotated = TokenVerifier(NEW_SECRET, "HS256", key_id="k2")
    for token in (old, legacy):
        with pytest.raises(AuthError) as caught:
            rotated.verify(token)
        assert caught.value.failure is AuthFailure.INVALID
    assert rotated.verify(new).subject == "bo"


def test_a_kid_names_the_one_key_a_token_is_checked_with() -> None:
    verifier = TokenVerifier(NEW_SECRET, "HS256", key_id="k2", previous_keys={"k1": SECRET})
    mislabelled = mint_token("ana", Role.PLAYER, key=SECRET, key_id="k2")
    unknown = mint_token("ana", Role.PLAYER, key=SECRET, key_id="k9")
    good = mint_token("ana", Role.PLAYER, key=SECRET)
    odd_header = jwt.utils.base64url_encode(b'{"alg":"HS256","typ":"JWT","kid":7}').decode()
    odd = ".".join([odd_header, *good.split(".")[1:]])  # PyJWT would not write such a kid
    for token in (mislabelled, unknown, odd):
        with pytest.raises(AuthError) as caught:
            verifier.verify(token)
        assert caught.value.failure is AuthFailure.INVALID


def test_an_expired_token_of_a_previous_key_is_expired() -> None:
    verifier = TokenVerifier(NEW_SECRET, "HS256", key_id="k2", previous_keys={"k1": SECRET})
    issued = datetime.now(UTC) - timedelta(hours=3)
    token = mint_token("p", Role.PLAYER, key=SECRET, key_id="k1", now=issued)
    with pytest.raises(AuthError) as caught:
        verifier.verify(token)
    assert caught.value.failure is AuthFailure.EXPIRED
