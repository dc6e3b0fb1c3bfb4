"""Bearer JWT identities: mint (dev tools, tests, services), verify (every server), roles.

A token names a subject (the player id, or a service name such as "bots") and one role.
Servers verify with a configured key and a configured algorithm — the algorithm is never
taken from the token header (no "alg: none" or HS/RS confusion). HS256 with a shared
secret is for development; production uses an asymmetric algorithm (RS256, ES256, EdDSA)
so that servers hold only the public key.

Keys rotate without downtime: a verifier holds the current key and any number of
previous ones, each under a key id (`kid`). A token names the key that signed it in its
header's `kid` and is checked with that key only; a token without `kid` (minted before
key ids were configured) is tried against every key. Rotation: verifiers first accept
the new key, then minters switch to it, and once every token signed with the old key
has expired (`KOZYR_JWT_TTL_SECONDS`), the old key is dropped (docs/operations.md).

The verified caller of the current gRPC call is available as `current_principal()`; the
server's auth interceptor sets it.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextvars import ContextVar, Token
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from enum import StrEnum
from typing import Any, Literal, get_args

import jwt
from jwt.exceptions import ExpiredSignatureError, InvalidKeyError, InvalidTokenError

from kozyr.runtime.errors import PermissionDenied, Unauthenticated
from kozyr.runtime.roles import Role as Role
from kozyr.texts import Texts

JwtAlgorithm = Literal["HS256", "HS384", "HS512", "RS256", "RS384", "RS512", "ES256", "EdDSA"]
JWT_ALGORITHMS: tuple[str, ...] = get_args(JwtAlgorithm)
ISSUER = "kozyr"
DEFAULT_TTL = timedelta(hours=1)
DEFAULT_LEEWAY = timedelta(seconds=30)
"""Clock skew tolerated between the token's minter and its verifier."""

MIN_HMAC_KEY_BYTES = 32
"""RFC 7518 §3.2: an HS256 key must be at least as long as the hash (256 bits)."""

AUTHORIZATION_KEY = "authorization"
"""gRPC metadata key carrying `Bearer <token>`."""


ALL_ROLES: frozenset[Role] = frozenset(Role)

BOTS_SUBJECT = "bots"
"""The `sub` of the bots service's service tokens. The table service recognises the bots
by it and holds them to the seats a computer plays (docs/api.md §2): a bot never sees a
person's hand, by construction rather than by the bots service's good manners."""


@dataclass(frozen=True, slots=True)
class Principal:
    """The verified caller: `subject` is the player id (or the service name) from `sub`."""

    subject: str
    role: Role
    expires_at: datetime | None = None

    @property
    def is_admin(self) -> bool:
        return self.role is Role.ADMIN

    @property
    def is_bots(self) -> bool:
        """The bots service: a service that may see and act only for computer seats."""
        return self.role is Role.SERVICE and self.subject == BOTS_SUBJECT

    def require(self, *roles: Role) -> Principal:
        """Self if the role is one of `roles`, else PermissionDenied (for handler checks)."""
        if self.role not in roles:
            raise role_not_allowed(self.role, roles)
        return self


# --------------------------------------------------------------------------- errors


class AuthFailure(StrEnum):
    """Why a call is unauthenticated; the value is the ErrorInfo reason."""

    MISSING = "TOKEN_MISSING"
    INVALID = "TOKEN_INVALID"
    EXPIRED = "TOKEN_EXPIRED"


_AUTH_TEXTS: Mapping[AuthFailure, Texts] = {
    AuthFailure.MISSING: Texts(
        en="Please sign in: this call needs an access token.",
        ro="Vă rugăm să vă autentificați: această operație necesită un token de acces.",
        it="Effettua l'accesso: questa chiamata richiede un token di accesso.",
    ),
    AuthFailure.INVALID: Texts(
        en="The access token is not valid.",
        ro="Tokenul de acces nu este valid.",
        it="Il token di accesso non è valido.",
    ),
    AuthFailure.EXPIRED: Texts(
        en="The access token has expired: please sign in again.",
        ro="Tokenul de acces a expirat: vă rugăm să vă autentificați din nou.",
        it="Il token di accesso è scaduto: effettua di nuovo l'accesso.",
    ),
}


