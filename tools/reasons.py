"""Every ErrorInfo reason the services can answer with, read from the code itself.

Usage:

    .venv/bin/python tools/reasons.py     # the reasons as a Markdown table skeleton

docs/api.md §13 lists every reason once, with its status, the services that raise it,
the RPCs and the conditions; tests/unit/test_reason_catalogue.py compares that table
with what this module finds, both ways, so the list stays true: a reason raised in code
that the docs lack fails, and so does a documented reason the code never raises.

How reasons are found (by reading the source, not running it): every call of a
`KozyrError` class (or of a subclass defined in the scanned code, or of the games'
`MalformedAction`) whose reason is a string literal; a reason passed in as a parameter
(`_invalid(reason, …)`, `f"INVALID_{field.upper()}"`) is followed to the calls of its
function that give it as a literal; a class constant (`AuthFailure.MISSING`) is read
from its class. Reasons carried
over from elsewhere at run time — the games' rule refusals, re-raised with their own
reason, listed in the rules' own tables (docs/api.md §7) — are the `DYNAMIC` sites below;
any other call whose reason cannot be read fails the test until it is listed here.
"""

from __future__ import annotations

import ast
import re
import sys
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parent.parent

STATUS_OF_CLASS = {
    "KozyrError": "INTERNAL",
    "InvalidArgument": "INVALID_ARGUMENT",
    "NotFound": "NOT_FOUND",
    "AlreadyExists": "ALREADY_EXISTS",
    "FailedPrecondition": "FAILED_PRECONDITION",
    "Aborted": "ABORTED",
    "Conflict": "ABORTED",
    "PermissionDenied": "PERMISSION_DENIED",
    "Unauthenticated": "UNAUTHENTICATED",
    "ResourceExhausted": "RESOURCE_EXHAUSTED",
    "Unavailable": "UNAVAILABLE",
    "DeadlineExceeded": "DEADLINE_EXCEEDED",
    "Cancelled": "CANCELLED",
    "Unimplemented": "UNIMPLEMENTED",
    "InternalError": "INTERNAL",
    "MalformedAction": "INVALID_ARGUMENT",  # the table refuses it so (table/actions.py)
}
"""The gRPC status each error class answers with (kozyr.runtime.errors)."""

EVERY_SERVICE = "every"
SCANNED = {
    "services/kozyr": None,  # the folder below names the service
    "libs/kozyr/runtime": EVERY_SERVICE,  # the gRPC server every service runs
    "libs/kozyr/client": "callers",  # texts shared by the services calling the table
    "libs/kozyr/tablewire/refusals.py": "callers",  # table ids: the table service, the clock
    "libs/kozyr/games": "table",  # MalformedAction: SubmitAction's request checks
}
DYNAMIC = {
    ("services/kozyr/table/app.py", "error.reason"): "the games' rule reasons (§7)",
    ("services/kozyr/table/edge/actions.py", "err.reason"): "MalformedAction's own reasons",
}
"""Calls whose reason is not a literal on purpose: (file, expression) → where from."""

_REASON = re.compile(r"^[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)*$")


@dataclass
class Reason:
    """One reason: its status and where it is raised (service names)."""

    reason: str
    status: str
    services: set[str] = field(default_factory=set)
    english_only: bool = False
    """Raised somewhere with one English text (a developer error about the request's
    shape) rather than a text per language."""


@dataclass
class _Site:
    path: str
    service: str
    function: str | None
    params: list[str]
    call: ast.Call
    status: str


def _service_of(path: Path) -> str:
    relative = path.relative_to(REPO_ROOT).as_posix()
    for prefix, service in SCANNED.items():
        if relative == prefix or relative.startswith(prefix + "/"):
            return service or relative[len(prefix) + 1 :].split("/")[0]
    raise ValueError(relative)


def _files() -> Iterator[Path]:
    for prefix in SCANNED:
        scanned = REPO_ROOT / prefix
        for path in [scanned] if scanned.is_file() else sorted(scanned.rglob("*.py")):
            if "/api/" not in path.as_posix():
                yield path


def _name(node: ast.expr) -> str | None:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return node.attr
    return None


