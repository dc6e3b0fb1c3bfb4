"""The runtime kit every kozyr service is built on: settings, logging, auth, errors, gRPC.

from kozyr.runtime import load_settings, configure_logging_for, GrpcServer, ServiceSpec
from kozyr.runtime.errors import FailedPrecondition, NotFound
from kozyr.runtime.auth import Role, current_principal

The names below are loaded when first used (PEP 562 `__getattr__`), not when the
package is: every `kozyr.runtime.<module>` import runs this file first, and a light
command (`kozyr token`, `kozyr --help`) that needs one enum must not pay for the
server, logging and settings stacks (SQLAlchemy, structlog, OpenTelemetry).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from kozyr.runtime.auth import (
        AuthError,
        AuthFailure,
        Principal,
        Role,
        TokenMinter,
        TokenVerifier,
        bearer_metadata,
        current_principal,
        mint_token,
        verify_token,
    )
    from kozyr.runtime.errors import (
        Aborted,
        AlreadyExists,
        ErrorDetails,
        FailedPrecondition,
        InvalidArgument,
        KozyrError,
        NotFound,
        PermissionDenied,
        Unauthenticated,
        Unavailable,
        error_details,
        error_reason,
        from_rpc_error,
    )
    from kozyr.runtime.interceptors import AuthPolicy, call_metadata, current_request_id
    from kozyr.runtime.logging import (
        configure_logging,
        configure_logging_for,
        get_logger,
        log_context,
    )
    from kozyr.runtime.server import GrpcServer, ServiceSpec, serve, service_full_name
    from kozyr.runtime.settings import Settings, SettingsError, load_settings

_HOMES = {
    "Aborted": "kozyr.runtime.errors",
    "AlreadyExists": "kozyr.runtime.errors",
    "AuthError": "kozyr.runtime.auth",
    "AuthFailure": "kozyr.runtime.auth",
    "AuthPolicy": "kozyr.runtime.interceptors",
    "ErrorDetails": "kozyr.runtime.errors",
    "FailedPrecondition": "kozyr.runtime.errors",
    "GrpcServer": "kozyr.runtime.server",
    "InvalidArgument": "kozyr.runtime.errors",
    "KozyrError": "kozyr.runtime.errors",
    "NotFound": "kozyr.runtime.errors",
    "PermissionDenied": "kozyr.runtime.errors",
    "Principal": "kozyr.runtime.auth",
    "Role": "kozyr.runtime.auth",
    "ServiceSpec": "kozyr.runtime.server",
    "Settings": "kozyr.runtime.settings",
    "SettingsError": "kozyr.runtime.settings",
    "TokenMinter": "kozyr.runtime.auth",
    "TokenVerifier": "kozyr.runtime.auth",
    "Unauthenticated": "kozyr.runtime.errors",
    "Unavailable": "kozyr.runtime.errors",
    "bearer_metadata": "kozyr.runtime.auth",
    "call_metadata": "kozyr.runtime.interceptors",
    "configure_logging": "kozyr.runtime.logging",
    "configure_logging_for": "kozyr.runtime.logging",
    "current_principal": "kozyr.runtime.auth",
    "current_request_id": "kozyr.runtime.interceptors",
    "error_details": "kozyr.runtime.errors",
    "error_reason": "kozyr.runtime.errors",
    "from_rpc_error": "kozyr.runtime.errors",
    "get_logger": "kozyr.runtime.logging",
    "load_settings": "kozyr.runtime.settings",
    "log_context": "kozyr.runtime.logging",
    "mint_token": "kozyr.runtime.auth",
    "serve": "kozyr.runtime.server",
    "service_full_name": "kozyr.runtime.server",
    "verify_token": "kozyr.runtime.auth",
}
"""Where each name of `__all__` lives."""


def __getattr__(name: str) -> object:
    """Import a name's module on first use and keep the name here."""
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(home), name)
    globals()[name] = value
    return value


__all__ = [
    "Aborted",
    "AlreadyExists",
    "AuthError",
    "AuthFailure",
    "AuthPolicy",
    "ErrorDetails",
    "FailedPrecondition",
    "GrpcServer",
    "InvalidArgument",
    "KozyrError",
    "NotFound",
    "PermissionDenied",
    "Principal",
    "Role",
    "ServiceSpec",
    "Settings",
    "SettingsError",
    "TokenMinter",
    "TokenVerifier",
    "Unauthenticated",
    "Unavailable",
    "bearer_metadata",
    "call_metadata",
    "configure_logging",
    "configure_logging_for",
    "current_principal",
    "current_request_id",
    "error_details",
    "error_reason",
    "from_rpc_error",
    "get_logger",
    "load_settings",
    "log_context",
    "mint_token",
    "serve",
    "service_full_name",
    "verify_token",
]
