"""The health probe: `python -m kozyr.health` asks a service's gRPC health endpoint
whether it serves (exit 0) or not (exit 1); 2 when it cannot ask (unreadable TLS files).

Docker's HEALTHCHECK and compose run it inside the container every few seconds, for
every service, for as long as the stack runs: so it imports grpc and grpc_health and
nothing else of the project's dependencies — no settings, no SQLAlchemy, no Typer, no
play TUI (the whole CLI cost 1.5 CPU-s a probe and made loaded nodes mark healthy
services unhealthy). cryptography is loaded only when the service speaks TLS. `kozyr
health` is the same probe behind the command line; `make run` waits on it
(`kozyr.devstack`).

`--http` asks an HTTP server of kozyr's at its `/healthz` instead: the web edge
(kozyr.webedge, on KOZYR_WEBEDGE_PORT) or the web table page (kozyr.webtable, on
KOZYR_WEBTABLE_PORT), whichever port the container's environment names.

Without `--target` it asks 127.0.0.1 on KOZYR_GRPC_PORT, the port the service in the
same container listens on, which makes one command right for every service; outside a
container, in a checkout running `make run`, that stack's table service
(`kozyr.stackfile`). When the service serves TLS only (KOZYR_GRPC_TLS_CERT_FILE in the
container's environment) the probe speaks TLS to it too (`channel`).
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path

import grpc
from grpc_health.v1 import health_pb2, health_pb2_grpc

from kozyr import stackfile

DEFAULT_PORT = "50051"
DEFAULT_WEB_PORT = "8080"
"""The web edge's HTTP port when neither KOZYR_WEBEDGE_PORT nor KOZYR_WEBTABLE_PORT is
set (`--http`)."""
WEB_PORT_VARIABLES = ("KOZYR_WEBEDGE_PORT", "KOZYR_WEBTABLE_PORT")
"""The HTTP servers' port settings, in the order `--http` reads them: a container runs
one of them (the edge or the page server), so the first one set is its own."""
DEFAULT_TIMEOUT = 3.0
SERVING = "SERVING"
FAILED = 1
"""The exit code of a service that does not serve (or does not answer)."""
USAGE = 2
"""The exit code of a probe that could not ask (its TLS files cannot be read)."""


class ProbeError(Exception):
    """The probe's answer when it is not SERVING: one sentence and an exit code."""

    def __init__(self, message: str, code: int = FAILED) -> None:
        super().__init__(message)
        self.message = message
        self.code = code


def default_target(env: Mapping[str, str] = os.environ) -> str:
    """127.0.0.1 on the container's own service port (KOZYR_GRPC_PORT); outside a
    container, in a checkout running `make run`, its table service; else port 50051."""
    if env.get("KOZYR_GRPC_PORT"):
        return f"127.0.0.1:{env['KOZYR_GRPC_PORT']}"
    stack = stackfile.running(env=env)
    if stack is not None and "table" in stack.targets:
        return stack.targets["table"]
    return f"127.0.0.1:{DEFAULT_PORT}"


def certificate_name(pem: bytes) -> str:
    """The first name a server certificate is valid for (a DNS name, else an IP address,
    else its common name): the name the probe verifies while it dials 127.0.0.1.

    cryptography is imported here, not above: a plain service's probe never pays for it."""
    from cryptography import x509
    from cryptography.x509.oid import NameOID

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
        raise ProbeError("KOZYR_GRPC_TLS_CERT_FILE names no host", USAGE)
    return str(common[0].value)


def channel(target: str, env: Mapping[str, str] = os.environ) -> grpc.Channel:
    """Plain gRPC; or TLS when the container's service serves TLS (KOZYR_GRPC_TLS_CERT_FILE),
    trusting KOZYR_GRPC_TLS_CA_FILE — else the certificate itself (a self-signed one)."""
    cert_file = env.get("KOZYR_GRPC_TLS_CERT_FILE")
    if not cert_file:
        return grpc.insecure_channel(target)
    ca_file = env.get("KOZYR_GRPC_TLS_CA_FILE")
    try:
        cert = Path(cert_file).read_bytes()
        roots = Path(ca_file).read_bytes() if ca_file else cert
        name = certificate_name(cert)
    except (OSError, ValueError) as error:
        raise ProbeError(f"cannot read the TLS files: {error}", USAGE) from None
    credentials = grpc.ssl_channel_credentials(roots)
    return grpc.secure_channel(
        target, credentials, options=[("grpc.ssl_target_name_override", name)]
    )


