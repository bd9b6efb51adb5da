"""The layers of the tree keep their direction, both ways, and the module graph has no cycle.

Imports are counted wherever they are: at the top, inside functions, under TYPE_CHECKING.
Each production module belongs to one layer (its folder under `fakeapi`, or a component
package); a layer may import only itself and the layers it is allowed. So the core never
imports a component or the runtime, a component sees the core only through the client, the
runtime, machinery, the pure helpers and the kind table, and no layer imports one above it.
"""

from __future__ import annotations

import ast
from collections.abc import Iterable, Mapping
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = ("fakeapi", "controllers", "scheduler", "kubelet_emu")
COMPONENTS = ("controllers", "scheduler", "kubelet_emu")

CORE_BELOW_REGISTRY = ("machinery", "cel", "storage", "schema", "printers", "patching", "auth",
                       "kube")
ALLOWED: dict[str, tuple[str, ...]] = {
    # bottom to top; each layer may import the ones named here (and itself)
    "root": (),
    "machinery": ("root",),
    "cel": ("root", "machinery"),
    "storage": ("root", "machinery"),
    "schema": ("root", "machinery", "cel"),
    "printers": ("root", "machinery"),
    "patching": ("root", "machinery", "schema"),
    "auth": ("root", "machinery"),
    "kube": ("root", "machinery"),
    "registry": ("root", *CORE_BELOW_REGISTRY),
    "client": ("root", *CORE_BELOW_REGISTRY, "registry"),
    "remote_client": ("root", "machinery", "auth", "kube", "client", "kind table"),
    "cluster": ("root", *CORE_BELOW_REGISTRY, "registry", "client"),
    "http": ("root", *CORE_BELOW_REGISTRY, "registry", "cluster"),
    "runtime": ("root", "machinery", "kube", "client"),
    "component": ("root", "machinery", "cel", "kube", "client", "runtime", "kind table"),
    "catalog": ("root", "machinery", "runtime", "component"),
    "controlplane": ("root", *CORE_BELOW_REGISTRY, "registry", "client", "cluster", "runtime",
                     "component", "catalog"),
    "emulation": ("root", "machinery", "auth", "client", "remote_client", "runtime",
                  "component", "catalog", "kind table"),
    "replay": ("root", *CORE_BELOW_REGISTRY, "registry", "client", "cluster", "http",
               "runtime", "component", "catalog", "controlplane"),
    "testing": ("root", *CORE_BELOW_REGISTRY, "registry", "client", "remote_client", "cluster",
                "http", "runtime", "component", "catalog", "controlplane", "emulation",
                "replay"),
    "cli": ("root", *CORE_BELOW_REGISTRY, "registry", "client", "remote_client", "cluster",
            "http", "runtime", "component", "catalog", "controlplane", "emulation", "replay"),
}
"""What each layer may import. Components may import one module of the registry, the kind
table, for the resource names they use (`kind table`)."""
TOP = ("testing", "cli")
"""The layers at the top, side by side: each may import every layer below, not each other."""
KIND_TABLE = "fakeapi.registry.kinds"


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


def layer_of(module: str) -> str | None:
    """The layer a module belongs to (None: a module no layer claims)."""
    parts = module.split(".")
    if parts[0] in COMPONENTS:
        return "component"
    if parts[0] != "fakeapi":
        return None
    if len(parts) == 1:
        return "root"
    return parts[1] if parts[1] in ALLOWED else None


def violations(graph: Mapping[str, Iterable[str]]) -> list[str]:
    """Every import that crosses layers the wrong way, as `importer -> imported (why)`."""
    found = []
    for module, deps in sorted(graph.items()):
        layer = layer_of(module)
        if layer is None:
            found.append(f"{module}: in no layer")
            continue
        for dep in sorted(deps):
            target = layer_of(dep)
            if target is None or target == layer and layer != "component":
                continue
            if layer == "component" and target == "component":
                if dep.split(".")[0] != module.split(".")[0]:
                    found.append(f"{module} -> {dep} (a component package imports another)")
                continue
            allowed = ALLOWED[layer]
            if target in allowed or dep == KIND_TABLE and "kind table" in allowed:
                continue
            found.append(f"{module} -> {dep} ({layer} may not import {target})")
    return found


