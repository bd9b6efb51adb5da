"""The tests stand on `tests.support`, never on each other.

No test module imports another test module or a conftest (imports are counted wherever they
are, under their dotted name or, as pytest's default import mode allows, their bare one);
outside `tests/support` the tests tree holds only test modules and conftest files, and a
conftest holds only fixtures and hooks. Shared code is a `tests.support` module named for what
it does.
"""

from __future__ import annotations

import ast
from collections.abc import Mapping
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
TESTS = ROOT / "tests"
SUPPORT = "tests.support"



def module_name(path: str) -> str:
    """`tests/a/b.py` -> `tests.a.b` (a package's `__init__.py` is the package)."""
    parts = list(Path(path).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def is_support(module: str) -> bool:
    """Whether a module is `tests.support` or one of its modules."""
    return module == SUPPORT or module.startswith(SUPPORT + ".")


def imported(path: str, tree: ast.Module) -> set[str]:
    """Every module name `path` imports, anywhere in the file (relative ones resolved;
    `from a import b` counts as `a` and `a.b`)."""
    package = module_name(path) if path.endswith("__init__.py") else \
        module_name(path).rpartition(".")[0]
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                up = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*up, base] if base else up)
            found.add(base)
            found.update(f"{base}.{a.name}" for a in node.names)
    return found


def _fixture_or_hook(node: ast.stmt) -> bool:
    """A conftest may define fixtures, pytest hooks, and import what they use."""
    if isinstance(node, (ast.Import, ast.ImportFrom)):
        return True
    if isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant):
        return True  # the docstring
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return node.name.startswith("pytest_") or any(
            "fixture" in ast.unparse(d) for d in node.decorator_list)
    return False


def violations(files: Mapping[str, str]) -> list[str]:
    """What breaks the rules in `files` (path relative to the repository -> source)."""
    tests = {module_name(p): p for p in files if not is_support(module_name(p))}
    bare = {name.rpartition(".")[2] for name in tests}
    found = []
    for path, source in sorted(files.items()):
        name = module_name(path)
        stem = name.rpartition(".")[2]
        if not is_support(name):
            if stem == "conftest":
                tree = ast.parse(source)
                found += [f"{path} defines {ast.unparse(node).splitlines()[0]!r}, not a fixture"
                          for node in tree.body if not _fixture_or_hook(node)]
            elif not stem.startswith("test_"):
                found.append(f"{path} is neither a test module nor a conftest: "
                             "shared code belongs in tests.support")
        for target in sorted(imported(path, ast.parse(source))):
            if target in tests and target != name:
                stem_of = target.rpartition(".")[2]
                kind = ("conftest" if stem_of == "conftest" else "test module"
                        if stem_of.startswith("test_") else "module among the tests")
                found.append(f"{path} imports the {kind} {target}")
            elif target in bare and "." not in target:
                found.append(f"{path} imports the test module {target} by its bare name")
    return found


def tree_files() -> dict[str, str]:
    """Every Python file of the tests tree, by its path from the repository root."""
    return {str(p.relative_to(ROOT)): p.read_text() for p in sorted(TESTS.rglob("*.py"))}


def test_no_test_module_imports_another_or_a_conftest() -> None:
    found = violations(tree_files())
    assert found == []


@pytest.mark.parametrize(("files", "expected"), [
    pytest.param({"tests/a/test_x.py": "from tests.a.test_y import helper",
                  "tests/a/test_y.py": ""},
                 ["tests/a/test_x.py imports the test module tests.a.test_y"],
                 id="a test module imports another"),
    pytest.param({"tests/a/test_x.py": "def f():\n    from tests.conftest import ROOT",
                  "tests/conftest.py": ""},
                 ["tests/a/test_x.py imports the conftest tests.conftest"],
                 id="a conftest, inside a function"),
    pytest.param({"tests/a/test_x.py": "import test_y", "tests/a/test_y.py": ""},
                 ["tests/a/test_x.py imports the test module test_y by its bare name"],
                 id="a bare name, as pytest's prepend mode allows"),
    pytest.param({"tests/a/test_x.py": "from . import test_y", "tests/a/test_y.py": ""},
                 ["tests/a/test_x.py imports the test module tests.a.test_y"],
                 id="a relative import"),
    pytest.param({"tests/support/waiting.py": "from tests.e2e.test_z import x",
                  "tests/e2e/test_z.py": ""},
                 ["tests/support/waiting.py imports the test module tests.e2e.test_z"],
                 id="support imports a test module"),
    pytest.param({"tests/a/harness.py": "", "tests/a/test_x.py": "from tests.a import harness"},
                 ["tests/a/harness.py is neither a test module nor a conftest: shared code "
                  "belongs in tests.support",
                  "tests/a/test_x.py imports the module among the tests tests.a.harness"],
                 id="a helper module among the tests"),
    pytest.param({"tests/a/conftest.py": "import pytest\nLIMIT = 3\n\n@pytest.fixture\n"
                                         "def f():\n    return LIMIT\n\ndef helper():\n    pass"},
                 ["tests/a/conftest.py defines 'LIMIT = 3', not a fixture",
                  "tests/a/conftest.py defines 'def helper():', not a fixture"],
                 id="a conftest with more than fixtures"),
    pytest.param({"tests/a/test_x.py": "from tests.support.waiting import poll\nimport pytest",
                  "tests/support/waiting.py": "from tests.support import paths"}, [],
                 id="support imports are fine"),
])
def test_a_deliberate_violation_is_caught(files: dict[str, str], expected: list[str]) -> None:
    assert violations(files) == expected
