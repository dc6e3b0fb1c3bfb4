"""The runtime kit every kozyr service is built on: settings, logging, auth, errors, gRPC.

from kozyr.runtime import load_settings, configure_logging_for, GrpcServer, ServiceSpec
from kozyr.runtime.errors import FailedPrecondition, NotFound
from kozyr.runtime.auth import Role, current_principal
"""

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
from kozyr.runtime.logging import configure_logging, configure_logging_for, get_logger, log_context
from kozyr.runtime.server import GrpcServer, ServiceSpec, serve, service_full_name
from kozyr.runtime.settings import Settings, SettingsError, load_settings

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