class AuthError(Unauthenticated):
    """A token is missing, invalid or expired (UNAUTHENTICATED with reason TOKEN_*)."""

    def __init__(self, failure: AuthFailure) -> None:
        super().__init__(failure.value, _AUTH_TEXTS[failure])
        self.failure = failure


def role_not_allowed(role: Role, allowed: Iterable[Role]) -> PermissionDenied:
    """PermissionDenied(ROLE_NOT_ALLOWED) naming the caller's role and the allowed ones."""
    roles = ", ".join(sorted(r.value for r in allowed))  # role codes, as in metadata
    allowed_text = roles or "none"
    return PermissionDenied(
        "ROLE_NOT_ALLOWED",
        Texts(
            en=f"Your role ({role.value}) may not do this; allowed: {allowed_text}.",
            ro=f"Rolul dvs. ({role.value}) nu permite această operație; permise: "
            f"{roles or 'niciunul'}.",
            it=f"Il tuo ruolo ({role.value}) non può farlo; consentiti: {roles or 'nessuno'}.",
        ),
        metadata={"role": role.value, "allowedRoles": allowed_text},
    )


# --------------------------------------------------------------------------- keys


class KeyConfigError(ValueError):
    """A configured key does not fit its algorithm (reported at start-up, not per call)."""


def _is_hmac(algorithm: str) -> bool:
    return algorithm.startswith("HS")


def _normalise_key_text(key: str | bytes) -> bytes:
    """Key bytes; a PEM written on one line with literal "\\n" (env files) is unfolded."""
    raw = key.encode() if isinstance(key, str) else key
    if raw.lstrip().startswith(b"-----BEGIN") and b"\n" not in raw.strip():
        raw = raw.replace(b"\\n", b"\n")
    return raw


def _check_algorithm(algorithm: str) -> None:
    if algorithm not in JWT_ALGORITHMS:
        raise KeyConfigError(
            f"unsupported JWT algorithm {algorithm!r}: use one of {JWT_ALGORITHMS}"
        )


def load_verification_key(algorithm: str, key: str | bytes) -> Any:
    """The key object to verify tokens with; KeyConfigError if it cannot verify `algorithm`.

    HMAC: a secret of at least 32 bytes. Asymmetric: a PEM *public* key — a private key is
    refused so that servers that only verify never hold signing material by mistake.
    """
    _check_algorithm(algorithm)
    raw = _normalise_key_text(key)
    if _is_hmac(algorithm):
        return _hmac_key(algorithm, raw)
    prepared = _prepare(algorithm, raw)
    if not hasattr(prepared, "verify"):
        raise KeyConfigError(
            f"a {algorithm} verification key must be a PEM public key, not a private key"
        )
    return prepared


def load_signing_key(algorithm: str, key: str | bytes) -> Any:
    """The key object to mint tokens with: the HMAC secret, or a PEM private key."""
    _check_algorithm(algorithm)
    raw = _normalise_key_text(key)
    if _is_hmac(algorithm):
        return _hmac_key(algorithm, raw)
    prepared = _prepare(algorithm, raw)
    if not hasattr(prepared, "sign"):
        raise KeyConfigError(f"a {algorithm} signing key must be a PEM private key")
    return prepared


def _hmac_key(algorithm: str, raw: bytes) -> bytes:
    if len(raw) < MIN_HMAC_KEY_BYTES:
        raise KeyConfigError(
            f"an {algorithm} secret must be at least {MIN_HMAC_KEY_BYTES} bytes long "
            f"(got {len(raw)})"
        )
    _prepare(algorithm, raw)  # refuses PEM keys used as HMAC secrets
    return raw


def _prepare(algorithm: str, raw: bytes) -> Any:
    try:
        return jwt.get_algorithm_by_name(algorithm).prepare_key(raw)
    except (InvalidKeyError, ValueError, TypeError) as error:
        raise KeyConfigError(f"not a usable {algorithm} key: {error}") from None


