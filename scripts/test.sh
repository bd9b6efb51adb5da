#!/usr/bin/env bash
# Install what the tests need (the project, test deps, kubectl v1.37) and run the whole suite.
set -euo pipefail
cd "$(dirname "$0")/.."
python3 -m venv .venv
.venv/bin/python -m pip install -q --disable-pip-version-check -e '.[test]'
# the web view's browser tests drive Debian's chromium (they skip, saying why, without it)
if [ ! -x /usr/bin/chromium ] && [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
  chromium=(env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends
            chromium chromium-driver)
  { "${chromium[@]}" || { apt-get update -qq && "${chromium[@]}"; }; } >/dev/null 2>&1 ||
    echo "scripts/test.sh: chromium could not be installed; the browser tests will skip" >&2
fi
KUBECTL="${KUBECTL:-$(.venv/bin/python scripts/install_kubectl.py)}"
export KUBECTL
.venv/bin/ruff check .
.venv/bin/mypy
# one worker per core: the suite is mostly servers and kubectl processes waiting on each other
.venv/bin/python -m pytest -n "${PYTEST_WORKERS:-auto}" "$@"
