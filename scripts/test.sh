#!/usr/bin/env bash
# Install what the tests need (the project, test deps, kubectl v1.37) and run the whole suite.
set -euo pipefail
cd "$(dirname "$0")/.."
python3 -m venv .venv
.venv/bin/python -m pip install -q --disable-pip-version-check -e '.[test]'
KUBECTL="${KUBECTL:-$(.venv/bin/python scripts/install_kubectl.py)}"
export KUBECTL
.venv/bin/ruff check .
.venv/bin/mypy
.venv/bin/python -m pytest "$@"