# --------------------------------------------------------------------------- tokens


def mint_token(
    subject: str,
    role: Role,
    *,
    key: str | bytes,
    algorithm: str = "HS256",
    ttl: timedelta = DEFAULT_TTL,
    now: datetime | None = None,
    issuer: str = ISSUER,
    key_id: str | None = None,
) -> str:
    """A signed token for `subject` in `role`, valid for `ttl` from `now` (default: now);
    `key_id` goes into the header's `kid` (which key of the verifiers' to check it with)."""
    if not subject:
        raise ValueError("a token needs a subject")
    issued = now or datetime.now(UTC)
    claims = {
        "iss": issuer,
        "sub": subject,
        "role": Role(role).value,
        "iat": int(issued.timestamp()),
        "exp": int((issued + ttl).timestamp()),
    }
    headers = {"kid": key_id} if key_id else None
    return jwt.encode(
        claims, load_signing_key(algorithm, key), algorithm=algorithm, headers=headers
    )


def verify_token(
    token: str,
    *,
    key: str | bytes,
    algorithm: str = "HS256",
    issuer: str = ISSUER,
    leeway: timedelta = DEFAULT_LEEWAY,
) -> Principal:
    """The Principal of a valid token; AuthError(EXPIRED | INVALID) otherwise."""
    return TokenVerifier(key, algorithm, issuer=issuer, leeway=leeway).verify(token)


VERIFIED_CACHE_SIZE = 10_000
"""Verified tokens kept (the cache is emptied when full: bounded memory, simple)."""


