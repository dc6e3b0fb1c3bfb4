"""Generate the Python API code (messages, gRPC stubs, typed stubs) from protos/.

Usage (what `make proto` runs):

    .venv/bin/python tools/protogen.py            # write libs/kozyr/api/...
    .venv/bin/python tools/protogen.py --check    # exit 1 if the generated code is stale

Layout. A proto at `protos/kozyr/<area>/v1/x.proto` (package `kozyr.<area>.v1`) becomes
`libs/kozyr/api/<area>/v1/x_pb2.py` (+ `x_pb2.pyi`, `x_pb2_grpc.py`, `x_pb2_grpc.pyi`) and is
imported as `from kozyr.api.<area>.v1 import x_pb2`.

Why a rewrite step: protoc names Python modules after proto paths, so generated code
imports its dependencies as `from kozyr.<area>.v1 import x_pb2`. Those modules would have to
live at `kozyr.<area>` — in the middle of our hand-written namespace. Instead we generate into
a scratch directory and rewrite exactly the Python *module references* (import lines and
`..._pb2` dotted names) from `kozyr.` to `kozyr.api.`. Proto names on the wire (packages,
`/kozyr.table.v1.TableService/Method` paths, the serialized descriptors) are untouched, so
the generated code stays byte-compatible with every other language's.

The generated directories are implicit namespace packages (no `__init__.py`): only the
`*_pb2*` files are generated, and all of them are git-ignored. The run is idempotent
(unchanged files are not rewritten) and deletes generated files whose proto is gone.
"""

from __future__ import annotations

import argparse
import importlib.util
import re
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parent.parent
GENERATED_SUFFIXES = ("_pb2.py", "_pb2.pyi", "_pb2_grpc.py", "_pb2_grpc.pyi")


class ProtogenError(RuntimeError):
    """Generation could not run (missing tool, protoc failure, misplaced proto)."""


@dataclass(frozen=True)
class Layout:
    """Where protos are read from and where, under which Python package, code is written.

    `source_package` is the first directory of every proto path ("kozyr"); its modules
    are re-rooted under `target_package` ("kozyr.api"), written to `out_dir`.
    """

    proto_root: Path
    out_dir: Path
    source_package: str = "kozyr"
    target_package: str = "kozyr.api"


VENDORED = ("google", "grpc")
"""Top folders of vendored protos, for clients in other languages: protos/google/rpc (the
error details) and protos/grpc/health/v1 (the health service). Not generated here:
Python has them from googleapis-common-protos and grpcio-health-checking."""


def find_protos(proto_root: Path, source_package: str) -> list[Path]:
    """Every .proto under the root but the vendored ones, as paths relative to it; all
    must sit in the package dir."""
    found = (p.relative_to(proto_root) for p in proto_root.rglob("*.proto"))
    protos = sorted(p for p in found if p.parts[0] not in VENDORED)
    misplaced = [p for p in protos if p.parts[0] != source_package]
    if misplaced:
        names = ", ".join(str(p) for p in misplaced)
        raise ProtogenError(f"protos must live under {source_package}/: {names}")
    return protos


def well_known_protos_dir() -> Path:
    """The google/protobuf/*.proto files bundled with grpcio-tools."""
    spec = importlib.util.find_spec("grpc_tools")
    if spec is None or not spec.submodule_search_locations:
        raise ProtogenError("grpcio-tools is not installed (pip install grpcio-tools)")
    return Path(next(iter(spec.submodule_search_locations))) / "_proto"


def plugin_path(name: str) -> Path:
    """A protoc plugin installed beside this interpreter (the venv), else on PATH."""
    beside = Path(sys.executable).parent / name
    if beside.exists():
        return beside
    found = shutil.which(name)
    if found is None:
        raise ProtogenError(f"{name} not found (pip install mypy-protobuf)")
    return Path(found)


def run_protoc(proto_root: Path, protos: Iterable[Path], scratch: Path) -> None:
    """Run grpc_tools.protoc once for all protos: messages, gRPC stubs and typed stubs."""
    command = [
        sys.executable,
        "-m",
        "grpc_tools.protoc",
        f"--proto_path={proto_root}",
        f"--proto_path={well_known_protos_dir()}",
        f"--plugin=protoc-gen-mypy={plugin_path('protoc-gen-mypy')}",
        f"--plugin=protoc-gen-mypy_grpc={plugin_path('protoc-gen-mypy_grpc')}",
        f"--python_out={scratch}",
        f"--grpc_python_out={scratch}",
        f"--mypy_out=quiet:{scratch}",
        f"--mypy_grpc_out=quiet:{scratch}",
        *(str(p) for p in protos),
    ]
    result = subprocess.run(command, cwd=proto_root, capture_output=True, text=True, check=False)
    if result.returncode != 0:
        raise ProtogenError(f"protoc failed:\n{result.stderr.strip()}")


