"""tools/protogen.py: cross-package proto imports work, stubs type-check, reruns are clean."""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
import textwrap
from pathlib import Path
from types import ModuleType

import pytest

REPO = Path(__file__).resolve().parents[3]
PROTOGEN = REPO / "tools" / "protogen.py"

ALPHA = """
syntax = "proto3";
package kozyr.alpha.v1;
enum Shade {
  SHADE_UNSPECIFIED = 0;
  SHADE_RED = 1;
}
message Thing {
  string name = 1;
  Shade shade = 2;
}
"""

BETA = """
syntax = "proto3";
package kozyr.beta.v1;
import "google/protobuf/timestamp.proto";
import "kozyr/alpha/v1/alpha.proto";
message GetThingsRequest {
  kozyr.alpha.v1.Thing like = 1;
  google.protobuf.Timestamp since = 2;
}
message GetThingsResponse {
  repeated kozyr.alpha.v1.Thing things = 1;
}
service ThingService {
  rpc GetThings(GetThingsRequest) returns (GetThingsResponse);
}
"""


def load_protogen() -> ModuleType:
    spec = importlib.util.spec_from_file_location("protogen", PROTOGEN)
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules.setdefault("protogen", module)  # dataclasses look their module up
    spec.loader.exec_module(module)
    return module


def run_protogen(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, str(PROTOGEN), *args], capture_output=True, text=True, check=False
    )


class Sandbox:
    """Protos and generated code in a temp dir, generated under the package `kzgen`."""

    def __init__(self, root: Path) -> None:
        self.protos = root / "protos"
        self.site = root / "site"
        self.out = self.site / "kzgen"

    def write_proto(self, relative: str, text: str) -> None:
        path = self.protos / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text))

    def generate(self, *extra: str) -> subprocess.CompletedProcess[str]:
        return run_protogen(
            "--proto-root",
            str(self.protos),
            "--out",
            str(self.out),
            "--target-package",
            "kzgen",
            *extra,
        )

    def python(self, code: str) -> str:
        env = {**os.environ, "PYTHONPATH": str(self.site)}
        result = subprocess.run(
            [sys.executable, "-c", textwrap.dedent(code)],
            capture_output=True,
            text=True,
            env=env,
            check=False,
        )
        assert result.returncode == 0, result.stderr
        return result.stdout

    def files(self) -> set[str]:
        return {str(p.relative_to(self.out)) for p in self.out.rglob("*") if p.is_file()}


@pytest.fixture
def sandbox(tmp_path: Path) -> Sandbox:
    box = Sandbox(tmp_path)
    box.write_proto("kozyr/alpha/v1/alpha.proto", ALPHA)
    box.write_proto("kozyr/beta/v1/beta.proto", BETA)
    result = box.generate()
    assert result.returncode == 0, result.stderr
    return box


def test_generated_packages_import_each_other(sandbox: Sandbox) -> None:
    output = sandbox.python(
        """
        from datetime import datetime, timezone
        from kzgen.alpha.v1 import alpha_pb2
        from kzgen.beta.v1 import beta_pb2, beta_pb2_grpc

        thing = alpha_pb2.Thing(name="x", shade=alpha_pb2.SHADE_RED)
        request = beta_pb2.GetThingsRequest(like=thing)
        request.since.FromDatetime(datetime(2030, 1, 1, tzinfo=timezone.utc))
        again = beta_pb2.GetThingsRequest.FromString(request.SerializeToString())
        assert again == request and again.like.shade == alpha_pb2.SHADE_RED
        assert type(again.like) is alpha_pb2.Thing
        print(type(request).__module__)
        print(beta_pb2.DESCRIPTOR.name, beta_pb2.DESCRIPTOR.package)
        print(beta_pb2_grpc.ThingServiceStub.__module__)
        """
    )
    assert output.split() == [
        "kzgen.beta.v1.beta_pb2",
        "kozyr/beta/v1/beta.proto",
        "kozyr.beta.v1",
        "kzgen.beta.v1.beta_pb2_grpc",
    ]