GRAPH = {name: imports(name, path, set(modules())) for name, path in modules().items()}


def test_every_layer_is_named_bottom_up() -> None:
    """A layer is allowed only layers named before it, so the order above is the stack."""
    names = list(ALLOWED)
    for i, layer in enumerate(names):
        assert set(ALLOWED[layer]) - {"kind table"} <= set(names[:i]), layer
    for top in TOP:  # the top may import every layer below it
        assert set(ALLOWED[top]) == set(names) - set(TOP), top


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


def test_imports_keep_the_layers() -> None:
    assert violations(GRAPH) == []


@pytest.mark.parametrize(("graph", "expected"), [
    pytest.param({"fakeapi.storage.log": {"scheduler.scheduler"}},
                 ["fakeapi.storage.log -> scheduler.scheduler (storage may not import component)"],
                 id="the core imports a component"),
    pytest.param({"fakeapi.registry.generic": {"fakeapi.runtime.informer"}},
                 ["fakeapi.registry.generic -> fakeapi.runtime.informer "
                  "(registry may not import runtime)"], id="the core imports the runtime"),
    pytest.param({"fakeapi.machinery.errors": {"fakeapi.storage.log"}},
                 ["fakeapi.machinery.errors -> fakeapi.storage.log "
                  "(machinery may not import storage)"], id="a layer imports one above it"),
    pytest.param({"fakeapi.runtime.component": {"fakeapi.http.app"}},
                 ["fakeapi.runtime.component -> fakeapi.http.app "
                  "(runtime may not import http)"], id="the runtime imports the HTTP server"),
    pytest.param({"controllers.job": {"fakeapi.auth.rbac", "fakeapi.registry.kinds",
                                      "fakeapi.client", "fakeapi.kube.taints"}},
                 ["controllers.job -> fakeapi.auth.rbac (component may not import auth)"],
                 id="a component imports RBAC (the kind table and client are fine)"),
    pytest.param({"controllers.job": {"fakeapi.registry.generic"}},
                 ["controllers.job -> fakeapi.registry.generic "
                  "(component may not import registry)"], id="a component imports the store"),
    pytest.param({"kubelet_emu.pods": {"scheduler.claims"}},
                 ["kubelet_emu.pods -> scheduler.claims (a component package imports another)"],
                 id="components import each other"),
    pytest.param({"fakeapi.testing.plugin": {"fakeapi.cli.serve"}},
                 ["fakeapi.testing.plugin -> fakeapi.cli.serve (testing may not import cli)"],
                 id="the pytest plugin imports the CLI beside it"),
    pytest.param({"fakeapi.stray": set()}, ["fakeapi.stray: in no layer"],
                 id="a module outside every layer"),
])
def test_a_deliberate_violation_is_caught(graph: dict[str, set[str]],
                                          expected: list[str]) -> None:
    assert violations(graph) == expected


def layer_heads() -> list[Path]:
    """The file that introduces each layer: a package's `__init__`, or the layer's module."""
    heads = []
    for layer in ALLOWED:
        folder = ROOT / "fakeapi"
        for candidate in (folder / layer / "__init__.py", folder / f"{layer}.py"):
            if candidate.exists():
                heads.append(candidate)
    return heads + [ROOT / pkg / "__init__.py" for pkg in COMPONENTS]


@pytest.mark.parametrize("head", layer_heads(), ids=lambda p: str(p.relative_to(ROOT)))
def test_each_layer_says_what_it_may_import(head: Path) -> None:
    doc = ast.get_docstring(ast.parse(head.read_text())) or ""
    assert "Imports" in doc, f"{head}: the docstring should say what the layer may import"