def rewrite_module_references(text: str, source: str, target: str) -> str:
    """Re-root Python module references `source.` → `target.` in one generated file.

    Touches import lines and dotted names ending in `_pb2`/`_pb2_grpc` (module names,
    also inside quotes) — never the serialized descriptor line, never proto names.
    """
    module_reference = re.compile(
        rf"(?<![\w./]){re.escape(source)}\."
        r"(?=(?:\w+\.)*\w+_pb2(?:_grpc)?\b"  # a generated module: kozyr.x.v1.y_pb2
        r"|[\w.]+ import )"  # a package in `from kozyr.x.v1 import y_pb2`
    )
    return "".join(
        line if "AddSerializedFile(" in line else module_reference.sub(f"{target}.", line)
        for line in text.splitlines(keepends=True)
    )


def render(layout: Layout, protos: list[Path]) -> dict[Path, str]:
    """The complete generated file set: output path (relative to out_dir) → content."""
    with tempfile.TemporaryDirectory(prefix="protogen-") as tmp:
        scratch = Path(tmp)
        run_protoc(layout.proto_root, protos, scratch)
        package_dir = scratch / layout.source_package
        files: dict[Path, str] = {}
        for path in sorted(package_dir.rglob("*")):
            if path.is_file() and path.name.endswith(GENERATED_SUFFIXES):
                text = path.read_text(encoding="utf-8")
                files[path.relative_to(package_dir)] = rewrite_module_references(
                    text, layout.source_package, layout.target_package
                )
        return files


def existing_generated(out_dir: Path) -> set[Path]:
    """Generated files currently in the output tree (relative paths)."""
    if not out_dir.exists():
        return set()
    return {
        p.relative_to(out_dir)
        for p in out_dir.rglob("*")
        if p.is_file() and p.name.endswith(GENERATED_SUFFIXES) and "__pycache__" not in p.parts
    }


@dataclass(frozen=True)
class Plan:
    """What a run changes: files to write (new or different) and stale files to delete."""

    write: dict[Path, str]
    delete: set[Path]

    @property
    def is_empty(self) -> bool:
        return not self.write and not self.delete


def plan(out_dir: Path, files: dict[Path, str]) -> Plan:
    stale = existing_generated(out_dir) - files.keys()
    changed = {
        rel: text
        for rel, text in files.items()
        if not (out_dir / rel).exists() or (out_dir / rel).read_text(encoding="utf-8") != text
    }
    return Plan(write=changed, delete=stale)


def apply(out_dir: Path, work: Plan) -> None:
    for rel in sorted(work.delete):
        (out_dir / rel).unlink()
    for rel, text in work.write.items():
        target = out_dir / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text, encoding="utf-8")
    remove_empty_dirs(out_dir)


def remove_empty_dirs(out_dir: Path) -> None:
    """Drop directories left with nothing but bytecode caches (a deleted proto's package)."""
    for directory in sorted(out_dir.rglob("*"), key=lambda p: len(p.parts), reverse=True):
        if not directory.is_dir() or directory.name == "__pycache__":
            continue
        children = list(directory.iterdir())
        if all(c.is_dir() and c.name == "__pycache__" for c in children):
            for cache in children:
                shutil.rmtree(cache)
            directory.rmdir()


def generate(layout: Layout, *, check: bool = False) -> Plan:
    """Generate (or with `check`, only compare); returns what was (or would be) changed."""
    protos = find_protos(layout.proto_root, layout.source_package)
    files = render(layout, protos) if protos else {}
    work = plan(layout.out_dir, files)
    if not check:
        apply(layout.out_dir, work)
    return work


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--proto-root", type=Path, default=REPO_ROOT / "protos")
    parser.add_argument("--out", type=Path, default=REPO_ROOT / "libs" / "kozyr" / "api")
    parser.add_argument("--source-package", default="kozyr")
    parser.add_argument("--target-package", default="kozyr.api")
    parser.add_argument(
        "--check", action="store_true", help="write nothing; exit 1 if generated code is stale"
    )
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    layout = Layout(
        proto_root=args.proto_root.resolve(),
        out_dir=args.out.resolve(),
        source_package=args.source_package,
        target_package=args.target_package,
    )
    try:
        work = generate(layout, check=args.check)
    except ProtogenError as error:
        print(f"protogen: {error}", file=sys.stderr)
        return 2
    verb = "would change" if args.check else "changed"
    summary = f"{len(work.write)} written, {len(work.delete)} deleted"
    print(f"protogen: {verb}: {summary}" if not work.is_empty else "protogen: up to date")
    return 1 if args.check and not work.is_empty else 0


if __name__ == "__main__":
    sys.exit(main())
