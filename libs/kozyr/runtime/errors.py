"""Typed domain errors and their one mapping to gRPC statuses (AIP-193 `ErrorInfo`).

Handlers raise a `KozyrError` subclass; the server's error interceptor turns it into a
status with a `google.rpc.Status` in the trailers carrying an `ErrorInfo` (stable `reason`,
domain "kozyr.io", metadata) and one `LocalizedMessage` per language, the caller's
language first. Clients match on `reason`, never on text: `error_details(rpc_error)`
reads it back, `from_rpc_error(rpc_error)` rebuilds the typed error (the SDK uses it).

The status code is chosen by the *class*, never by inspecting messages, so a rule
violation can only ever surface as FAILED_PRECONDITION, a stale version as ABORTED, etc.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, ClassVar

import grpc
from google.protobuf import any_pb2
from google.rpc import error_details_pb2, status_pb2  # type: ignore[import-untyped]
from grpc_status import rpc_status

from kozyr.texts import DEFAULT_LANGUAGE, LANGUAGES, Texts, parse_lang

ERROR_DOMAIN = "kozyr.io"
"""The `ErrorInfo.domain` of every error this platform produces."""


_REASON = re.compile(r"^[A-Z][A-Z0-9_]{0,61}[A-Z0-9]$")
_STATUS_DETAILS_KEY = "grpc-status-details-bin"


class KozyrError(Exception):
    """Base of every error that may cross the API edge.

    `reason` is a stable UPPER_SNAKE_CASE code clients match on (AIP-193). `message` is
    either one English text or a text per language: a `kozyr.texts.Texts` (every text
    this platform writes), or a mapping read back from the wire (`from_rpc_error`), where
    English is required. A rule error's texts pass through unchanged.
    `metadata` is machine-readable context (string → string), e.g. {"currentVersion": "12"}.
    """

    code: ClassVar[grpc.StatusCode] = grpc.StatusCode.INTERNAL
    retry_pushback_ms: ClassVar[int | None] = None
    """Sent as `grpc-retry-pushback-ms` (gRFC A6) when set: a negative value tells a
    client's automatic retry policy not to repeat the call."""

    def __init__(
        self,
        reason: str,
        message: str | Mapping[Any, str],
        /,
        *,
        metadata: Mapping[str, str] | None = None,
    ) -> None:
        if not _REASON.match(reason):
            raise ValueError(f"error reason must be UPPER_SNAKE_CASE (AIP-193): {reason!r}")
        texts = {DEFAULT_LANGUAGE: message} if isinstance(message, str) else dict(message)
        if DEFAULT_LANGUAGE not in texts:
            raise ValueError(f"error {reason} has no English message")
        self.reason = reason
        self.messages: Mapping[str, str] = MappingProxyType({str(k): v for k, v in texts.items()})
        self.metadata: Mapping[str, str] = MappingProxyType(dict(metadata or {}))
        super().__init__(f"{reason}: {self.message}")

    @property
    def message(self) -> str:
        """The English (developer-facing) text."""
        return self.messages[DEFAULT_LANGUAGE]

    def message_in(self, language: str) -> str:
        """The text in `language` (a tag like "ro" or "it-IT"), English when missing."""
        return self.messages.get(parse_lang(language), self.message)


class InvalidArgument(KozyrError):
    """The request itself is malformed (bad field, unknown card text), whatever the state."""

    code = grpc.StatusCode.INVALID_ARGUMENT


class NotFound(KozyrError):
    """The addressed thing (table, ticket, player) does not exist."""

    code = grpc.StatusCode.NOT_FOUND


class AlreadyExists(KozyrError):
    """Creating something whose id is taken."""

    code = grpc.StatusCode.ALREADY_EXISTS


class FailedPrecondition(KozyrError):
    """The request is well-formed but not allowed in the current state (an illegal move)."""

    code = grpc.StatusCode.FAILED_PRECONDITION


class Aborted(KozyrError):
    """A concurrency conflict (stale `expected_version`): re-read and retry."""

    code = grpc.StatusCode.ABORTED


Conflict = Aborted
"""Alias: an optimistic-concurrency conflict is reported as ABORTED."""


class PermissionDenied(KozyrError):
    """The caller is known but may not do this (wrong role, someone else's seat)."""

    code = grpc.StatusCode.PERMISSION_DENIED


class Unauthenticated(KozyrError):
    """The caller is not known: no token, a bad one, or an expired one."""

    code = grpc.StatusCode.UNAUTHENTICATED


class ResourceExhausted(KozyrError):
    """A quota or limit is reached (too many tables, rate limit).

    A quota is the caller's to respect, so clients' automatic retries leave it alone
    (the SDK's retry policy covers RESOURCE_EXHAUSTED for a busy server, which
    `kozyr.runtime.limits.ServerBusy` allows).
    """

    code = grpc.StatusCode.RESOURCE_EXHAUSTED
    retry_pushback_ms: ClassVar[int | None] = -1


class Unavailable(KozyrError):
    """A dependency (database, NATS) is unreachable right now: retry later."""

    code = grpc.StatusCode.UNAVAILABLE


class DeadlineExceeded(KozyrError):
    """The call ran out of time (mostly seen client-side, set by the caller's deadline)."""

    code = grpc.StatusCode.DEADLINE_EXCEEDED


class Cancelled(KozyrError):
    """The call was cancelled (client-side: by the caller; server-side: by shutdown)."""

    code = grpc.StatusCode.CANCELLED