def _classes(trees: dict[Path, ast.Module]) -> dict[str, str]:
    """The error classes: the runtime's, and every subclass of one in the scanned code."""
    statuses = dict(STATUS_OF_CLASS)
    grew = True
    while grew:
        grew = False
        for tree in trees.values():
            for node in ast.walk(tree):
                if isinstance(node, ast.ClassDef) and node.name not in statuses:
                    for base in node.bases:
                        if (name := _name(base)) in statuses:
                            statuses[node.name] = statuses[name]
                            grew = True
    return statuses


def _sites(trees: dict[Path, ast.Module], classes: dict[str, str]) -> Iterator[_Site]:
    """Every construction of an error class, with the function it is in."""
    for path, tree in trees.items():
        service = _service_of(path)
        for scope, params in _functions(tree):
            name = getattr(scope, "name", None)
            for node in _own_calls(scope):
                if (cls := _name(node.func)) in classes and node.args:
                    status = classes[str(cls)]
                    yield _Site(path.as_posix(), service, name, params, node, status)


def _constants(trees: dict[Path, ast.Module]) -> dict[str, str]:
    """String constants: class-level ones as "Class.NAME" → value (AuthFailure.MISSING),
    module-level ones as "path:NAME" → value (outages.py's STORE_UNAVAILABLE)."""
    found = {}
    for path, tree in trees.items():
        for name, value in _string_assignments(tree.body):
            found[f"{path.as_posix()}:{name}"] = value
        for node in ast.walk(tree):
            if isinstance(node, ast.ClassDef):
                for name, value in _string_assignments(node.body):
                    found[f"{node.name}.{name}"] = value
    return found


def _string_assignments(body: list[ast.stmt]) -> Iterator[tuple[str, str]]:
    """`NAME = "text"` statements of one body."""
    for item in body:
        if (
            isinstance(item, ast.Assign)
            and len(item.targets) == 1
            and isinstance(item.targets[0], ast.Name)
            and isinstance(item.value, ast.Constant)
            and isinstance(item.value.value, str)
        ):
            yield item.targets[0].id, item.value.value


_CallIndex = dict[str, list[tuple[str, str | None, list[str], ast.Call]]]
"""Called name → (the caller's service, the caller's name, its parameters, the call)."""


def _call_index(trees: dict[Path, ast.Module]) -> _CallIndex:
    """Every call by the name it calls, with its caller's name and parameters."""
    index: _CallIndex = {}
    for path, tree in trees.items():
        service = _service_of(path)
        for scope, params in _functions(tree):
            caller = getattr(scope, "name", None)
            for node in _own_calls(scope):
                if (name := _name(node.func)) is not None:
                    index.setdefault(name, []).append((service, caller, params, node))
    return index


def _literal_calls(calls: _CallIndex, function: str, index: int, depth: int = 0) -> Iterator[str]:
    """The literal strings given to `function` as its `index`th positional argument —
    also through a function that passes one of its own parameters on (`_uuid(value,
    field)` → `texts.invalid_id(field)`)."""
    if depth > 3:
        return
    for _, caller, params, node in calls.get(function, ()):
        if len(node.args) <= index:
            continue
        given = node.args[index]
        if isinstance(given, ast.Constant) and isinstance(given.value, str):
            yield given.value
        elif isinstance(given, ast.Name) and given.id in params and caller is not None:
            yield from _literal_calls(calls, caller, params.index(given.id), depth + 1)


def _functions(tree: ast.Module) -> Iterator[tuple[ast.AST, list[str]]]:
    """The module itself and each function in it, with its positional parameters."""
    yield tree, []
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            yield node, [a.arg for a in node.args.args]


def _own_calls(scope: ast.AST) -> Iterator[ast.Call]:
    """The calls in a scope, not those of the functions nested in it."""
    stack = list(ast.iter_child_nodes(scope))
    while stack:
        node = stack.pop()
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda):
            continue
        if isinstance(node, ast.Call):
            yield node
        stack.extend(ast.iter_child_nodes(node))


def _callers(calls: _CallIndex, function: str, depth: int = 0) -> set[str]:
    """The services whose code calls `function` (for texts shared in libs/), also through
    a shared function that calls it (`refusals.table_id` raising `invalid_table_id()`)."""
    services = set()
    for service, caller, _, _ in calls.get(function, ()):
        if service == "callers":
            if caller and caller != function and depth < 3:
                services |= _callers(calls, caller, depth + 1)
        elif service != EVERY_SERVICE:  # a service, or the games (the table's)
            services.add(service)
    return services


