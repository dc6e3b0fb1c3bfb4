"""`kozyr health`: ask a service's gRPC health endpoint whether it serves.

The container image's HEALTHCHECK and compose's health checks run it inside the
container, so it must need nothing but the image: no grpc_health_probe binary, no
shell. Without `--target` it asks 127.0.0.1 on KOZYR_GRPC_PORT, the port the service
in the same container listens on, which makes one command right for every service.
When that service serves TLS only (KOZYR_GRPC_TLS_CERT_FILE in the container's
environment), the check speaks TLS to it too (`_channel`).
"""

from __future__ import annotations

import asyncio
import os
from pathlib import Path

import grpc
from cryptography import x509
from cryptography.x509.oid import NameOID
from grpc_health.v1 import health_pb2, health_pb2_grpc

from kozyr import stackfile
from kozyr.cli.problems import CliError, ExitCode

DEFAULT_PORT = "50051"


def default_target() -> str:
    """127.0.0.1 on the container's own service port (KOZYR_GRPC_PORT); outside a
    container, in a checkout running `make run`, its table service; else port 50051."""
    if os.environ.get("KOZYR_GRPC_PORT"):
        return f"127.0.0.1:{os.environ['KOZYR_GRPC_PORT']}"
    stack = stackfile.running()
    if stack is not None and "table" in stack.targets:
        return stack.targets["table"]
    return f"127.0.0.1:{DEFAULT_PORT}"


def certificate_name(pem: bytes) -> str:
    """The first name a server certificate is valid for (a DNS name, else an IP address,
    else its common name): the name the check verifies while it dials 127.0.0.1."""
    certificate = x509.load_pem_x509_certificate(pem)
    try:
        names = certificate.extensions.get_extension_for_class(x509.SubjectAlternativeName)
    except x509.ExtensionNotFound:
        names = None
    if names is not None:
        for kind in (x509.DNSName, x509.IPAddress):
            found = names.value.get_values_for_type(kind)
            if found:
                return str(found[0])
    common = certificate.subject.get_attributes_for_oid(NameOID.COMMON_NAME)
    if not common:
        raise CliError("KOZYR_GRPC_TLS_CERT_FILE names no host", ExitCode.USAGE)
    return str(common[0].value)


def _channel(target: str) -> grpc.aio.Channel:
    """Plain gRPC; or TLS when the container's service serves TLS (KOZYR_GRPC_TLS_CERT_FILE),
    trusting KOZYR_GRPC_TLS_CA_FILE — else the certificate itself (a self-signed one)."""
    cert_file = os.environ.get("KOZYR_GRPC_TLS_CERT_FILE")
    if not cert_file:
        return grpc.aio.insecure_channel(target)
    ca_file = os.environ.get("KOZYR_GRPC_TLS_CA_FILE")
    try:
        cert = Path(cert_file).read_bytes()
        roots = Path(ca_file).read_bytes() if ca_file else cert
        name = certificate_name(cert)
    except (OSError, ValueError) as error:
        raise CliError(f"cannot read the TLS files: {error}", ExitCode.USAGE) from None
    credentials = grpc.ssl_channel_credentials(roots)
    return grpc.aio.secure_channel(
        target, credentials, options=[("grpc.ssl_target_name_override", name)]
    )


async def _status(target: str, service: str, seconds: float) -> str:
    async with _channel(target) as channel:
        stub = health_pb2_grpc.HealthStub(channel)
        try:
            reply = await stub.Check(
                health_pb2.HealthCheckRequest(service=service), timeout=seconds
            )
        except grpc.aio.AioRpcError as err:
            what = f"service {service!r}" if service else "the server"
            raise CliError(
                f"{target}: {what} did not answer ({err.code().name}: {err.details()})",
                ExitCode.FAILED,
            ) from None
    return str(health_pb2.HealthCheckResponse.ServingStatus.Name(reply.status))


def check(target: str, service: str = "", timeout: float = 3.0) -> str:
    """The status name; raises CliError (exit 1) unless it is SERVING."""
    status = asyncio.run(_status(target, service, timeout))
    if status != "SERVING":
        raise CliError(f"{target}: {status}", ExitCode.FAILED)
    return status