class TokenVerifier:
    """Verifies tokens with pre-loaded keys (parsed once, at start-up): the current `key`
    (under `key_id`, if any) and, while keys rotate, `previous_keys` by key id. `clock`
    (POSIX seconds) tells when a cached token has expired."""

    def __init__(
        self,
        key: str | bytes,
        algorithm: str,
        *,
        issuer: str = ISSUER,
        leeway: timedelta = DEFAULT_LEEWAY,
        key_id: str | None = None,
        previous_keys: Mapping[str, str | bytes] | None = None,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self._keys: dict[str, Any] = {
            kid: load_verification_key(algorithm, k) for kid, k in (previous_keys or {}).items()
        }
        self._keys[key_id or ""] = load_verification_key(algorithm, key)
        self.algorithm = algorithm
        self._verified: dict[str, tuple[Principal, float]] = {}
        """token → (its Principal, its `exp` as a POSIX time)."""
        self._clock = clock
        self._issuer = issuer
        self._leeway = leeway

    def verify(self, token: str) -> Principal:
        """The token's Principal. A token verified before is answered from a small
        cache until it expires (clients send the same token with every call): its
        signature, claims and key were checked once, and none of them can change.

        The cache belongs to this verifier, whose keys are fixed: a key dropped from
        the configuration (rotation's last step) takes a new verifier, which has
        verified nothing yet and refuses that key's tokens at once.
        """
        known = self._verified.get(token)
        if known is not None and known[1] > self._clock():
            return known[0]
        principal = self._verify(token)
        if len(self._verified) >= VERIFIED_CACHE_SIZE:
            self._verified.clear()
        assert principal.expires_at is not None  # `exp` is a required claim
        self._verified[token] = (principal, principal.expires_at.timestamp())
        return principal

    def _verify(self, token: str) -> Principal:
        for key in self._candidates(token):
            try:
                claims = jwt.decode(
                    token,
                    key,
                    algorithms=[self.algorithm],
                    issuer=self._issuer,
                    leeway=self._leeway,
                    options={"require": ["exp", "iat", "iss", "sub"]},
                )
            except ExpiredSignatureError:
                raise AuthError(AuthFailure.EXPIRED) from None  # the signature held
            except InvalidTokenError:
                continue
            return _principal(claims)
        raise AuthError(AuthFailure.INVALID)

    def _candidates(self, token: str) -> list[Any]:
        """The keys to check `token` with: the one its `kid` names (none if unknown), or
        every key for a token without `kid`."""
        try:
            kid = jwt.get_unverified_header(token).get("kid")
        except InvalidTokenError:
            return []
        if kid is None:
            return list(self._keys.values())
        key = self._keys.get(kid) if isinstance(kid, str) else None
        return [] if key is None else [key]


def _printable(subject: str) -> bool:
    """A subject is stored with every event its caller causes: no control characters
    (PostgreSQL's JSON cannot even hold NUL), and at least one visible character (a
    player id of spaces only would be a name nobody can read or tell apart)."""
    return bool(subject.strip()) and subject.isprintable()


def _role(claim: Any) -> Role:
    """The role claim as a Role; AuthError(INVALID) for anything else — a list or an
    object included (they are unhashable: a set lookup would raise TypeError, INTERNAL)."""
    if not isinstance(claim, str) or claim not in ALL_ROLES:
        raise AuthError(AuthFailure.INVALID)
    return Role(claim)


def _principal(claims: Mapping[str, Any]) -> Principal:
    subject = claims.get("sub")
    if not isinstance(subject, str) or not _printable(subject):
        raise AuthError(AuthFailure.INVALID)
    role = _role(claims.get("role"))
    return Principal(
        subject=subject,
        role=role,
        expires_at=datetime.fromtimestamp(int(claims["exp"]), UTC),
    )


class TokenMinter:
    """Mints tokens with one pre-loaded signing key (dev login, service identities, tests)."""

    def __init__(
        self,
        key: str | bytes,
        algorithm: str,
        *,
        ttl: timedelta = DEFAULT_TTL,
        issuer: str = ISSUER,
        key_id: str | None = None,
    ) -> None:
        load_signing_key(algorithm, key)  # fail at construction, not at first mint
        self._key = key
        self.algorithm = algorithm
        self._ttl = ttl
        self._issuer = issuer
        self.key_id = key_id

    def mint(
        self, subject: str, role: Role, *, ttl: timedelta | None = None, now: datetime | None = None
    ) -> str:
        return mint_token(
            subject,
            role,
            key=self._key,
            algorithm=self.algorithm,
            ttl=ttl or self._ttl,
            now=now,
            issuer=self._issuer,
            key_id=self.key_id,
        )


# --------------------------------------------------------------------------- metadata


def bearer_metadata(token: str) -> tuple[tuple[str, str]]:
    """Call metadata that authenticates a client call: `metadata=bearer_metadata(token)`."""
    return ((AUTHORIZATION_KEY, f"Bearer {token}"),)


def bearer_token(metadata: Sequence[tuple[str, str | bytes]] | None) -> str:
    """The token from `authorization: Bearer <token>`; AuthError MISSING/INVALID otherwise."""
    values = [v for k, v in metadata or () if k == AUTHORIZATION_KEY]
    if not values:
        raise AuthError(AuthFailure.MISSING)
    value = values[0]
    scheme, _, token = (value.decode() if isinstance(value, bytes) else value).partition(" ")
    if scheme.lower() != "bearer" or not token.strip():
        raise AuthError(AuthFailure.INVALID)
    return token.strip()


# --------------------------------------------------------------------------- the caller

_CURRENT: ContextVar[Principal | None] = ContextVar("kozyr_principal", default=None)


def current_principal() -> Principal:
    """The verified caller of the current call; AuthError(MISSING) on a public method."""
    principal = _CURRENT.get()
    if principal is None:
        raise AuthError(AuthFailure.MISSING)
    return principal


def current_principal_or_none() -> Principal | None:
    return _CURRENT.get()


def enter_principal(principal: Principal | None) -> Token[Principal | None]:
    """Make `principal` the caller until `leave_principal(token)` (the edge's every call:
    `principal_scope` without a context manager's frames)."""
    return _CURRENT.set(principal)


def leave_principal(token: Token[Principal | None]) -> None:
    _CURRENT.reset(token)


@contextlib.contextmanager
def principal_scope(principal: Principal | None) -> Iterator[None]:
    """Run a block as `principal` (the auth interceptor uses it; so can in-process callers)."""
    token = _CURRENT.set(principal)
    try:
        yield
    finally:
        _CURRENT.reset(token)