def _reasons_of(site: _Site, calls: _CallIndex, constants: dict[str, str]) -> list[str] | None:
    """The reasons one construction can carry; None when they cannot be read."""
    first = site.call.args[0]
    if isinstance(first, ast.Constant) and isinstance(first.value, str):
        return [first.value]
    if isinstance(first, ast.Attribute) and ast.unparse(first) in constants:
        return [constants[ast.unparse(first)]]
    if isinstance(first, ast.Name) and first.id in site.params and site.function:
        index = site.params.index(first.id)
        return list(_literal_calls(calls, site.function, index)) or None
    if isinstance(first, ast.Name) and f"{site.path}:{first.id}" in constants:
        return [constants[f"{site.path}:{first.id}"]]
    if isinstance(first, ast.JoinedStr) and site.function:
        # f"INVALID_{field.upper()}": the literal fields its callers give
        parts = first.values
        prefix = parts[0].value if isinstance(parts[0], ast.Constant) else None
        if len(parts) == 2 and isinstance(prefix, str) and isinstance(parts[1], ast.FormattedValue):
            inner = parts[1].value
            if (
                isinstance(inner, ast.Call)
                and isinstance(inner.func, ast.Attribute)
                and inner.func.attr == "upper"
                and isinstance(inner.func.value, ast.Name)
                and inner.func.value.id in site.params
            ):
                index = site.params.index(inner.func.value.id)
                given = _literal_calls(calls, site.function, index)
                return [prefix + value.upper() for value in given] or None
    return None


def _english_only(call: ast.Call) -> bool:
    """A message given as one string (a literal, an f-string, `str(err)`), not a mapping
    of languages nor a helper's texts."""
    if len(call.args) < 2:
        return False
    message = call.args[1]
    if isinstance(message, ast.Constant | ast.JoinedStr):
        return True
    return isinstance(message, ast.Call) and _name(message.func) == "str"


def _path_key(site: _Site) -> tuple[str, str]:
    return (Path(site.path).relative_to(REPO_ROOT).as_posix(), ast.unparse(site.call.args[0]))


def collect() -> tuple[dict[str, Reason], list[str]]:
    """Every reason found (by name), and the calls whose reason could not be read (and
    are not in `DYNAMIC`), as "file: expression"."""
    trees = {p: ast.parse(p.read_text(encoding="utf-8"), str(p)) for p in _files()}
    classes = _classes(trees)
    constants = _constants(trees)
    calls = _call_index(trees)
    found: dict[str, Reason] = {}
    unread: list[str] = []
    dynamic_seen = set()
    for site in _sites(trees, classes):
        reasons = _reasons_of(site, calls, constants)
        if reasons is None:
            key = _path_key(site)
            if key not in DYNAMIC:
                unread.append(f"{key[0]}: {key[1]}")
            dynamic_seen.add(key)
            continue
        services = {site.service}
        if site.service == "callers" and site.function:
            services = _callers(calls, site.function)
        for reason in reasons:
            if not _REASON.match(reason):
                unread.append(f"{site.path}: {reason!r} is no reason")
                continue
            entry = found.setdefault(reason, Reason(reason, site.status))
            if entry.status != site.status:
                unread.append(f"{site.path}: {reason} is {site.status} here, {entry.status} else")
            entry.services |= services
            entry.english_only |= _english_only(site.call)
    unread += [f"{path}: {code} is in DYNAMIC, not in the code" for path, code in
               sorted(DYNAMIC.keys() - dynamic_seen)]  # fmt: skip
    return found, unread


def main() -> int:
    found, unread = collect()
    print("| reason | status | services | English only |")
    print("|---|---|---|---|")
    for reason in sorted(found):
        entry = found[reason]
        english = "*en*" if entry.english_only else ""
        print(
            f"| `{reason}` | `{entry.status}` | {', '.join(sorted(entry.services))} | {english} |"
        )
    for line in unread:
        print(f"unread: {line}", file=sys.stderr)
    return 1 if unread else 0


if __name__ == "__main__":
    sys.exit(main())
