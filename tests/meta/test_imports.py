"""The module graph has no cycles, counting imports inside functions and TYPE_CHECKING ones,
and the API-server core never imports a component package or the component runtime."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = ("fakeapi", "controllers", "scheduler", "kubelet_emu")
COMPONENT_SIDE = ("controllers", "scheduler", "kubelet_emu", "fakeapi.runtime",
                  "fakeapi.controlplane", "fakeapi.cli")
"""What the core must not import: the component packages, their runtime, and the top."""


def module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def modules() -> dict[str, Path]:
    return {module_name(p): p for pkg in PACKAGES for p in (ROOT / pkg).rglob("*.py")}


def imports(name: str, path: Path, known: set[str]) -> set[str]:
    """Every project module `name` imports, anywhere in the file (resolved to modules)."""
    found: set[str] = set()
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    for node in ast.walk(ast.parse(path.read_text())):
        targets: list[str] = []
        if isinstance(node, ast.Import):
            targets = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                up = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*up, base] if base else up)
            targets = [f"{base}.{a.name}" for a in node.names] + [base]
        for target in targets:
            while target and target not in known:
                target = target.rpartition(".")[0]
            if target and target != name:
                found.add(target)
    return found


def component_side(module: str) -> bool:
    return any(module == m or module.startswith(m + ".") for m in COMPONENT_SIDE)


GRAPH = {name: imports(name, path, set(modules())) for name, path in modules().items()}


def test_no_import_cycles() -> None:
    state: dict[str, int] = {}
    stack: list[str] = []
    cycles: list[list[str]] = []

    def visit(node: str) -> None:
        state[node] = 1
        stack.append(node)
        for dep in sorted(GRAPH.get(node, ())):
            if state.get(dep) == 1:
                cycles.append(stack[stack.index(dep):] + [dep])
            elif dep not in state:
                visit(dep)
        stack.pop()
        state[node] = 2

    for node in sorted(GRAPH):
        if node not in state:
            visit(node)
    assert cycles == []


@pytest.mark.parametrize("core", sorted(
    m for m in GRAPH if m.split(".")[0] == "fakeapi" and not component_side(m)))
def test_the_core_knows_nothing_of_components(core: str) -> None:
    assert not [m for m in GRAPH[core] if component_side(m)]