def status(
    target: str,
    service: str = "",
    timeout: float = DEFAULT_TIMEOUT,
    env: Mapping[str, str] = os.environ,
) -> str:
    """The service's health status name (SERVING, NOT_SERVING, …); ProbeError when it
    does not answer within `timeout` seconds."""
    with channel(target, env) as opened:
        stub = health_pb2_grpc.HealthStub(opened)
        try:
            reply = stub.Check(health_pb2.HealthCheckRequest(service=service), timeout=timeout)
        except grpc.RpcError as err:
            what = f"service {service!r}" if service else "the server"
            code = err.code().name if isinstance(err, grpc.Call) else "UNKNOWN"
            details = err.details() if isinstance(err, grpc.Call) else str(err)
            raise ProbeError(f"{target}: {what} did not answer ({code}: {details})") from None
    return str(health_pb2.HealthCheckResponse.ServingStatus.Name(reply.status))


def check(target: str, service: str = "", timeout: float = DEFAULT_TIMEOUT) -> str:
    """SERVING, or ProbeError (exit 1) naming the status the service answered instead."""
    answered = status(target, service, timeout)
    if answered != SERVING:
        raise ProbeError(f"{target}: {answered}")
    return answered


def serving(target: str, timeout: float = 1.0) -> bool:
    """Whether the whole server at `target` answers SERVING (a quick question, over TLS
    when this process's environment says the services serve TLS)."""
    try:
        return status(target, timeout=timeout) == SERVING
    except ProbeError:
        return False


def web_check(
    target: str | None = None, timeout: float = DEFAULT_TIMEOUT, env: Mapping[str, str] = os.environ
) -> str:
    """The web servers' probe (`--http`): SERVING when `/healthz` answers 200, else
    ProbeError. The web edge and the page server speak HTTP, not gRPC; each listens on
    its own port setting (WEB_PORT_VARIABLES). urllib is imported here: the gRPC
    services' probe never loads it."""
    import urllib.error
    import urllib.request

    port = next((env[name] for name in WEB_PORT_VARIABLES if env.get(name)), DEFAULT_WEB_PORT)
    where = target or f"127.0.0.1:{port}"
    try:
        with urllib.request.urlopen(f"http://{where}/healthz", timeout=timeout) as answer:
            code = answer.status
    except urllib.error.HTTPError as error:
        code = error.code
    except OSError as error:
        raise ProbeError(f"{where}: the web edge did not answer ({error})") from None
    if code != 200:
        raise ProbeError(f"{where}: the web edge answered HTTP {code}")
    return SERVING


def web_serving(target: str, timeout: float = 1.0) -> bool:
    """Whether the web edge at `target` serves (a quick question)."""
    try:
        return web_check(target, timeout) == SERVING
    except ProbeError:
        return False


def _seconds(text: str) -> float:
    """--timeout: at least 0.1 s (a zero deadline would fail every probe)."""
    value = float(text)
    if value < 0.1:
        raise argparse.ArgumentTypeError(f"{text} is below 0.1 s")
    return value


def _arguments(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="python -m kozyr.health",
        description="Exit 0 if the service answers SERVING to a gRPC health check, else 1.",
    )
    parser.add_argument(
        "--target", help=f"host:port (default: 127.0.0.1:$KOZYR_GRPC_PORT, else {DEFAULT_PORT})"
    )
    parser.add_argument(
        "--service", default="", help="the gRPC service to ask about (default: all)"
    )
    parser.add_argument(
        "--http",
        action="store_true",
        help="ask the web edge's or the web page's /healthz over HTTP (default target: "
        "127.0.0.1:$KOZYR_WEBEDGE_PORT, else 127.0.0.1:$KOZYR_WEBTABLE_PORT, else "
        f"{DEFAULT_WEB_PORT})",
    )
    parser.add_argument(
        "--timeout", type=_seconds, default=DEFAULT_TIMEOUT, help="seconds to wait for the answer"
    )
    return parser.parse_args(argv)


def main(argv: Sequence[str] | None = None) -> int:
    """The probe as a process: SERVING on stdout and 0, else one line on stderr and 1 (2)."""
    args = _arguments(argv)
    try:
        if args.http:
            print(web_check(args.target, args.timeout))
        else:
            print(check(args.target or default_target(), args.service, args.timeout))
    except ProbeError as err:
        print(f"kozyr: {err.message}", file=sys.stderr)
        return err.code
    return 0


if __name__ == "__main__":
    sys.exit(main())