def test_generated_stubs_type_check(sandbox: Sandbox, tmp_path: Path) -> None:
    snippet = tmp_path / "use_stubs.py"
    snippet.write_text(
        textwrap.dedent(
            """
            from kzgen.alpha.v1 import alpha_pb2
            from kzgen.beta.v1 import beta_pb2, beta_pb2_grpc

            request = beta_pb2.GetThingsRequest(like=alpha_pb2.Thing(name="x"))
            reveal_type(request.like)
            reveal_type(beta_pb2_grpc.ThingServiceStub)
            wrong: int = request.like.name
            """
        )
    )
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "mypy",
            "--strict",
            "--no-incremental",
            "--ignore-missing-imports",
            "--config-file=/dev/null",
            str(snippet),
        ],
        capture_output=True,
        text=True,
        env={**os.environ, "MYPYPATH": str(sandbox.site)},
        cwd=tmp_path,
        check=False,
    )
    assert 'Revealed type is "kzgen.alpha.v1.alpha_pb2.Thing"' in result.stdout, result.stdout
    assert "ThingServiceStub" in result.stdout
    # Only the snippet's errors count: the project excludes generated stubs from checking.
    errors = [line for line in result.stdout.splitlines() if line.startswith("use_stubs.py")]
    errors = [line for line in errors if ": error:" in line]
    assert len(errors) == 1, result.stdout
    assert 'expression has type "str", variable has type "int"' in errors[0]


def test_a_second_run_changes_nothing(sandbox: Sandbox) -> None:
    before = {p: p.stat().st_mtime_ns for p in sandbox.out.rglob("*_pb2*")}
    result = sandbox.generate()
    assert result.stdout.strip() == "protogen: up to date"
    assert {p: p.stat().st_mtime_ns for p in sandbox.out.rglob("*_pb2*")} == before
    assert sandbox.generate("--check").returncode == 0


def test_check_reports_stale_code_without_writing(sandbox: Sandbox) -> None:
    sandbox.write_proto(
        "kozyr/alpha/v1/alpha.proto", ALPHA.replace("string name = 1;", "string title = 1;")
    )
    before = (sandbox.out / "alpha/v1/alpha_pb2.py").read_text()
    assert sandbox.generate("--check").returncode == 1
    assert (sandbox.out / "alpha/v1/alpha_pb2.py").read_text() == before


def test_a_removed_proto_loses_its_generated_files(sandbox: Sandbox) -> None:
    (sandbox.protos / "kozyr/beta/v1/beta.proto").unlink()
    sandbox.python("import kzgen.alpha.v1.alpha_pb2")  # leaves __pycache__ behind
    assert sandbox.generate().returncode == 0
    assert sandbox.files() == {
        "alpha/v1/alpha_pb2.py",
        "alpha/v1/alpha_pb2.pyi",
        "alpha/v1/alpha_pb2_grpc.py",
        "alpha/v1/alpha_pb2_grpc.pyi",
    } | {str(p.relative_to(sandbox.out)) for p in sandbox.out.rglob("__pycache__/*")}
    assert not (sandbox.out / "beta").exists()


def test_hand_written_files_in_the_output_tree_are_kept(sandbox: Sandbox) -> None:
    keep = sandbox.out / "__init__.py"
    keep.write_text('"""hand written"""\n')
    (sandbox.protos / "kozyr/beta/v1/beta.proto").unlink()
    assert sandbox.generate().returncode == 0
    assert keep.read_text() == '"""hand written"""\n'


def test_a_proto_outside_the_package_directory_is_refused(tmp_path: Path) -> None:
    box = Sandbox(tmp_path)
    box.write_proto("other/v1/x.proto", 'syntax = "proto3";\npackage other.v1;\n')
    result = box.generate()
    assert result.returncode == 2
    assert "protos must live under kozyr/" in result.stderr


def test_vendored_google_protos_are_not_generated(tmp_path: Path) -> None:
    box = Sandbox(tmp_path)
    box.write_proto("kozyr/x/v1/x.proto", 'syntax = "proto3";\npackage kozyr.x.v1;\n')
    vendored = REPO / "protos" / "google" / "rpc" / "status.proto"
    box.write_proto("google/rpc/status.proto", vendored.read_text())
    result = box.generate()
    assert result.returncode == 0, result.stderr
    assert box.files() == {
        "x/v1/x_pb2.py",
        "x/v1/x_pb2.pyi",
        "x/v1/x_pb2_grpc.py",
        "x/v1/x_pb2_grpc.pyi",
    }


def test_the_vendored_error_protos_are_those_python_uses() -> None:
    """protos/google/rpc is googleapis' own text, as googleapis-common-protos ships it
    (the messages the Python SDK decodes): re-vendor when that package moves."""
    from google.rpc import status_pb2  # type: ignore[import-untyped]

    shipped = Path(status_pb2.__file__).parent
    for name in ("status.proto", "error_details.proto"):
        assert (REPO / "protos/google/rpc" / name).read_text() == (shipped / name).read_text()


