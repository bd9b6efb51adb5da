"""The CEL engines behind the interface, the process-wide choice of one, and the compile cache.

An engine is a module with `NAME`, `compile_program(expression, purpose, features)` and
`evaluate(program, device)`. Engines load on first use, so a machine where cel-expr-python
doesn't install still runs on cel-python (`fakeapi serve --cel-engine cel-python`, or
`FAKEAPI_CEL_ENGINE=cel-python` for a server started by tests).
"""

from __future__ import annotations

import importlib
import os
import threading
from collections import OrderedDict
from types import ModuleType
from typing import Any

CEL_EXPR_PYTHON = "cel-expr-python"
CEL_PYTHON = "cel-python"
ENGINES = (CEL_EXPR_PYTHON, CEL_PYTHON)
"""Known engines, the default first."""
ENV_VAR = "FAKEAPI_CEL_ENGINE"

_MODULES = {CEL_EXPR_PYTHON: "fakeapi.cel.cpp_engine", CEL_PYTHON: "fakeapi.cel.celpy_engine"}
_loaded: dict[str, ModuleType] = {}
_chosen: str | None = None


class EngineUnavailable(ValueError):
    """The engine is unknown or its package isn't installed."""


def load(name: str) -> ModuleType:
    """The engine module `name` (imported on first use)."""
    module = _loaded.get(name)
    if module is not None:
        return module
    if name not in _MODULES:
        raise EngineUnavailable(f"unknown CEL engine {name!r} (known: {', '.join(ENGINES)})")
    try:
        module = importlib.import_module(_MODULES[name])
    except ImportError as e:
        raise EngineUnavailable(f"CEL engine {name!r} is not installed: {e}") from None
    _loaded[name] = module
    return module


def available() -> tuple[str, ...]:
    """The engines whose packages import here."""
    out = []
    for name in ENGINES:
        try:
            load(name)
        except EngineUnavailable:
            continue
        out.append(name)
    return tuple(out)


def choose(name: str | None) -> str:
    """Make `name` the process's engine (None: back to the default); its name."""
    global _chosen
    if name is not None:
        load(name)
    _chosen = name
    return current()


def current() -> str:
    """The engine in use: the chosen one, else `$FAKEAPI_CEL_ENGINE`, else the first that
    installs."""
    if _chosen is not None:
        return _chosen
    wanted = os.environ.get(ENV_VAR)
    if wanted:
        load(wanted)
        return wanted
    for name in ENGINES:  # the first that imports; the others stay unloaded
        try:
            load(name)
        except EngineUnavailable:
            continue
        return name
    raise EngineUnavailable("no CEL engine is installed (pip install cel-expr-python "
                            "or cel-python)")


class CompileCache:
    """A bounded LRU of compile results keyed by (expression, purpose, features, engine).

    Same idea as upstream's `cel.Cache`: compiling costs 0.2-4 ms, a hit costs a dict lookup.
    Errors are cached too (a rejected expression is rejected again, as cheaply).
    """

    def __init__(self, size: int = 4096) -> None:
        self.size = size
        self.hits = 0
        self.misses = 0
        self._entries: OrderedDict[tuple[Any, ...], Any] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, key: tuple[Any, ...]) -> Any:
        """The cached result, or None."""
        with self._lock:
            found = self._entries.get(key)
            if found is not None:
                self._entries.move_to_end(key)
                self.hits += 1
            return found

    def put(self, key: tuple[Any, ...], value: Any) -> None:
        """Remember a result, dropping the least recently used past the bound."""
        with self._lock:
            self.misses += 1
            self._entries[key] = value
            self._entries.move_to_end(key)
            while len(self._entries) > self.size:
                self._entries.popitem(last=False)

    def __len__(self) -> int:
        return len(self._entries)

    def clear(self) -> None:
        """Forget everything (and the counters)."""
        with self._lock:
            self._entries.clear()
            self.hits = self.misses = 0