class Unimplemented(KozyrError):
    """The server does not offer this method (an older server version)."""

    code = grpc.StatusCode.UNIMPLEMENTED


class InternalError(KozyrError):
    """A bug. Raised by the edge for unexpected exceptions; it never carries their text."""

    code = grpc.StatusCode.INTERNAL


INTERNAL_ERROR_MESSAGES = Texts(
    en="Internal error. Please try again later.",
    ro="Eroare internă. Vă rugăm să încercați din nou mai târziu.",
    it="Errore interno. Riprova più tardi.",
)


def internal_error() -> InternalError:
    """The error shown for an unexpected exception: no detail of it ever leaks."""
    return InternalError("INTERNAL", INTERNAL_ERROR_MESSAGES)


_CLASS_BY_CODE: Mapping[grpc.StatusCode, type[KozyrError]] = MappingProxyType(
    {
        cls.code: cls
        for cls in (
            InvalidArgument,
            NotFound,
            AlreadyExists,
            FailedPrecondition,
            Aborted,
            PermissionDenied,
            Unauthenticated,
            ResourceExhausted,
            Unavailable,
            DeadlineExceeded,
            Cancelled,
            Unimplemented,
            InternalError,
        )
    }
)


# --------------------------------------------------------------------------- server side


def _packed(message: Any) -> any_pb2.Any:
    packed = any_pb2.Any()
    packed.Pack(message)
    return packed


def _languages_first(language: str) -> list[str]:
    return [language, *(lang for lang in LANGUAGES if lang != language)]


def to_rich_status(error: KozyrError, *, language: str = DEFAULT_LANGUAGE) -> status_pb2.Status:
    """The `google.rpc.Status` of an error: ErrorInfo, then LocalizedMessages, `language` first."""
    info = error_details_pb2.ErrorInfo(
        reason=error.reason, domain=ERROR_DOMAIN, metadata=dict(error.metadata)
    )
    localized = [
        error_details_pb2.LocalizedMessage(locale=lang, message=error.messages[lang])
        for lang in _languages_first(parse_lang(language))
        if lang in error.messages
    ]
    return status_pb2.Status(
        code=error.code.value[0],
        message=error.message,
        details=[_packed(info), *(_packed(m) for m in localized)],
    )


RETRY_PUSHBACK_KEY = "grpc-retry-pushback-ms"


def to_status(error: KozyrError, *, language: str = DEFAULT_LANGUAGE) -> grpc.Status:
    """The `grpc.Status` (code, details, trailing metadata) to abort a call with."""
    status = rpc_status.to_status(to_rich_status(error, language=language))
    if error.retry_pushback_ms is None:
        return status
    pushback = ((RETRY_PUSHBACK_KEY, str(error.retry_pushback_ms)),)
    return status._replace(trailing_metadata=(*status.trailing_metadata, *pushback))


# --------------------------------------------------------------------------- client side


@dataclass(frozen=True)
class ErrorDetails:
    """What a client learns from a failed call: the code and the AIP-193 details, if any."""

    code: grpc.StatusCode
    message: str
    reason: str | None = None
    domain: str | None = None
    metadata: Mapping[str, str] = field(default_factory=dict)
    messages: Mapping[str, str] = field(default_factory=dict)
    """Localised texts by language, in the order the server sent them (caller's first)."""


def _rich_status(trailing_metadata: Iterable[tuple[str, str | bytes]] | None) -> status_pb2.Status:
    for key, value in trailing_metadata or ():
        if key == _STATUS_DETAILS_KEY and isinstance(value, bytes):
            return status_pb2.Status.FromString(value)
    return status_pb2.Status()


def error_details(error: grpc.RpcError) -> ErrorDetails:
    """Read the status and ErrorInfo/LocalizedMessage details of a failed call.

    Works for `grpc.aio.AioRpcError` and for the sync stubs' `grpc.RpcError` (a `grpc.Call`).
    """
    rich = _rich_status(error.trailing_metadata())
    info: error_details_pb2.ErrorInfo | None = None
    messages: dict[str, str] = {}
    for detail in rich.details:
        if detail.Is(error_details_pb2.ErrorInfo.DESCRIPTOR):
            info = error_details_pb2.ErrorInfo()
            detail.Unpack(info)
        elif detail.Is(error_details_pb2.LocalizedMessage.DESCRIPTOR):
            localized = error_details_pb2.LocalizedMessage()
            detail.Unpack(localized)
            messages[localized.locale] = localized.message
    return ErrorDetails(
        code=error.code(),
        message=error.details() or "",
        reason=info.reason if info else None,
        domain=info.domain if info else None,
        metadata=dict(info.metadata) if info else {},
        messages=messages,
    )


def error_reason(error: grpc.RpcError) -> str | None:
    """The ErrorInfo reason of a failed call (None when the server sent none)."""
    return error_details(error).reason


def from_rpc_error(error: grpc.RpcError) -> KozyrError:
    """Rebuild the typed error a server raised, from its status (SDKs re-raise this).

    A status without ErrorInfo (e.g. a proxy's UNAVAILABLE) gets the code's name as reason.
    """
    details = error_details(error)
    cls = _CLASS_BY_CODE.get(details.code, InternalError)
    reason = details.reason or details.code.name
    texts = dict(details.messages)
    texts.setdefault(DEFAULT_LANGUAGE, details.message or reason)
    return cls(reason, texts, metadata=details.metadata)