def test_the_vendored_health_proto_is_the_service_our_servers_serve(tmp_path: Path) -> None:
    """protos/grpc/health/v1/health.proto compiles to the very messages and methods of
    grpcio-health-checking, whose servicer every kozyr server runs: a client generated
    from it calls what is served (field numbers, types, streaming, package)."""
    from google.protobuf import descriptor_pb2
    from grpc_health.v1 import health_pb2

    out = tmp_path / "health.pb"
    result = subprocess.run(
        [sys.executable, "-m", "grpc_tools.protoc", f"--proto_path={REPO / 'protos'}",
         f"--descriptor_set_out={out}", "grpc/health/v1/health.proto"],
        capture_output=True, text=True, check=False,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    [vendored] = descriptor_pb2.FileDescriptorSet.FromString(out.read_bytes()).file
    served = descriptor_pb2.FileDescriptorProto()
    health_pb2.DESCRIPTOR.CopyToProto(served)
    for message in vendored.message_type:
        for field in message.field:
            field.ClearField("json_name")  # protoc's default, not in the Python descriptor
    assert vendored.package == served.package == "grpc.health.v1"
    assert list(vendored.message_type) == list(served.message_type)
    assert list(vendored.service) == list(served.service)


def test_the_vendored_health_proto_is_not_generated(tmp_path: Path) -> None:
    box = Sandbox(tmp_path)
    box.write_proto("kozyr/x/v1/x.proto", 'syntax = "proto3";\npackage kozyr.x.v1;\n')
    vendored = REPO / "protos" / "grpc" / "health" / "v1" / "health.proto"
    box.write_proto("grpc/health/v1/health.proto", vendored.read_text())
    result = box.generate()
    assert result.returncode == 0, result.stderr
    assert all(name.startswith("x/") for name in box.files())


def test_a_protoc_error_is_reported(tmp_path: Path) -> None:
    box = Sandbox(tmp_path)
    box.write_proto("kozyr/bad/v1/bad.proto", 'syntax = "proto3";\nmessage {')
    result = box.generate()
    assert result.returncode == 2
    assert "protoc failed" in result.stderr
    assert "bad.proto" in result.stderr


def test_the_rewrite_touches_module_references_only() -> None:
    rewrite = load_protogen().rewrite_module_references
    generated = textwrap.dedent(
        """\
        from kozyr.alpha.v1 import alpha_pb2 as kozyr_dot_alpha_dot_v1_dot_alpha__pb2
        import kozyr.alpha.v1.alpha_pb2
        DESCRIPTOR = _pool.AddSerializedFile(b'\\x12kozyr/beta/v1/x.proto\\x0ekozyr.beta.v1_pb2')
        _builder.BuildTopDescriptorsAndMessages(DESCRIPTOR, 'kozyr.beta.v1.beta_pb2', _globals)
        channel.unary_unary('/kozyr.beta.v1.ThingService/GetThings')
        x: kozyr.alpha.v1.alpha_pb2.Thing
        from google.protobuf import timestamp_pb2
        """
    )
    assert rewrite(generated, "kozyr", "kozyr.api").splitlines() == [
        "from kozyr.api.alpha.v1 import alpha_pb2 as kozyr_dot_alpha_dot_v1_dot_alpha__pb2",
        "import kozyr.api.alpha.v1.alpha_pb2",
        "DESCRIPTOR = _pool.AddSerializedFile(b'\\x12kozyr/beta/v1/x.proto\\x0ekozyr.beta.v1_pb2')",
        "_builder.BuildTopDescriptorsAndMessages(DESCRIPTOR, 'kozyr.api.beta.v1.beta_pb2',"
        " _globals)",
        "channel.unary_unary('/kozyr.beta.v1.ThingService/GetThings')",
        "x: kozyr.api.alpha.v1.alpha_pb2.Thing",
        "from google.protobuf import timestamp_pb2",
    ]


def test_the_project_protos_generate(tmp_path: Path) -> None:
    out = tmp_path / "api"
    result = run_protogen("--out", str(out))
    assert result.returncode == 0, result.stderr
    generated = {str(p.relative_to(out)) for p in out.rglob("*_pb2.py")}
    assert "common/v1/cards_pb2.py" in generated
    assert all(p.startswith("common/") or "/v" in p for p in generated)
