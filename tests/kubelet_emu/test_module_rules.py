"""The node emulator's modules keep the project's house rules: no module over 800 lines,
each with a docstring, a docstring on every public class and function, keyword-only
constructors past two parameters, and class names no other production class has (the
generated models included; the gRPC modules grpcio-tools generates are left out)."""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = ("fakeapi", "scheduler", "controllers", "kubelet_emu")
GENERATED = ("_pb2.py", "_pb2_grpc.py")
"""What grpcio-tools generates (kubelet_emu/pluginapi): not ours to shape."""
MODULES = sorted(p for p in (ROOT / "kubelet_emu").rglob("*.py") if not p.name.endswith(GENERATED))
POSITIONAL = {("podresources.py", "Field")}
"""Left as they are: the protobuf schema's field tuples (another change unifies them)."""
SHARED_FIELD = ["fakeapi/protobuf.py", "kubelet_emu/podresources.py"]


def rel(path: Path) -> str:
    return str(path.relative_to(ROOT))


def tree(path: Path) -> ast.Module:
    return ast.parse(path.read_text())


def classes(path: Path) -> Iterator[ast.ClassDef]:
    return (n for n in ast.walk(tree(path)) if isinstance(n, ast.ClassDef))


@pytest.mark.parametrize("path", MODULES, ids=rel)
def test_a_module_is_short_and_says_what_it_is_for(path: Path) -> None:
    assert len(path.read_text().splitlines()) <= 800
    assert ast.get_docstring(tree(path))


@pytest.mark.parametrize("path", MODULES, ids=rel)
def test_public_classes_and_functions_have_docstrings(path: Path) -> None:
    def missing(body: list[ast.stmt], prefix: str) -> Iterator[str]:
        for node in body:
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef) and \
                    not node.name.startswith("_"):
                if not ast.get_docstring(node):
                    yield prefix + node.name
                if isinstance(node, ast.ClassDef):
                    yield from missing(node.body, f"{prefix}{node.name}.")
    assert list(missing(tree(path).body, "")) == []


def positional_parameters(node: ast.ClassDef) -> int:
    """How many parameters the class's constructor takes by position."""
    init = next((b for b in node.body if isinstance(b, ast.FunctionDef)
                 and b.name == "__init__"), None)
    if init is not None:
        return len(init.args.posonlyargs) + len(init.args.args) - 1
    decorators = [ast.unparse(d) for d in node.decorator_list]
    fields = [b for b in node.body if isinstance(b, ast.AnnAssign)]
    if any(d.startswith("dataclasses.dataclass") for d in decorators):
        return 0 if any("kw_only=True" in d for d in decorators) else len(fields)
    if "NamedTuple" in [ast.unparse(b) for b in node.bases]:
        return len(fields)
    return 0


@pytest.mark.parametrize("path", MODULES, ids=rel)
def test_constructors_past_two_parameters_are_keyword_only(path: Path) -> None:
    assert [c.name for c in classes(path) if positional_parameters(c) > 2
            and (path.name, c.name) not in POSITIONAL] == []


def test_no_production_class_shares_a_name_with_the_emulators() -> None:
    others: dict[str, list[str]] = {}
    for package in PACKAGES:  # fakeapi/models, the generated models, included
        for path in (ROOT / package).rglob("*.py"):
            if path.name.endswith(GENERATED):
                continue
            for c in classes(path):
                others.setdefault(c.name, []).append(rel(path))
    shared = {name: paths for name, paths in others.items() if len(paths) > 1
              and any(p.startswith("kubelet_emu/") for p in paths)
              and not (name == "Field" and sorted(paths) == SHARED_FIELD)}
    assert shared == {}
